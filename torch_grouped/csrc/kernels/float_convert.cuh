// fp32 to an output type, for the kernels that store fp32 accumulators (torch builds with the
// implicit half conversions switched off, so every conversion is spelled out), and the stores
// those kernels share.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace torch_grouped::kernels {

template <class Out>
__device__ __forceinline__ Out from_float(float x) {
  if constexpr (std::is_same_v<Out, float>) {
    return x;
  } else if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    return __float2bfloat16_rn(x);
  } else {
    return __float2half_rn(x);
  }
}

// Two adjacent accumulators as two output elements, in one 32-bit (fp32: 64-bit) store.
template <class Out>
__device__ __forceinline__ void store_pair(Out* dst, float x, float y) {
  if constexpr (std::is_same_v<Out, float>) {
    *reinterpret_cast<float2*>(dst) = make_float2(x, y);
  } else if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(x, y);
  } else {
    *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(x, y);
  }
}

// One 16-byte global store. Written out because NVVM split the plain uint4 store of the Rank2K
// epilogue into four 32-bit stores (it lost the pointer's alignment).
__device__ __forceinline__ void store_global_16(void* dst, uint4 v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(dst)), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

}  // namespace torch_grouped::kernels
