// The TMA maps of the matmul kernels' operands in the non-list forms (grouped_mm, streamk_mm):
// A as [batch, rows, K], B as [batch, K, N] read K-major or N-major.
#pragma once
#include <ATen/ATen.h>
#include <cuda.h>

#include <vector>

namespace torch_grouped {

// The kernels' K step: one 128-byte swizzled line of 64 half-precision elements.
constexpr int kTileK = 64;

// Encodes A ([batch, rows, K]) with boxes of 64 x tile_m. A layout TMA cannot address is copied
// (pitched_copy) into `keep`, which must live until the launch (the allocator reuses the copy
// only in stream order). False only for operands beyond TMA's extents (2^31 rows).
bool map_a(const at::Tensor& a3, int tile_m, at::ScalarType dtype, CUtensorMap& map, std::vector<at::Tensor>& keep);

// Encodes B ([batch, K, N]) K-major (boxes of 64 x tile_n over the [batch, N, K] view) or N-major
// (boxes of 64 columns x 64 rows of K), copying as map_a does.
bool map_b(const at::Tensor& b3, bool k_major, int tile_n, at::ScalarType dtype, CUtensorMap& map,
           std::vector<at::Tensor>& keep);

// A copy of `t` ([..., rows, cols]) whose rows start every 16 bytes: a dense layout with each
// row padded to a multiple of 8 elements, viewed back at t's sizes. TMA needs 16-byte row
// strides but not whole rows, so this makes any half-precision operand addressable (K = 12, or
// an odd N) at the cost of one copy, where cuBLAS slows down by 3-5x on such shapes.
at::Tensor pitched_copy(const at::Tensor& t);

// Whether a [K, N] operand is used K-major: unit stride along K, or a single column. An operand
// with neither stride 1 is copied to the layout chosen here.
bool b_is_k_major(int64_t k, int64_t n, int64_t stride_k, int64_t stride_n);

}  // namespace torch_grouped
