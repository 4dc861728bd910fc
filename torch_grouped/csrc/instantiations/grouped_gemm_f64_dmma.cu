// The fp64 grouped kernel (kernels/dmma_grouped.cuh): 64 x 64 tiles, operands through pointers.
#include "../kernels/dmma_grouped.cuh"

namespace torch_grouped::kernels {

void launch_dmma_grouped(const DmmaArgs& args, int grid, cudaStream_t stream) {
  int device = 0;
  C10_CUDA_CHECK(cudaGetDevice(&device));
  prepare_dmma_grouped(device);
  dmma_grouped_kernel<<<grid, DmmaConfig::Threads, DmmaConfig::SmemBytes, stream>>>(args);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

int dmma_grouped_resident(int device) {
  static std::atomic<int> cache[64];  // zero: not asked yet
  const int slot = device >= 0 && device < 64 ? device : 0;
  int ctas = cache[slot].load(std::memory_order_relaxed);
  if (ctas > 0) return ctas;
  prepare_dmma_grouped(device);
  int per_sm = 0, sms = 0;
  C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dmma_grouped_kernel, DmmaConfig::Threads,
                                                               DmmaConfig::SmemBytes));
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  TORCH_CHECK(per_sm > 0, "torch_grouped: the fp64 grouped kernel does not fit on device ", device);
  ctas = per_sm * sms;
  cache[slot].store(ctas, std::memory_order_relaxed);
  return ctas;
}

}  // namespace torch_grouped::kernels
