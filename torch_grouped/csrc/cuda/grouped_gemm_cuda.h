// CUDA entry points of gemm and grouped_mm (csrc/cuda/grouped_gemm_cuda.cpp).
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

namespace torch_grouped {

at::Tensor grouped_mm_cuda(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                           std::optional<at::ScalarType> out_dtype);
std::vector<at::Tensor> gemm_cuda(at::TensorList a, at::TensorList b, std::optional<at::ScalarType> out_dtype,
                                  const std::string& schedule, bool sort_by_k);

}  // namespace torch_grouped
