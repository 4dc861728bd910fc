// The grouped problem visitor of seed 000 (CUTLASS grouped kernel schedulers).
//
// A persistent grid of `grid` CTAs walks all tiles of all groups round-robin: CTA `b` takes
// linear tiles b, b + grid, b + 2·grid, ... The visitor maps a linear tile index to
// (group, tile within group). Groups are visited in the order given; sorting by K (descending)
// is a host-side packing decision (group_order.h).
//
// The tile count of a group is a policy so that the same visitor serves grouped GEMM (all tiles
// of an M×N grid) and grouped Rank2K (only the triangle's tiles, rank2k_visitor.h).
#pragma once
#include "common.h"

namespace torch_grouped::sched {

// Problem sizes as the visitor sees them: one (m, n) per group, in visiting order.
struct GroupSizes {
  const int64_t* m;
  const int64_t* n;
  int32_t count;
};

// GEMM tiles: the full ceil(m/tm) × ceil(n/tn) grid. With `panel` = 0 they are rasterised
// row-major (n fastest). With `panel` = P > 0 the grid is cut into column panels P tiles wide and
// each panel is walked row-major: a wave of W CTAs then covers about W/P tile rows × P tile
// columns, so the A rows and B columns it streams stay in L2 instead of re-reading all of B for
// every tile row (n fastest) or all of A for every tile column (m fastest).
//
// Its divisions are 32-bit (ceil_div32): a group's rows and columns are below 2^31 (the kernels
// address them with 32-bit coordinates) and its tiles below 2^32 (2^46 output elements).
struct GemmTiles {
  TileShape tile;
  int32_t panel = 0;
  TG_HOST_DEVICE int64_t tiles_n(int64_t n) const { return ceil_div32(n, tile.n); }
  TG_HOST_DEVICE int64_t count(int64_t m, int64_t n) const {
    return int64_t(ceil_div32(m, tile.m)) * ceil_div32(n, tile.n);
  }
  TG_HOST_DEVICE TileCoord coord(int32_t group, int64_t m, int64_t n, int64_t local) const {
    const uint32_t tn = ceil_div32(n, tile.n), index = static_cast<uint32_t>(local);
    if (panel <= 0 || static_cast<uint32_t>(panel) >= tn) {
      const uint32_t row = index / tn;
      return TileCoord{group, static_cast<int32_t>(row), static_cast<int32_t>(index - row * tn), true};
    }
    const uint32_t width_max = static_cast<uint32_t>(panel), panel_tiles = ceil_div32(m, tile.m) * width_max;
    const uint32_t p = index / panel_tiles, within = index - p * panel_tiles;
    const uint32_t width = width_max < tn - p * width_max ? width_max : tn - p * width_max;  // the last panel may be narrower
    const uint32_t row = within / width;
    return TileCoord{group, static_cast<int32_t>(row), static_cast<int32_t>(p * width_max + within - row * width), true};
  }
};

// Clusters of `cluster_m` CTAs along M (the kernels' B multicast): the visitor deals pair tiles of
// cluster_m·tile.m rows to the clusters, as it deals tiles to CTAs, and CTA `rank` of a cluster
// takes tile row pair.tile_m·cluster_m + rank of the group's grid of tile.m-row tiles. A rank
// whose row lies past the group's last (an odd count of tile rows) still runs: its CTA loads its
// share of B for the others, and stores nothing.
TG_HOST_DEVICE TileCoord cluster_member_tile(TileCoord pair, int32_t cluster_m, int32_t rank) {
  pair.tile_m = pair.tile_m * cluster_m + rank;
  return pair;
}

// Sequential ("device-only") visitor: a CTA keeps the group it last visited and the first linear
// tile of that group, and only walks forward, because its tile indices only grow. This is the
// reference that the warp-parallel search of the device kernels must agree with.
template <class Tiles>
struct GroupedVisitor {
  GroupSizes sizes;
  Tiles tiles;
  int32_t group = 0;            // group that holds or follows the last tile visited
  int64_t group_first_tile = 0; // linear index of that group's first tile

  TG_HOST_DEVICE GroupedVisitor(GroupSizes s, Tiles t) : sizes(s), tiles(t) {}

  // Maps linear tile `index` (which must not decrease between calls) to its group and local tile.
  // Returns false when `index` is past the last tile of the last group.
  TG_HOST_DEVICE bool find(int64_t index, TileCoord& out) {
    while (group < sizes.count) {
      const int64_t count = tiles.count(sizes.m[group], sizes.n[group]);
      if (index < group_first_tile + count) {
        out = tiles.coord(group, sizes.m[group], sizes.n[group], index - group_first_tile);
        return true;
      }
      group_first_tile += count;
      ++group;
    }
    return false;
  }
};

template <class Tiles>
TG_HOST_DEVICE int64_t total_tiles(GroupSizes sizes, Tiles tiles) {
  int64_t total = 0;
  for (int32_t g = 0; g < sizes.count; ++g) total += tiles.count(sizes.m[g], sizes.n[g]);
  return total;
}

// Host-precomputed schedule (seed 000, kHostPrecompute): for each CTA, the (group, first tile of
// the group) of every tile it visits, in visiting order. Entry `j` of CTA `b` describes linear tile
// b + j·grid. `entries_for_cta` gives the count; `fill_cta_schedule` writes them. The device then
// only does `local = b + j·grid − first_tile` and the rasterisation.
struct PrecomputedEntry {
  int32_t group;
  int32_t group_first_tile;
};

TG_HOST_DEVICE int64_t entries_for_cta(int64_t total, int64_t grid, int64_t cta) {
  return cta < total ? ceil_div(total - cta, grid) : 0;
}

template <class Tiles>
inline void fill_cta_schedule(GroupSizes sizes, Tiles tiles, int64_t grid, int64_t cta,
                              PrecomputedEntry* out) {
  GroupedVisitor<Tiles> visitor(sizes, tiles);
  TileCoord coord;
  int64_t j = 0;
  for (int64_t index = cta; visitor.find(index, coord); index += grid, ++j) {
    out[j] = PrecomputedEntry{visitor.group, static_cast<int32_t>(visitor.group_first_tile)};
  }
}

// Every CTA's list at once, in one pass over the tiles (filling CTA by CTA walks the groups once
// per CTA: grid x groups steps, which for 264 CTAs and 128 groups costs the host 0.3 ms). CTA b's
// list is out[b·stride ...]; the slots after its last tile get group -1.
template <class Tiles>
inline void fill_all_cta_schedules(GroupSizes sizes, Tiles tiles, int64_t grid, int64_t stride,
                                   PrecomputedEntry* out) {
  for (int64_t i = 0; i < grid * stride; ++i) out[i] = PrecomputedEntry{-1, 0};
  int64_t first = 0;
  for (int32_t g = 0; g < sizes.count; ++g) {
    const int64_t count = tiles.count(sizes.m[g], sizes.n[g]);
    for (int64_t index = first; index < first + count; ++index) {
      out[(index % grid) * stride + index / grid] = PrecomputedEntry{g, static_cast<int32_t>(first)};
    }
    first += count;
  }
}

template <class Tiles>
TG_HOST_DEVICE TileCoord decode_precomputed(GroupSizes sizes, Tiles tiles, PrecomputedEntry e,
                                            int64_t index) {
  return tiles.coord(e.group, sizes.m[e.group], sizes.n[e.group], index - e.group_first_tile);
}

}  // namespace torch_grouped::sched
