// The grouped kernels' tile heuristic (host only): which of the compiled tile shapes a call of
// gemm (groups of known sizes) or grouped_mm (ragged sizes on the device) runs with. The model:
// the time of one tile is its MACs over the shape's relative WGMMA efficiency, at the rate its CTA
// gets of an SM, plus a fixed part; the call's time is its busiest CTA's (round-robin deal,
// grouped_visitor.h). Tested on CPU through the private ops grouped::_choose_gemm_tile and
// grouped::_choose_k_grouped_tile and grouped::_choose_grouped_mm_tile.
#pragma once
#include <vector>

#include "grouped_form.h"
#include "grouped_visitor.h"

namespace torch_grouped::sched {

// The busiest CTA's work when `grid` CTAs deal out the tiles round-robin (CTA b takes tiles b,
// b + grid, ...) of groups visited in order, group g holding count[g] tiles of cost[g] each: the
// time the tile heuristic weighs (a list of groups with different K is not balanced by counting
// waves: seed 000's example, with two groups of K = 1024 and two of 128, fills one wave of
// 128 x 256 tiles whose K = 1024 ones set the time, where two waves of 128 x 128 take half as
// long). Host only; O(groups + grid): each group gives every CTA count / grid tiles, and one more
// to a circular run of CTAs, added through a difference array.
inline double round_robin_makespan(const int64_t* count, const double* cost, int32_t groups, int64_t grid) {
  if (grid < 1) return 0;
  std::vector<double> base_and_steps(static_cast<size_t>(grid) + 1, 0.0);
  double everyone = 0;  // added to every CTA
  int64_t first = 0;    // the group's first tile index, modulo grid
  for (int32_t g = 0; g < groups; ++g) {
    everyone += static_cast<double>(count[g] / grid) * cost[g];
    const int64_t extra = count[g] % grid;  // CTAs first .. first + extra - 1 (mod grid) get one more
    if (extra > 0) {
      const int64_t end = first + extra;
      base_and_steps[first] += cost[g];
      if (end <= grid) {
        base_and_steps[end] -= cost[g];
      } else {
        base_and_steps[grid] -= cost[g];
        base_and_steps[0] += cost[g];
        base_and_steps[end - grid] -= cost[g];
      }
    }
    first = (first + count[g]) % grid;
  }
  double run = 0, busiest = 0;
  for (int64_t b = 0; b < grid; ++b) {
    run += base_and_steps[b];
    busiest = b == 0 || run > busiest ? run : busiest;
  }
  return everyone + busiest;
}

struct TileOption {
  int32_t m, n;         // of one CTA
  double efficiency;    // WGMMA rate relative to 128 x 256
  int32_t ctas_per_sm;  // two 64-row CTAs share an SM: each advances at half its rate
  int32_t cluster_m = 1;  // CTAs per cluster along M: the scheduler deals cluster_m·m x n tiles
  int32_t fixed_k = 128;  // a tile's pipeline fill and epilogue, in K of its MACs (tile_time)
  TG_HOST_DEVICE TileShape scheduled() const { return TileShape{m * cluster_m, n}; }
};

// The shapes the kernels are built for (csrc/instantiations/), in order of preference on ties.
inline constexpr TileOption kTileOptions[] = {{128, 256, 1.0, 1}, {128, 128, 0.92, 1}, {64, 128, 0.85, 2}};

// 128 x 256 tiles in 2 x 1 clusters that multicast B (kernels/grouped_gemm_sm90.cuh). Weighed by
// the list API's model (kListTileOptions) and the K-grouped form's (kKGroupedTileOptions), not by
// grouped_mm's ragged-row, ragged-column and batched forms: there, on the H100, it was 3-16%
// slower than plain 128 x 256 on the MoE cases (session 8; again in session 32: DeepSeek-V3 down
// 500 -> 578 µs), where on a list of big groups it was 2-3.4% faster (session 32, interleaved
// A/B: 8 x 4096^3 1697 -> 1664 and 1715 -> 1658 µs). Forced by TORCH_GROUPED_TILE=128x256c2;
// TORCH_GROUPED_CLUSTER=1 or 0 overrides every model's choice between it and plain 128 x 256.
inline constexpr TileOption kClusterTile{128, 256, 1.0, 1, 2};

// Those of the list API (gemm): the clustered kernel first, weighed over its pair tiles' rows (an
// odd count of tile rows pads one), so that it wins its ties with plain 128 x 256.
inline constexpr TileOption kListTileOptions[] = {kClusterTile, kTileOptions[0], kTileOptions[1], kTileOptions[2]};

// Those of the K-grouped form (grouped_mm 2-D x 2-D), whose kernels read A M-major. The clustered
// kernel comes first, weighed as plain 128 x 256 over its pair tiles' rows (an odd count of tile
// rows pads one), so it wins the ties: on the H100 it was 0.5-8% faster than plain 128 x 256 on
// all six weight-gradient cases, three interleaved rounds each (session 24: DeepSeek-V3 down 656
// -> 640 µs, skewed routing 367 -> 355, Mixtral 3017 -> 2783 median; multicasting B moves a third
// fewer operand bytes into the SMs, which the power-capped clock rewards).
inline constexpr TileOption kKGroupedTileOptions[] = {kClusterTile, kTileOptions[0], kTileOptions[1]};

// One tile of depth k, plus a fixed part for the pipeline fill and the epilogue (the WGMMA
// kernels: about two 64-deep K blocks).
inline double tile_time(const TileOption& t, int64_t k) {
  return double(t.ctas_per_sm) * t.m * t.n * double(k + t.fixed_k) / t.efficiency;
}

// A set of options (kTileOptions or kKGroupedTileOptions).
struct TileOptions {
  const TileOption* first;
  int32_t count;
  template <size_t N>
  constexpr TileOptions(const TileOption (&options)[N]) : first(options), count(int32_t(N)) {}
};

// The option with the least `time(option)`.
template <class TimeFn>
const TileOption& least_time_tile(TimeFn time, TileOptions options = kTileOptions) {
  const TileOption* best = nullptr;
  double best_time = 0;
  for (const TileOption* o = options.first; o != options.first + options.count; ++o) {
    const TileOption& t = *o;
    const double cost = time(t);
    if (best == nullptr || cost < best_time) best = &t, best_time = cost;
  }
  return *best;
}

// A CTA's tiles of one m x n problem under `t`: a cluster's pair tiles count as cluster_m CTA
// tiles each, the padded one past an odd last tile row included (its CTA loads B for its peer).
inline int64_t cta_tiles(const TileOption& t, int64_t m, int64_t n) {
  return GemmTiles{t.scheduled()}.count(m, n) * t.cluster_m;
}

// The option of `options` whose busiest CTA of the round-robin deal finishes first, for a list of
// `groups` problems in visiting order on `sms` SMs: `tiles(option, g)` tiles of depth k[g] each
// in group g (shared by gemm's model below and the fp64 kernel's, dmma_tile_choice.h).
template <class TilesFn>
const TileOption& least_makespan_tile(TilesFn tiles, const int64_t* k, int32_t groups, int64_t sms,
                                      TileOptions options) {
  std::vector<int64_t> counts(groups);
  std::vector<double> times(groups);
  return least_time_tile([&](const TileOption& t) {
    int64_t total = 0;
    for (int32_t g = 0; g < groups; ++g) {
      counts[g] = tiles(t, g);
      times[g] = tile_time(t, k[g]);
      total += counts[g];
    }
    const int64_t grid = min64(sms * t.ctas_per_sm, total);
    return round_robin_makespan(counts.data(), times.data(), groups, grid < 1 ? 1 : grid);
  }, options);
}

// A list of groups (m, n, k in visiting order) on `sms` SMs: the busiest CTA of the round-robin
// deal, so that groups of different K are weighed by their tiles' depth. `options`: the tiles the
// call's kernels exist with (a list whose A is read M-major: kKGroupedTileOptions, its kernels').
inline const TileOption& choose_list_tile(const int64_t* m, const int64_t* n, const int64_t* k, int32_t groups,
                                          int64_t sms, TileOptions options = kListTileOptions) {
  return least_makespan_tile([&](const TileOption& t, int32_t g) { return cta_tiles(t, m[g], n[g]); }, k, groups, sms,
                             options);
}

// One K for every group (grouped_mm; the K-grouped form: their mean): waves of the persistent grid
// times one tile's time; `tiles(option)` estimates the call's tile count.
template <class TileCountFn>
const TileOption& choose_uniform_tile(int64_t k, int64_t sms, TileCountFn tiles,
                                      TileOptions options = kTileOptions) {
  return least_time_tile([&](const TileOption& t) {
    return double(ceil_div(tiles(t), sms * t.ctas_per_sm)) * tile_time(t, k);
  }, options);
}

// grouped_mm's ragged-row, ragged-column and batched forms: `groups` problems whose sizes (in
// the ragged forms) only the device knows, of K = k, output m x n (form_tiles' m and n), on `sms`
// SMs. The ragged edges are counted as on average (groups / 2 + 1 partial tile rows or columns).
// The clustered kernel is not an option here (kClusterTile says why).
inline const TileOption& choose_grouped_mm_tile(GroupedForm form, int64_t m, int64_t n, int64_t groups, int64_t k,
                                                int64_t sms) {
  return choose_uniform_tile(k, sms, [&](const TileOption& t) {
    return form_tiles(form, m, n, groups, t.scheduled(), groups / 2 + 1);
  });
}

// The K-grouped form (grouped_mm 2-D x 2-D, the MoE weight gradient): `groups` problems of m x n
// whose K averages k, on `sms` SMs. A cluster's pair tiles count in CTA tiles: a pair past an odd
// last tile row still runs (its CTA loads B for its peer), so the clustered kernel, first among
// the options, wins its ties with plain 128 x 256 unless that padding adds a wave.
inline const TileOption& choose_k_grouped_tile(int64_t m, int64_t n, int64_t groups, int64_t k, int64_t sms) {
  return choose_uniform_tile(k, sms, [&](const TileOption& t) {
    return cta_tiles(t, m, n) * groups;
  }, kKGroupedTileOptions);
}

}  // namespace torch_grouped::sched
