// Launcher of permute_copy's gather_fast_copy (kernels/permute_gather.cuh), called by permute_copy.cu.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "../common/permute_plan.h"

namespace torch_grouped {

// Copies `s` (element_size bytes per element) with gather_fast_copy on `stream`. Returns false,
// launching nothing, where it does not apply: 2^31 elements or more, a rank-0 shape, or a pointer
// not aligned to its element size.
bool launch_gather_fast(int64_t element_size, const PermuteShape& s, const void* in, void* out, cudaStream_t stream);

}  // namespace torch_grouped
