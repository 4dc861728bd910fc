// Programmatic dependent launch (sm_90): a kernel launched with the programmatic-serialization
// attribute may start while the kernel before it in the stream is still finishing, once every CTA
// of that kernel has allowed it (allow_dependent_launch) or exited; it must wait for that kernel's
// completion and memory (wait_for_prior_grid) before it touches global memory. The matmul kernels
// launch so (grouped_gemm_sm90.cuh: their prologue and the launch itself overlap an operand copy's
// tail); the kernels in front of them allow it as they start. Without the attribute both are no-ops.
#pragma once

namespace torch_grouped::kernels {

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
