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

// Both run two CTAs an SM. Fitted to the H200's measurements (session 39, calls 3 and 7, each
// tile forced in one process; µs, wide / square): the square tile's rate 0.93 of the wide one,
// and the wide tile's fixed part twice the square one's (256 against 128 K: its epilogue stores
// twice the elements, its three-stage fill moves twice the bytes a block). That picks the faster
// tile on all ten: wide on syr2k n = 4096 (3143 / 3211), n = 8192 k = 1024 (3303 / 3541) and gemm
// 4 x 4096^3 (13101 / 14455); square on syr2k n = 2048 k = 8192 (2401 / 1541: 272 wide tiles on
// 264 CTAs), n = 1024 (132 / 102), 48 mixed problems (881 / 758), gemm's 64 groups of
// 128 x 1024 x 1024 (479 / 437), seed 000's four (140 / 122), and grouped_mm's 32 experts of
// 256 x 4096 x 2048 (3863 / 3484) and 64 of 128 x 1024 x 1024 (610 / 515). A round number for
// each of the two parameters, each inside the range the ten allow (0.93 with a wide fixed part of
// 216-291).
inline constexpr TileOption kDmmaTileOptions[] = {{128, 64, 1.0, 2, 1, 256}, {64, 64, 0.93, 2, 1, 128}};

// The tiles of one problem (m x n; Rank2K: order n, the triangle walk's slots or all tiles).
inline int64_t dmma_tiles(const TileOption& t, int64_t m, int64_t n, bool rank2k, bool all_tiles) {
  const TileShape shape{t.m, t.n};
  return rank2k ? SymmetricTiles{Rank2KTiles{shape, Uplo::Lower}, all_tiles}.count(n, n) : GemmTiles{shape}.count(m, n);
}

// A list (gemm, or syr2k when rank2k: m ignored, both passes in K) of `groups` problems in
// visiting order, on `sms` SMs.
inline const TileOption& choose_dmma_list_tile(const int64_t* m, const int64_t* n, const int64_t* k, int32_t groups,
                                               int64_t sms, bool rank2k, bool all_tiles) {
  std::vector<int64_t> depth(k, k + groups);
  if (rank2k)
    for (int64_t& d : depth) d *= 2;
  return least_makespan_tile([&](const TileOption& t, int32_t g) { return dmma_tiles(t, m[g], n[g], rank2k, all_tiles); },
                             depth.data(), groups, sms, kDmmaTileOptions);
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
