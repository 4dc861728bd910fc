// Kernels that take more than 48 KB of dynamic shared memory must say so once per device (the
// attribute is per device) before a launch or an occupancy query.
#pragma once
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

namespace torch_grouped::kernels {

// `done`: the kernel's own flags, bit d set once device d has the attribute.
template <class Kernel>
void allow_dynamic_smem(Kernel kernel, int bytes, int device, std::atomic<uint64_t>& done) {
  const uint64_t bit = device >= 0 && device < 64 ? uint64_t{1} << device : 0;
  if (bit != 0 && (done.load(std::memory_order_relaxed) & bit)) return;
  C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  done.fetch_or(bit, std::memory_order_relaxed);
}

}  // namespace torch_grouped::kernels
