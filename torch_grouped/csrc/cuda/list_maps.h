// Builds the per-group TMA maps of the list API on the device, from template maps encoded once
// on the host (csrc/cuda/list_maps.cu).
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include "../kernels/grouped_gemm_args.h"

namespace torch_grouped {

struct ListMapsArgs {
  CUtensorMap a_template;  // dtype, boxes and swizzle of every group's A map
  CUtensorMap b_template;
  const kernels::ListGroup* list;
  CUtensorMap* a_maps;  // out: one per group, 128-byte aligned
  CUtensorMap* b_maps;
  int32_t groups;
  int32_t element_size;
  bool b_k_major;
};

void build_list_tensor_maps(const ListMapsArgs& args, cudaStream_t stream);

// K-grouped grouped_mm: per group, the maps of A ([K, M] as TMA sees it) and B with their K
// extent cut at the group's end offs[g] (read on the device), so that TMA zero-fills the columns
// of the next group that a group's last K block covers.
struct KGroupedMapsArgs {
  CUtensorMap a_template;  // the whole A, K innermost (dimension 0)
  CUtensorMap b_template;  // the whole B, K in dimension 0 (K-major) or 1 (N-major)
  const int32_t* offs;
  int64_t k_total;
  CUtensorMap* a_maps;  // out: one per group, 128-byte aligned
  CUtensorMap* b_maps;
  int32_t groups;
  bool b_k_major;
};

void build_k_grouped_tensor_maps(const KGroupedMapsArgs& args, cudaStream_t stream);

}  // namespace torch_grouped
