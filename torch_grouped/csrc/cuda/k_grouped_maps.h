// The per-group TMA maps of grouped_mm's K-grouped form (kernels::GroupedForm::RaggedK), built on
// the device from `offs` (csrc/cuda/k_grouped_maps.cu): the group sizes never reach the host, so
// the call needs no synchronisation and replays in a CUDA graph with new offsets.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace torch_grouped {

struct KGroupedMapsArgs {
  // A as [1, K, M] and B as [1, K, N] over all of K: each group's map is its template with K
  // (dimension 1) cut at the group's end, so that TMA zero-fills the K block that crosses it.
  CUtensorMap a_template;
  CUtensorMap b_template;
  const int32_t* offs;  // cumulative group ends, device memory
  CUtensorMap* a_maps;  // out: one per group, 128-byte aligned
  CUtensorMap* b_maps;
  int32_t groups;
  int64_t k;  // total K: the offsets are clamped into it as the kernel clamps them
};

void build_k_grouped_tensor_maps(const KGroupedMapsArgs& args, cudaStream_t stream);

}  // namespace torch_grouped
