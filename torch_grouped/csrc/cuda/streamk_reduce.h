// The separate Stream-K fixup (sched::SeparateFixup): after the matmul kernel has stored every
// segment of a cut tile as an fp32 partial (in register order, sched::PartialQuad), one launch
// sums each cut tile's partials and stores the tile, in parallel over its elements.
#pragma once
#include <cuda_runtime.h>

#include "../kernels/grouped_gemm_args.h"
#include "../sched/streamk_plan.h"

namespace torch_grouped {

// Where the tiles go: an m x n output of `kind` (bfloat16, half, or float for TF32 inputs) with
// row stride ldc.
struct StreamKOutput {
  void* data;
  int64_t m, n, ldc;
  kernels::OutKind kind;
};

// Sums the cut tiles of `plan` (tile_m x tile_n tiles, partials in workspace slots of
// tile_m * tile_n floats) into `out`, on `stream`.
void launch_streamk_reduce(const sched::StreamKPlan& plan, const float* workspace, int tile_m, int tile_n,
                           const StreamKOutput& out, cudaStream_t stream);

}  // namespace torch_grouped
