// Programmatic dependent launch (sm_90): a kernel launched with the programmatic-serialization
// attribute may start while the kernel before it in the stream is still finishing, once every CTA
// of that kernel has allowed it (allow_dependent_launch) or exited; it must wait for that kernel's
// completion and memory (wait_for_prior_grid) before it touches global memory. The matmul kernels
// launch so (grouped_gemm_sm90.cuh: their prologue and the launch itself overlap an operand copy's
// tail), and so does streamk_mm's separate fixup after the matmul (cuda/streamk_reduce.cu); the
// kernels in front of them allow it as they start. Without the attribute both are no-ops.
#pragma once
#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

namespace torch_grouped::kernels {

// Whether those kernels launch as programmatic dependents of the kernel before them:
// TORCH_GROUPED_PDL=0 turns it off (A/B runs); unset or 1: on. Read once.
inline bool dependent_launch_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("TORCH_GROUPED_PDL");
    if (v == nullptr || *v == '\0') return true;
    const std::string value(v);
    TORCH_CHECK_VALUE(value == "0" || value == "1", "TORCH_GROUPED_PDL must be 0 or 1; got '", value, "'");
    return value == "1";
  }();
  return enabled;
}

// The attribute of such a launch, for cudaLaunchKernelEx's config.attrs.
inline cudaLaunchAttribute dependent_launch_attribute() {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  return attribute;
}

__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace torch_grouped::kernels
