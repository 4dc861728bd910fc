// The layout ops' permuted copy into a buffer the caller owns, for other ops that stage an
// operand in a layout their kernels read (cuda/staged_operands.cpp: a transposed matmul operand).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace torch_grouped {

// Copies the memory at `in`, seen as `rank` axes of (sizes, strides) in elements of
// `element_size` bytes, permuted by `dims`, into `out` (16-byte aligned) as a contiguous array,
// on `stream`, with the kernel permute_copy would run (cuda/permute_copy.cu).
void permute_into(const void* in, void* out, int64_t element_size, int rank, const int64_t* sizes,
                  const int64_t* strides, const int64_t* dims, cudaStream_t stream);

}  // namespace torch_grouped
