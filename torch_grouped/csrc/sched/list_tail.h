// The partial last round of a list's persistent walk, handed to the Stream-K kernel (the Stream-K
// paper's hybrid: whole waves data-parallel, the remainder spread over every SM in K-slices).
//
// gemm's walkers deal the tiles round-robin (grouped_visitor.h), so when the tile count is a few
// tiles past a multiple of the walkers, those few run as one more round on a few walkers while
// the rest wait: 8 x 4096³ in 256 x 256 pair tiles is 2048 tiles on 66 clusters, 31 rounds and
// 2 tiles, each round ~45-50 µs (H200). Carving the last r tiles (r = tiles mod walkers) out of
// the list leaves whole rounds, and the Stream-K kernel computes the carved corner over the GPU.
// Measured there (H200, session 55): the grouped kernel ends 31-49 µs earlier, the corner then
// takes 16-18 µs (a small matmul's floor: torch.mm needs 11.6), so the call gains 1-2%, not the
// round. The corner is always the right end of the last visited group's last tile row,
// so what the grouped kernel keeps of that group is two rectangles: the rows above, and that tile
// row left of the corner. Host only; tested on CPU through the private op grouped::_list_tail_corner.
#pragma once
#include <optional>
#include <vector>

#include "grouped_visitor.h"
#include "tile_choice.h"

namespace torch_grouped::sched {

// Rows [row0, m) x columns [col0, n) of the last visited group go to the Stream-K kernel.
struct TailCorner {
  int64_t row0, col0;
};

// The least gain that pays for the corner's own launch: in tile_time units, a 2048-deep 128 x 256
// tile, ~32 K blocks (13-26 µs on an H100 or H200), about twice what a Stream-K call on a corner
// of a few tiles costs (launch, pipeline fill, fixup: ~8-10 µs).
inline double tail_carve_min_gain() { return tile_time(kTileOptions[0], 2048 - kTileOptions[0].fixed_k); }

// The corner to carve from a list of `groups` problems (m, n, k in visiting order, every one with
// output elements and k > 0) walked in `tile` tiles (the chosen option: its CTA tile and clusters)
// by `walkers` walkers, or nothing. By `rule`: only where the busiest walker's work falls by at
// least tail_carve_min_gain() and the corner is at most a quarter of a round (the Stream-K kernel
// then spreads a few tiles' K over every SM); otherwise (forced, for tests) wherever the geometry
// allows: more than one round, a partial last round, and its tiles within the last group's last
// tile row.
inline std::optional<TailCorner> list_tail_corner(const int64_t* m, const int64_t* n, const int64_t* k, int32_t groups,
                                                  const TileOption& tile, int64_t walkers, bool rule) {
  if (groups < 1 || walkers < 1) return std::nullopt;
  const GemmTiles tiles{tile.scheduled()};
  int64_t total = 0;  // (every gemm call on the kernel asks: the geometry first, without allocating)
  for (int32_t g = 0; g < groups; ++g) total += tiles.count(m[g], n[g]);
  const int32_t last = groups - 1;
  const int64_t tail = total % walkers, row_tiles = tiles.tiles_n(n[last]);
  if (total <= walkers || tail == 0 || tail > row_tiles || k[last] <= 0) return std::nullopt;
  if (rule) {
    if (4 * tail > walkers) return std::nullopt;
    std::vector<int64_t> counts(groups);
    std::vector<double> costs(groups);
    for (int32_t g = 0; g < groups; ++g) counts[g] = tiles.count(m[g], n[g]), costs[g] = tile_time(tile, k[g]);
    const double before = round_robin_makespan(counts.data(), costs.data(), groups, walkers);
    counts[last] -= tail;
    const double after = round_robin_makespan(counts.data(), costs.data(), groups, walkers);
    if (before - after < tail_carve_min_gain()) return std::nullopt;
  }
  const int64_t last_row = ceil_div(m[last], int64_t(tiles.tile.m)) - 1;
  return TailCorner{last_row * tiles.tile.m, (row_tiles - tail) * tiles.tile.n};
}

}  // namespace torch_grouped::sched
