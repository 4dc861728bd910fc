// Device properties the launchers need, cached per device. (ATen/cuda/CUDAContext.h would pull
// in cuSPARSE and cuBLAS headers that a bare CUDA toolkit may lack.)
#pragma once
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <atomic>

namespace torch_grouped {

inline int multiprocessor_count(int device) {
  static std::atomic<int> cache[64];  // zero-initialised: 0 = not read yet
  if (device < 0 || device >= 64) device = 0;
  int n = cache[device].load(std::memory_order_relaxed);
  if (n == 0) {
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
    cache[device].store(n, std::memory_order_relaxed);
  }
  return n;
}

// The major compute capability of `device` (9 for Hopper), cached.
inline int compute_capability_major(int device) {
  static std::atomic<int> cache[64];
  if (device < 0 || device >= 64) device = 0;
  int major = cache[device].load(std::memory_order_relaxed);
  if (major == 0) {
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    cache[device].store(major, std::memory_order_relaxed);
  }
  return major;
}

}  // namespace torch_grouped
