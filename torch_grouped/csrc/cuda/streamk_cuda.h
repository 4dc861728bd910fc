#pragma once
#include <ATen/ATen.h>

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "../sched/streamk_model.h"

namespace torch_grouped {

// streamk_mm on the GPU: our Stream-K kernel for bf16/fp16 on Hopper, cuBLAS otherwise.
at::Tensor streamk_mm_cuda(const at::Tensor& a, const at::Tensor& b, const std::string& decomposition,
                           int64_t splits, int64_t grid);

// Shared with syr2k's Stream-K path: the Stream-K model fitted for this device (else the
// defaults), and the fixup's tile counters for a launch on `stream` (zero at launch, left at zero
// by the kernel; a capture's fresh buffer is kept in `keep`).
const sched::StreamKModel& cached_model(int device);
int32_t* tile_counters(const at::Device& device, cudaStream_t stream, int64_t count, std::vector<at::Tensor>& keep);

}  // namespace torch_grouped
