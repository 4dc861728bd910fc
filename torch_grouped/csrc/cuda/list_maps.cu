// One thread per tensor map: copy the template, then patch the address, sizes and row stride
// (kernels/tensormap_patch.cuh). The grouped GEMM kernel acquires each map through the tensormap
// proxy before its first TMA load with it.
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "../kernels/dependent_launch.cuh"
#include "../kernels/tensormap_patch.cuh"
#include "list_maps.h"

namespace torch_grouped {
namespace {

__device__ __forceinline__ void patch_map(CUtensorMap* map, const CUtensorMap& from, const void* base,
                                          int64_t inner, int64_t outer, int64_t row_bytes) {
  using namespace kernels;
  copy_tensor_map(map, from);
  replace_global_address(map, base);
  replace_global_dim<0>(map, uint32_t(inner));
  replace_global_dim<1>(map, uint32_t(outer));
  replace_global_dim<2>(map, 1u);
  replace_global_stride<0>(map, row_bytes);
  replace_global_stride<1>(map, row_bytes * outer);
  release_tensor_map();
}

// Thread i patches group i / maps_per_group's A, B or (with output maps) C map.
__device__ __forceinline__ void build_map(const ListMapsArgs& p, const kernels::ListGroup* list, int32_t i) {
  const int32_t per = p.maps_per_group();
  if (i >= per * p.groups) return;
  const int32_t g = i / per, which = i % per;
  const kernels::ListGroup lg = list[g];
  if (which == 2) {  // the output, which K = 0 groups write too (zeros)
    patch_map(p.c_maps + g, p.c_template, lg.c, lg.n, lg.m, lg.ldc * p.out_element_size);
    return;
  }
  if (lg.k == 0) return;  // no loads: the kernel only writes zeros
  if (which == 0) {  // rows of k elements, or M-major rows of m
    patch_map(p.a_maps + g, p.a_template, lg.a, p.a_m_major ? lg.m : lg.k, p.a_m_major ? lg.k : lg.m,
              lg.lda * p.element_size);
  } else if (p.b_k_major) {
    patch_map(p.b_maps + g, p.b_template, lg.b, lg.k, lg.n, lg.ldb * p.element_size);
  } else {
    patch_map(p.b_maps + g, p.b_template, lg.b, lg.n, lg.k, lg.ldb * p.element_size);
  }
}

__global__ void build_list_maps_kernel(const __grid_constant__ ListMapsArgs p) {
  kernels::allow_dependent_launch();  // the matmul kernel after it waits for the maps
  build_map(p, p.list, blockIdx.x * blockDim.x + threadIdx.x);
}

// The table lies in the kernel's parameters, which the constant cache serves one address at a
// time (SASS: LDC c[0x0][R + ...]): a warp whose lanes read 16 groups' fields waits for 16 reads
// of each. So here one warp builds one map, its lane 0 reading the group alone, and the copy to
// `dst` deals its 16-byte words over all warps (word w to lane w / warps of warp w % warps: a few
// words a warp). With one thread a map and a word a thread, the 64-group call's upload took 5.8
// µs of GPU time against 2.4 for 4 groups (H200, session 54).
constexpr uint32_t kWordsPerWarp = 4;

template <size_t N>
__global__ void upload_list_maps_kernel(const __grid_constant__ ListMapsArgs p, const __grid_constant__ InlineUpload<N> up,
                                        uint8_t* __restrict__ dst) {
  kernels::allow_dependent_launch();  // the matmul kernel after it waits for the maps
  const uint32_t lane = threadIdx.x % 32, warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint32_t warps = gridDim.x * blockDim.x / 32;
  const uint4* words = reinterpret_cast<const uint4*>(up.data);
  for (uint32_t w = lane * warps + warp; w < up.bytes / 16; w += 32 * warps) reinterpret_cast<uint4*>(dst)[w] = words[w];
  if (lane == 0) build_map(p, reinterpret_cast<const kernels::ListGroup*>(up.data), static_cast<int32_t>(warp));
}

constexpr int kThreads = 128;

}  // namespace

void build_list_tensor_maps(const ListMapsArgs& args, cudaStream_t stream) {
  const int blocks = (args.maps_per_group() * args.groups + kThreads - 1) / kThreads;
  build_list_maps_kernel<<<blocks, kThreads, 0, stream>>>(args);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <size_t N>
void upload_and_build_list_tensor_maps(const ListMapsArgs& args, const InlineUpload<N>& upload, uint8_t* dst,
                                       cudaStream_t stream) {
  TORCH_INTERNAL_ASSERT(args.list == nullptr && upload.bytes % 16 == 0 && upload.bytes <= N);
  // a warp per map, and at least one per kWordsPerWarp words of the table
  const int warps = std::max<int>(args.maps_per_group() * args.groups, (upload.bytes / 16 + kWordsPerWarp - 1) / kWordsPerWarp);
  const int blocks = (warps * 32 + kThreads - 1) / kThreads;
  upload_list_maps_kernel<N><<<std::max(blocks, 1), kThreads, 0, stream>>>(args, upload, dst);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Every size of ListUploadSizes.
template void upload_and_build_list_tensor_maps(const ListMapsArgs&, const InlineUpload<4 << 10>&, uint8_t*, cudaStream_t);
template void upload_and_build_list_tensor_maps(const ListMapsArgs&, const InlineUpload<8 << 10>&, uint8_t*, cudaStream_t);
template void upload_and_build_list_tensor_maps(const ListMapsArgs&, const InlineUpload<16 << 10>&, uint8_t*, cudaStream_t);
template void upload_and_build_list_tensor_maps(const ListMapsArgs&, const InlineUpload<28 << 10>&, uint8_t*, cudaStream_t);

}  // namespace torch_grouped
