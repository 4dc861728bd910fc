// Device properties the launchers need, cached per device. (ATen/cuda/CUDAContext.h would pull
// in cuSPARSE and cuBLAS headers that a bare CUDA toolkit may lack.)
#pragma once
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace torch_grouped {

// Attribute `Attr` of `device`, read once. 0 marks "not read yet" (no attribute used is 0).
template <cudaDeviceAttr Attr>
int cached_device_attribute(int device) {
  static std::atomic<int> cache[64];  // zero-initialised
  if (device < 0 || device >= 64) device = 0;
  int value = cache[device].load(std::memory_order_relaxed);
  if (value == 0) {
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&value, Attr, device));
    cache[device].store(value, std::memory_order_relaxed);
  }
  return value;
}

inline int multiprocessor_count(int device) {
  return cached_device_attribute<cudaDevAttrMultiProcessorCount>(device);
}

// Blocks for a grid-stride kernel with `work` blocks' worth of work on the current device: all of
// it when it is small, else `per_sm` blocks per SM that loop over the rest (the copy kernels keep
// enough bytes in flight that way, without a grid sized by the tensor).
inline int64_t grid_stride_blocks(int64_t work, int per_sm = 8) {
  return std::min<int64_t>(work, int64_t{multiprocessor_count(c10::cuda::current_device())} * per_sm);
}

// The major compute capability (9 for Hopper, whose sm_90a code the kernels are).
inline int compute_capability_major(int device) {
  return cached_device_attribute<cudaDevAttrComputeCapabilityMajor>(device);
}

}  // namespace torch_grouped
