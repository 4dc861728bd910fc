// Launcher of permute_copy's pair_swap_copy (kernels/permute_pair.cuh), called by permute_copy.cu.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "../common/permute_plan.h"

namespace torch_grouped {

// Copies `s` with pair_swap_copy on `stream` where it applies: the output's last three axes are
// [P, M, Q] with P the input's unit-stride axis, M of input stride |P| and a multiple of 16
// elements, P and Q of 2 or more elements and less than 16 bytes each; 16-byte aligned pointers,
// Q's input stride, P's output stride and every batch stride multiples of 16 bytes; element size
// 1, 2 or 4. Returns false, launching nothing, elsewhere.
bool launch_pair_swap(int64_t element_size, const PermuteShape& s, const void* in, void* out, cudaStream_t stream);

}  // namespace torch_grouped
