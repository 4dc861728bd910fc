// Completes a symmetric matrix from one triangle: what cuBLAS ?syr2k leaves for syr2k's fp32 and
// fp64 path, which returns the full matrix.
#pragma once
#include <ATen/ATen.h>

namespace torch_grouped {

// `out` is a contiguous square matrix of 4- or 8-byte elements on the GPU: writes its strict
// upper triangle from the lower one (`from_lower`) or the reverse, on the current stream.
void mirror_triangle(at::Tensor& out, bool from_lower);

}  // namespace torch_grouped
