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

}  // namespace torch_grouped
