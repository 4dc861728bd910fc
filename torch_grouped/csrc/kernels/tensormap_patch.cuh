// Tensor maps made on the device (sm_90a `tensormap.replace`): a template encoded once on the host
// is copied into device memory and patched per group, where the host does not know the group (its
// sizes live on the device) or where encoding on the host would cost more than the group's matmul.
// The writer releases each map to the tensormap proxy (release_tensor_map); the kernel that loads
// through it acquires it (cute::tma_descriptor_fence_acquire) before its first TMA load.
#pragma once
#include <cuda.h>

#include <cstdint>

namespace torch_grouped::kernels {

__device__ __forceinline__ void copy_tensor_map(CUtensorMap* dst, const CUtensorMap& from) {
  const uint4* src = reinterpret_cast<const uint4*>(&from);
  uint4* out = reinterpret_cast<uint4*>(dst);
#pragma unroll
  for (int i = 0; i < int(sizeof(CUtensorMap) / sizeof(uint4)); ++i) out[i] = src[i];
}

__device__ __forceinline__ void replace_global_address(CUtensorMap* map, const void* base) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(map), "l"(base) : "memory");
#endif
}

// The size of dimension Dim (0: the innermost).
template <int Dim>
__device__ __forceinline__ void replace_global_dim(CUtensorMap* map, uint32_t size) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], %1, %2;" ::"l"(map), "n"(Dim), "r"(size)
               : "memory");
#endif
}

// The stride in bytes of dimension Dim + 1 (the innermost dimension's is the element).
template <int Dim>
__device__ __forceinline__ void replace_global_stride(CUtensorMap* map, int64_t bytes) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], %1, %2;" ::"l"(map), "n"(Dim), "l"(bytes)
               : "memory");
#endif
}

__device__ __forceinline__ void release_tensor_map() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
#endif
}

}  // namespace torch_grouped::kernels
