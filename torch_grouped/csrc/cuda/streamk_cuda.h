#pragma once
#include <ATen/ATen.h>

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "../sched/streamk_model.h"

namespace torch_grouped {

// streamk_mm on the GPU: our Stream-K kernel for bf16/fp16 on Hopper, cuBLAS otherwise.
at::Tensor streamk_mm_cuda(const at::Tensor& a, const at::Tensor& b, const std::string& decomposition,
                           int64_t splits, int64_t grid);

// The same product on the Stream-K kernel into `out`, an m x n view of unit column stride (any
// row stride; its dtype the epilogue's: bf16, fp16 or fp32): gemm's carved tail corner
// (sched/list_tail.h) writes into its group's output this way. m, n and k > 0; a and b bf16 or
// fp16 (or fp32 with `tf32`) on a Hopper GPU; operands TMA cannot address are staged as
// streamk_mm stages them.
void streamk_mm_into(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out, sched::Decomposition d,
                     bool is_auto, int64_t splits, int64_t grid, bool tf32 = false);

// The private op _streamk_tile: {tile_m, tile_n, tile_k} of the kernel streamk_mm(a, b, grid=grid)
// runs (auto's choice of width), for the tests and the benchmarks' sweeps.
std::vector<int64_t> streamk_tile_cuda(const at::Tensor& a, const at::Tensor& b, int64_t grid);

// The private op _streamk_walk: {the plan's tile rows, its walkers} for streamk_mm(a, b, grid=grid)
// (256 and the resident clusters where it runs in 2 x 1 clusters, 64 and up to two CTAs an SM in
// the 64 x 64 tiles, else the tile's rows and the grid), so that
// the benchmarks' sweeps read the features of the plan that runs (bf16 / fp16 on Hopper).
std::vector<int64_t> streamk_walk_cuda(const at::Tensor& a, const at::Tensor& b, int64_t grid);

// The Stream-K models of this device (else the defaults): streamk_mm's per tile, syr2k's.
struct StreamKModels {
  sched::StreamKModel wide;    // streamk_mm, 128 x 256 tiles
  sched::StreamKModel narrow;  // streamk_mm, 128 x 128 tiles
  sched::StreamKModel rows;    // streamk_mm, the row-copy kernel (128 x 128 tiles)
  // streamk_mm, the row-copy kernel's 128 x 256 tiles: stand-ins (not calibrated), the 128 x 128
  // one's with an iteration 1.5 times as dear. Its copies bound that kernel's K loop (an
  // iteration 2.7 times the TMA kernel's on the H200), and a 128 x 256 block is 48 KB of operands
  // against 32, for twice the MACs. Twice as dear (rows_wide_b4) where B alone is copied, in
  // 4-byte pieces: the wide tile then copies as many pieces per MAC as the 128 x 128 one, 8192 a
  // stage, and those bound its K loop (154 x 1234 x 24001: 86.3 µs in 128 x 256 tiles, 74.0 in
  // 128 x 128; H200, session 52). rows_model says which.
  sched::StreamKModel rows_wide, rows_wide_b4;
  sched::StreamKModel rank2k;  // syr2k's one-problem plan (sched/rank2k_calibration.h)
  // streamk_mm's tiles on a shape the TMA kernel cannot read and write in place (pitched copies of
  // the operands, shifted output rows: sched::StreamKCalibration says why they have their own)
  sched::StreamKModel wide_unaligned, narrow_unaligned;
  // streamk_mm, 192 x 128 tiles (three consumer warpgroups): this GPU's calibration of them
  // (sched::StreamKCalibration::tall) or TORCH_GROUPED_STREAMK_MODEL_TALL's, which `auto` weighs
  // (tall_weighed); else a stand-in for runs that force the tile (TORCH_GROUPED_STREAMK_TILE),
  // never weighed: the wide tile's model with an iteration 0.82 as dear (its 3/4 of the MACs at
  // the rate the H100 ran 4096³ in it, session 44)
  sched::StreamKModel tall;
  bool tall_weighed = false;
  // streamk_mm, 64 x 64 tiles (one consumer warpgroup, two CTAs an SM), which `auto` takes by a
  // rule (sched::small_tile_pays), not by weighing plans against the other tiles': the model of its
  // plans, a stand-in (not calibrated), the narrow tile's with an iteration half as dear (a quarter
  // of the MACs, half of the operand bytes)
  sched::StreamKModel small;
  // DRAM at a peak of 4 TB/s or more (an H200): pitched copies are cheap enough that
  // sched::row_copies_pay weighs row copies by its tighter clauses
  bool copies_cheap = false;
  // The row-copy kernel's model for its 128 x tile_n tiles, A and B copied in pieces of a_width
  // and b_width bytes (0: the operand comes through TMA).
  const sched::StreamKModel& rows_model(int tile_n, int a_width, int b_width) const {
    if (tile_n != 256) return rows;
    return a_width == 0 && b_width == 4 ? rows_wide_b4 : rows_wide;
  }
  const sched::StreamKModel& tile_model(int tile_m, int tile_n, bool in_place) const {
    if (tile_m == 192) return tall;
    if (tile_m == 64) return small;
    return tile_n == 256 ? (in_place ? wide : wide_unaligned) : (in_place ? narrow : narrow_unaligned);
  }
};

// Shared with syr2k's Stream-K path: this device's models, and the fixup's tile counters for a
// launch on `stream` (zero at launch, left at zero by the kernel; a capture's fresh buffer is
// kept in `keep`).
const StreamKModels& cached_models(int device);
int32_t* tile_counters(const at::Device& device, cudaStream_t stream, int64_t count, std::vector<at::Tensor>& keep);

}  // namespace torch_grouped
