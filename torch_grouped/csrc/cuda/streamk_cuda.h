#pragma once
#include <ATen/ATen.h>

#include <string>

namespace torch_grouped {

// streamk_mm on the GPU: our Stream-K kernel for bf16/fp16 on Hopper, cuBLAS otherwise.
at::Tensor streamk_mm_cuda(const at::Tensor& a, const at::Tensor& b, const std::string& decomposition,
                           int64_t splits, int64_t grid);

}  // namespace torch_grouped
