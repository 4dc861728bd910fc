// syr2k's CUDA path for fp32 and fp64, which the Rank2K kernel (bf16/fp16 WGMMA) does not cover:
// cuBLAS ?syr2k on torch's own handle (TF32 for fp32 when torch allows it for matmuls), then the
// other triangle mirrored. cuBLAS computes only the triangle, 1.6-2.1x faster than two matmuls at
// n >= 1024 on an H100 (session 5, run 1) but slower on small orders, which take two matmuls.
#pragma once
#include <ATen/ATen.h>

#include "../sched/rank2k_visitor.h"

namespace torch_grouped {

// One group (fp32 or fp64, on the GPU, n >= 1, k >= 1): alpha·(a bᵀ + b aᵀ) + beta·c, c (or
// null) read from its `uplo` triangle, exactly symmetric. Orders >= 1024 take cuBLAS ?syr2k where
// the build found its headers and its 32-bit sizes hold the problem; the rest two addmm (four
// calls: beta·c folded by the mirror kernel, two addmm, the triangle mirrored; the portable
// composite takes about ten, which a list of small groups notices on the host).
at::Tensor blas_syr2k(const at::Tensor& a, const at::Tensor& b, const at::Tensor* c, sched::Uplo uplo, double alpha,
                      double beta);

}  // namespace torch_grouped
