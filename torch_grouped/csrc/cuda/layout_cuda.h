// CUDA entry points of the layout ops (csrc/cuda/permute_copy.cu).
#pragma once
#include <ATen/ATen.h>

#include <string>

namespace torch_grouped {

at::Tensor permute_copy_cuda(const at::Tensor& x, at::IntArrayRef dims);
at::Tensor layout_transform_cuda(const at::Tensor& x, const std::string& src, const std::string& dst);

}  // namespace torch_grouped
