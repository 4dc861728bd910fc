// syr2k's CUDA path for fp32 and fp64, which the Rank2K kernel (bf16/fp16 WGMMA) does not cover:
// cuBLAS ?syr2k on torch's own handle (TF32 for fp32 when torch allows it for matmuls), then the
// other triangle mirrored. cuBLAS computes only the triangle, 1.6-2.1x faster than two matmuls at
// n >= 1024 on an H100 (session 5, run 1) but slower on small orders, which keep the composite.
#pragma once
#include <ATen/ATen.h>

#include <optional>

#include "../sched/rank2k_visitor.h"

namespace torch_grouped {

// Whether this build can call cuBLAS ?syr2k (its headers were found at build time).
bool cublas_syr2k_available();

// One group (fp32 or fp64, on the GPU, n >= 1, k >= 1): alpha·(a bᵀ + b aᵀ) + beta·c, c read
// from its `uplo` triangle. Nothing where cuBLAS's 32-bit sizes do not hold the problem.
std::optional<at::Tensor> cublas_syr2k(const at::Tensor& a, const at::Tensor& b, const at::Tensor* c, sched::Uplo uplo,
                                       double alpha, double beta);

}  // namespace torch_grouped
