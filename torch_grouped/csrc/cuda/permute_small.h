// Launcher of permute_copy's small-axis kernel (kernels/permute_small.cuh), called by permute_copy.cu.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "../common/permute_plan.h"

namespace torch_grouped {

// Copies `s` with small_axis_copy on `stream` where it applies: a transpose of the input's
// unit-stride axis with the output-inner axis, one of them 2..min(V, 8) elements (V = 16 /
// element_size; a divisor of V) and adjacent to the other on its interleaved side, the other a multiple of V, every
// stride of the planar side and of the batch axes a multiple of V, both pointers 16-byte aligned,
// fewer than 2^31 blocks. Returns false, launching nothing, elsewhere.
bool launch_small_axis(int64_t element_size, const PermuteShape& s, const void* in, void* out, cudaStream_t stream);

// The padding of a padded layout transform in the shape's terms: `axis` of s and the output-inner
// (short) axis split the padded axis, whose position (i, k) holds data when i * short + k < limit
// (axis -1: no outer axis, i = 0). Only the planes-in direction (the padded axis planar in the
// input) is served; its zeros are written by the kernel.
struct SmallAxisPadding {
  int axis;
  int64_t limit;
};
bool launch_small_axis_padded(int64_t element_size, const PermuteShape& s, const SmallAxisPadding& pad, const void* in,
                              void* out, cudaStream_t stream);

}  // namespace torch_grouped
