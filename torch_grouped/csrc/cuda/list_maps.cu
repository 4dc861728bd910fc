// One thread per tensor map: copy the template, then patch the address, sizes and row stride
// with tensormap.replace (sm_90a). The grouped GEMM kernel acquires each map through the tensormap
// proxy before its first TMA load with it.
#include <c10/cuda/CUDAException.h>

#include "list_maps.h"

namespace torch_grouped {
namespace {

__device__ __forceinline__ void patch_map(CUtensorMap* map, const CUtensorMap& from, const void* base,
                                          int64_t inner, int64_t outer, int64_t row_bytes) {
  const uint4* src = reinterpret_cast<const uint4*>(&from);
  uint4* dst = reinterpret_cast<uint4*>(map);
#pragma unroll
  for (int i = 0; i < int(sizeof(CUtensorMap) / sizeof(uint4)); ++i) dst[i] = src[i];
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(map), "l"(base) : "memory");
  asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 0, %1;" ::"l"(map), "r"(uint32_t(inner)) : "memory");
  asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 1, %1;" ::"l"(map), "r"(uint32_t(outer)) : "memory");
  asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 2, %1;" ::"l"(map), "r"(1u) : "memory");
  // Strides in bytes, of dimensions 1 and 2 (the innermost one is the element).
  asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], 0, %1;" ::"l"(map), "l"(row_bytes) : "memory");
  asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], 1, %1;" ::"l"(map), "l"(row_bytes * outer) : "memory");
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
#endif
}

__global__ void build_list_maps_kernel(const __grid_constant__ ListMapsArgs p) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 2 * p.groups) return;
  const int32_t g = i >> 1;
  const kernels::ListGroup lg = p.list[g];
  if (lg.k == 0) return;  // no loads: the kernel only writes zeros
  if ((i & 1) == 0) {
    patch_map(p.a_maps + g, p.a_template, lg.a, lg.k, lg.m, lg.lda * p.element_size);
  } else if (p.b_k_major) {
    patch_map(p.b_maps + g, p.b_template, lg.b, lg.k, lg.n, lg.ldb * p.element_size);
  } else {
    patch_map(p.b_maps + g, p.b_template, lg.b, lg.n, lg.k, lg.ldb * p.element_size);
  }
}

}  // namespace

void build_list_tensor_maps(const ListMapsArgs& args, cudaStream_t stream) {
  const int threads = 128, blocks = (2 * args.groups + threads - 1) / threads;
  build_list_maps_kernel<<<blocks, threads, 0, stream>>>(args);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace torch_grouped
