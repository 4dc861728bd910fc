// The per-dtype switches between our kernels and cuBLAS (TORCH_GROUPED_FP32_KERNELS,
// TORCH_GROUPED_FP64_KERNELS), read from the environment on every call so that tests and
// benchmarks can switch: unset or empty, the op's measured rule; "1", our kernels always; "0",
// cuBLAS always; any other value is an error.
#pragma once

namespace torch_grouped {

enum class KernelSwitch { Measured, Never, Always };

KernelSwitch kernel_switch(const char* variable);

// Whether a call takes our kernel: as the switch says, or as the op's measured `rule` says.
inline bool on_our_kernel(KernelSwitch s, bool rule) {
  return s == KernelSwitch::Always || (s == KernelSwitch::Measured && rule);
}

}  // namespace torch_grouped
