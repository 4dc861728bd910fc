// H = G + Gᵀ for square matrices on the GPU (grouped::_symmetric_sum): syr2k's backward forms it from
// its output's gradient G for dA = alpha·H·B and dB = alpha·H·A.
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace torch_grouped {

// Each g[i] + g[i]ᵀ, rounded as ATen's add rounds it (16-bit elements summed in fp32), so exactly
// symmetric. Contiguous square matrices of bf16, fp16, fp32 or fp64 in one launch per 64 of them
// (cuda/symmetric_sum.cu); any other through ATen.
std::vector<at::Tensor> symmetric_sum_cuda(at::TensorList g);

}  // namespace torch_grouped
