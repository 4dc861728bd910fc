// fp32 to an output type, for the kernels that store fp32 accumulators, and back (torch builds with
// the implicit half conversions switched off, so every conversion is spelled out).
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

template <class In>
__device__ __forceinline__ float to_float(In x) {
  if constexpr (std::is_same_v<In, float>) {
    return x;
  } else if constexpr (std::is_same_v<In, __nv_bfloat16>) {
    return __bfloat162float(x);
  } else {
    return __half2float(x);
  }
}

}  // namespace torch_grouped::kernels
