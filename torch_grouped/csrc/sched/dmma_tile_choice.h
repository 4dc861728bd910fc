// The fp64 DMMA kernel's tile (host only; kernels/dmma_grouped.cuh): 128 x 64, cuBLAS's dgemm
// shape (16 DMMAs for 24 fragment reads a K step per warp), or 64 x 64 (twice the tiles, so fewer
// CTAs idle in a last wave), weighed by the grouped kernels' model (tile_choice.h): the busiest
// CTA of the round-robin deal, each tile its MACs over the shape's relative rate. Shared by the
// CUDA paths of gemm, syr2k and grouped_mm in fp64 and a private op for the CPU tests
// (grouped::_choose_fp64_tile).
#pragma once
#include <vector>

#include "rank2k_visitor.h"
#include "tile_choice.h"

namespace torch_grouped::sched {

// Both run two CTAs an SM. The square tile's rate relative to the wide one, measured on an H200
// (session 39, call 3, each tile forced in one process): 0.98 on syr2k n = 4096, k = 4096 (3.21
// against 3.14 ms; 2080 square tiles against 1056 wide, 8 against 4 waves of 264 CTAs) and 0.93 on
// n = 8192, k = 1024 (3.54 against 3.30 ms); where the wide tiles leave a last wave nearly empty
// the square one wins (n = 2048, k = 8192: 272 wide tiles on 264 CTAs, 2.40 against 1.54 ms;
// n = 1024: 72 wide tiles, 132 against 102 µs; 48 mixed problems 881 against 758 µs). At 0.95
// the model gives fp64 grouped_mm's 32 experts of 256 x 4096 x 2048 to the square tile: 3.25 ms
// in call 4 against 3.7-3.8 on the wide one in call 3.
inline constexpr TileOption kDmmaTileOptions[] = {{128, 64, 1.0, 2}, {64, 64, 0.95, 2}};

// The tiles of one problem (m x n; Rank2K: order n, the triangle walk's slots or all tiles).
inline int64_t dmma_tiles(const TileOption& t, int64_t m, int64_t n, bool rank2k, bool all_tiles) {
  const TileShape shape{t.m, t.n};
  return rank2k ? SymmetricTiles{Rank2KTiles{shape, Uplo::Lower}, all_tiles}.count(n, n) : GemmTiles{shape}.count(m, n);
}

// A list (gemm, or syr2k when rank2k: m ignored, both passes in K) of `groups` problems in
// visiting order, on `sms` SMs.
inline const TileOption& choose_dmma_list_tile(const int64_t* m, const int64_t* n, const int64_t* k, int32_t groups,
                                               int64_t sms, bool rank2k, bool all_tiles) {
  std::vector<int64_t> counts(groups);
  std::vector<double> times(groups);
  return least_time_tile([&](const TileOption& t) {
    int64_t total = 0;
    for (int32_t g = 0; g < groups; ++g) {
      counts[g] = dmma_tiles(t, m[g], n[g], rank2k, all_tiles);
      times[g] = tile_time(t, rank2k ? 2 * k[g] : k[g]);
      total += counts[g];
    }
    const int64_t grid = min64(sms * t.ctas_per_sm, total);
    return round_robin_makespan(counts.data(), times.data(), groups, grid < 1 ? 1 : grid);
  }, kDmmaTileOptions);
}

// grouped_mm's forms (sizes on the device): `groups` problems of K = k (the K-grouped form: k in
// all, shared out), output m x n as form_tiles counts it, the ragged edges as on average.
inline const TileOption& choose_dmma_grouped_mm_tile(GroupedForm form, int64_t m, int64_t n, int64_t groups, int64_t k,
                                                     int64_t sms) {
  const int64_t depth = form == GroupedForm::RaggedK ? ceil_div(k, groups < 1 ? 1 : groups) : k;
  return choose_uniform_tile(depth, sms, [&](const TileOption& t) {
    return form_tiles(form, m, n, groups, t.scheduled(), groups / 2 + 1);
  }, kDmmaTileOptions);
}

}  // namespace torch_grouped::sched
