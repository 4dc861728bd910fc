// Per-device host facts of a kernel: the dynamic shared memory it asks for (over 48 KB a kernel
// must say so once per device, before a launch or an occupancy query), and values computed once
// per device (its resident CTAs).
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

// cache[device], computed by compute() the first time (a positive value; 64 devices at most, the
// others share slot 0's).
template <class Compute>
int once_per_device(std::atomic<int> (&cache)[64], int device, Compute compute) {
  const int slot = device >= 0 && device < 64 ? device : 0;
  int value = cache[slot].load(std::memory_order_relaxed);
  if (value > 0) return value;
  value = compute();
  cache[slot].store(value, std::memory_order_relaxed);
  return value;
}

}  // namespace torch_grouped::kernels
