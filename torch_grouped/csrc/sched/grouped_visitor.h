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
struct GemmTiles {
  TileShape tile;
  int32_t panel = 0;
  TG_HOST_DEVICE int64_t tiles_n(int64_t n) const { return ceil_div(n, tile.n); }
  TG_HOST_DEVICE int64_t count(int64_t m, int64_t n) const {
    return ceil_div(m, tile.m) * ceil_div(n, tile.n);
  }
  TG_HOST_DEVICE TileCoord coord(int32_t group, int64_t m, int64_t n, int64_t local) const {
    const int64_t tn = tiles_n(n);
    if (panel <= 0 || panel >= tn) {
      return TileCoord{group, static_cast<int32_t>(local / tn), static_cast<int32_t>(local % tn), true};
    }
    const int64_t panel_tiles = ceil_div(m, tile.m) * panel;
    const int64_t p = local / panel_tiles, within = local % panel_tiles;
    const int64_t width = min64(panel, tn - p * panel);  // the last panel may be narrower
    return TileCoord{group, static_cast<int32_t>(within / width),
                     static_cast<int32_t>(p * panel + within % width), true};
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
