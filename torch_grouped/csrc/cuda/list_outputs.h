// The outputs of a list call (gemm, syr2k) in one allocation: one tensor per group, each on its
// own stretch of a shared CUDA storage, made without the dispatcher. An allocation and a tensor
// per group through the caching allocator cost microseconds each, which a list of a hundred small
// groups notices. The tensors share the storage but never overlap; the memory is freed when the
// last of them dies.
#pragma once
#include <ATen/ATen.h>

#include <utility>
#include <vector>

namespace torch_grouped {

// Contiguous [rows, cols] tensors of `dtype` on `device`, each starting 256-byte aligned.
std::vector<at::Tensor> outputs_in_one_block(const std::vector<std::pair<int64_t, int64_t>>& shapes,
                                             at::ScalarType dtype, const at::Device& device);

}  // namespace torch_grouped
