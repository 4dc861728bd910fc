// Launcher of permute_copy's TMA variant (kernels/permute_tma.cuh), called by permute_copy.cu.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "../kernels/permute.cuh"

namespace torch_grouped {

// Copies the batched 2-D transpose of `p` (a tile2d plan: its checks hold) with TMA loads, on
// `stream`. Returns false, launching nothing, where TMA cannot address the input: more than two
// batch axes, a broadcast (stride-0) axis, a row of 2^31 bytes or more, strides of 2^40 bytes or
// more, or a map the driver refuses. The caller then runs tile2d itself.
bool launch_tile2d_tma(int64_t element_size, const void* in, void* out, const kernels::Tile2dPlan& p,
                       cudaStream_t stream);

}  // namespace torch_grouped
