// One thread per tensor map: the template with its K extent cut at the group's end
// (kernels/tensormap_patch.cuh); the group's start is the kernel's K coordinate (k_origin).
#include <c10/cuda/CUDAException.h>

#include "../kernels/dependent_launch.cuh"
#include "../kernels/grouped_gemm_args.h"
#include "../kernels/tensormap_patch.cuh"
#include "k_grouped_maps.h"

namespace torch_grouped {
namespace {

__global__ void build_k_grouped_maps_kernel(const __grid_constant__ KGroupedMapsArgs p) {
  kernels::allow_dependent_launch();  // the matmul kernel after it waits for the maps
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 2 * p.groups) return;
  const int32_t g = i / 2;
  const kernels::RaggedRange r =
      kernels::ragged_range(g, p.groups, p.k, [&](int32_t j) { return int64_t(__ldg(p.offs + j)); });
  CUtensorMap* map = (i % 2 == 0 ? p.a_maps : p.b_maps) + g;
  kernels::copy_tensor_map(map, i % 2 == 0 ? p.a_template : p.b_template);
  // An empty group loads nothing; its map keeps a valid (non-zero) extent all the same.
  kernels::replace_global_dim<1>(map, uint32_t(r.end > 0 ? r.end : 1));
  kernels::release_tensor_map();
}

constexpr int kThreads = 128;

}  // namespace

void build_k_grouped_tensor_maps(const KGroupedMapsArgs& args, cudaStream_t stream) {
  const int blocks = (2 * args.groups + kThreads - 1) / kThreads;
  build_k_grouped_maps_kernel<<<blocks, kThreads, 0, stream>>>(args);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace torch_grouped
