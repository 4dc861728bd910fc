// The TMA maps of the matmul kernels' operands (see staged_operands.h for how an operand becomes
// addressable): A as [batch, rows, K], B as [batch, K, N] read K-major or N-major.
#pragma once
#include <ATen/ATen.h>
#include <cuda.h>

#include "tma_map.h"

namespace torch_grouped {

// The kernels' K step: one 128-byte swizzled line of 64 half-precision elements.
constexpr int kTileK = 64;

// A ([batch, rows, K]) in boxes of 64 x tile_m.
CUtensorMap a_map(const TmaOperand& a, int tile_m, at::ScalarType dtype);

// B K-major (the [batch, N, K] operand in boxes of 64 x tile_n) or N-major (the [batch, K, N]
// operand in boxes of 64 columns x 64 rows of K).
CUtensorMap b_map(const TmaOperand& b, bool k_major, int tile_n, at::ScalarType dtype);

// The output `out` ([batch, rows, N]) for the epilogue's TMA stores (kernels/grouped_gemm_args.h,
// c_map), when TORCH_GROUPED_TMA_STORE=1 and TMA can address it; else nothing (the threads store).
// Only for an output that the map covers exactly, one problem (streamk_mm): TMA clips a box at
// the map's edges, not at a group's.
std::optional<CUtensorMap> output_map(const at::Tensor& out);

// Whether a [K, N] operand is used K-major: unit stride along K, or a single column. An operand
// with neither stride 1 is copied to the layout chosen here.
bool b_is_k_major(int64_t k, int64_t n, int64_t stride_k, int64_t stride_n);

}  // namespace torch_grouped
