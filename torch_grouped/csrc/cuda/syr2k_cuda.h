// CUDA entry point of syr2k (csrc/cuda/syr2k_cuda.cpp).
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace torch_grouped {

std::vector<at::Tensor> syr2k_cuda(at::TensorList a, at::TensorList b, at::TensorList c, const std::string& uplo,
                                   double alpha, double beta);

}  // namespace torch_grouped
