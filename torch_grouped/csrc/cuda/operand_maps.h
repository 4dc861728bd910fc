// The TMA maps of the matmul kernels' operands (see staged_operands.h for how an operand becomes
// addressable): A as [batch, rows, K], B as [batch, K, N] read K-major or N-major.
#pragma once
#include <ATen/ATen.h>
#include <cuda.h>

#include "tma_map.h"

namespace torch_grouped {

// The kernels' K step: one 128-byte swizzled line of 64 half-precision elements.
constexpr int kTileK = 64;
// The K step for inputs of `dtype`: one 128-byte line (32 for fp32 read through TF32).
inline int tile_k(at::ScalarType dtype) { return 128 / static_cast<int>(at::elementSize(dtype)); }

// A ([batch, rows, K]) in boxes of tile_k(dtype) x tile_m.
CUtensorMap a_map(const TmaOperand& a, int tile_m, at::ScalarType dtype);

// An operand with unit stride along M or N ([batch, K, M or N]) in boxes of 64 columns x 64 rows
// of K: B N-major, and A M-major (the K-grouped form's xᵀ).
CUtensorMap mn_major_map(const TmaOperand& t, at::ScalarType dtype);

// B K-major (the [batch, N, K] operand in boxes of tile_k(dtype) x tile_n) or N-major (mn_major_map).
CUtensorMap b_map(const TmaOperand& b, bool k_major, int tile_n, at::ScalarType dtype);

// Whether the epilogue stores through TMA where the output allows (a kernel variant of its own):
// TORCH_GROUPED_TMA_STORE=1 on, =0 off, unset `by_default` (on for streamk_mm, off for the grouped
// kernels: measured in session 8, benchmarks/NOTES.md).
bool tma_store_enabled(bool by_default);

// An output ([batch, rows, N]) in the boxes of the TMA-store epilogue (kernels/grouped_gemm_args.h,
// c_map): one 128-byte line of columns x 64 rows.
CUtensorMap output_box_map(const TmaOperand& out, at::ScalarType dtype);

// The output `out` ([rows, N] or [batch, rows, N]) as such a map, when tma_store_enabled() and
// TMA can address it (16-byte aligned base and rows); else nothing (the threads store). TMA clips
// a box at the map's edges, not at a group's: the kernel knows which of its blocks may use it.
std::optional<CUtensorMap> output_map(const at::Tensor& out, bool by_default);

// Whether a [K, N] operand is used K-major: unit stride along K, or a single column. An operand
// with neither stride 1 is copied to the layout chosen here.
bool b_is_k_major(int64_t k, int64_t n, int64_t stride_k, int64_t stride_n);

// Whether an [M, K] operand A lies M-major: unit stride along M and not along K (a transposed view,
// such as the A_iᵀ of gemm's own dB_i = A_iᵀ·dY_i).
bool a_is_m_major(int64_t m, int64_t k, int64_t stride_m, int64_t stride_k);

}  // namespace torch_grouped
