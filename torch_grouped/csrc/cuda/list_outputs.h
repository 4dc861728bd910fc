// The outputs of a list call (gemm, syr2k) in one allocation: one tensor per group, each with a
// storage of its own on its own stretch of one CUDA allocation, made without the dispatcher. An
// allocation per group through the caching allocator costs microseconds, which a list of a
// hundred small groups notices. The stretches never overlap; the allocation is freed when the last
// of them dies. (So `record_stream` on one output does not reach the allocation, which the caching
// allocator tracks only through its own pointers: a consumer on another stream must synchronise
// with the producing stream before the outputs die.)
#pragma once
#include <ATen/ATen.h>

#include <utility>
#include <vector>

namespace torch_grouped {

// Contiguous [rows, cols] tensors of `dtype` on `device`, each starting 256-byte aligned.
std::vector<at::Tensor> outputs_in_one_block(const std::vector<std::pair<int64_t, int64_t>>& shapes,
                                             at::ScalarType dtype, const at::Device& device);

}  // namespace torch_grouped
