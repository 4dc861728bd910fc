// Host side of permute_copy's TMA variant: the 5-D input map of kernels/permute_tma.cuh, the
// launch. The map is encoded per call (host only, no device work: CUDA-graph capturable).
#include "permute_tma.h"

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>
#include <atomic>

#include "../kernels/permute_tma.cuh"
#include "device_info.h"
#include "element_size_dispatch.h"
#include "tma_map.h"

namespace torch_grouped {
namespace {

// The plan with exactly two batch axes (size-1 axes in front), or false where TMA cannot take it.
bool pad_batch(const kernels::Tile2dPlan& p, kernels::Tile2dPlan& q) {
  if (p.batch > 2) return false;
  q = p;
  q.batch = 2;
  const int shift = 2 - p.batch;
  for (int k = 1; k >= 0; --k) {
    if (k >= shift) {
      q.batch_size[k] = p.batch_size[k - shift];
      q.batch_in[k] = p.batch_in[k - shift];
      q.batch_out[k] = p.batch_out[k - shift];
    } else {
      q.batch_size[k] = kernels::FastDivmod(1);
      q.batch_in[k] = q.batch_out[k] = 0;
    }
  }
  return true;
}

// The map of tile2d_tma_copy (see there): d0 = i in bytes, d1 = o / V, d2 = o % V, d3 and d4 the
// inner and outer batch axes.
template <int E>
bool encode_map(const void* in, const kernels::Tile2dPlan& q, CUtensorMap& map) {
  using Tr = kernels::Tile2dTraits<kernels::BytesOf<E>>;
  constexpr int64_t kStrideLimit = int64_t{1} << 40, kCoordLimit = int64_t{1} << 31;
  const int64_t row_bytes = int64_t{q.size_i} * E;
  if (row_bytes >= kCoordLimit || q.stride_o_in == 0) return false;
  // A size-1 (padding) batch axis gets any valid stride; a real one must not be a broadcast.
  int64_t batch_stride[2];
  for (int k = 0; k < 2; ++k) {
    if (q.batch_size[k].d > 1 && q.batch_in[k] == 0) return false;
    batch_stride[k] = q.batch_size[k].d > 1 ? q.batch_in[k] * E : 16;
  }
  const cuuint64_t dims[5] = {cuuint64_t(row_bytes), cuuint64_t(q.size_o / Tr::V), cuuint64_t(Tr::V),
                              cuuint64_t(q.batch_size[1].d), cuuint64_t(q.batch_size[0].d)};
  const cuuint64_t strides[4] = {cuuint64_t(q.stride_o_in * 16), cuuint64_t(q.stride_o_in * E),
                                 cuuint64_t(batch_stride[1]), cuuint64_t(batch_stride[0])};
  for (cuuint64_t s : strides)
    if (s % 16 != 0 || s >= cuuint64_t(kStrideLimit)) return false;
  const cuuint32_t box[5] = {128, cuuint32_t(Tr::TO / Tr::V), cuuint32_t(Tr::V), 1, 1};
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 5, const_cast<void*>(in), dims,
                                          strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

// Resident blocks per SM of tile2d_tma_copy<T> on `device` (raising its shared-memory limit
// first), asked once per device.
template <typename T>
int blocks_per_sm(int device) {
  static std::atomic<int> cache[64];
  const int slot = device >= 0 && device < 64 ? device : 0;
  int n = cache[slot].load(std::memory_order_relaxed);
  if (n == 0) {
    C10_CUDA_CHECK(cudaFuncSetAttribute(kernels::tile2d_tma_copy<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        kernels::kTmaSmemBytes));
    C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernels::tile2d_tma_copy<T>,
                                                                 kernels::kPermuteThreads, kernels::kTmaSmemBytes));
    n = std::max(n, 1);
    cache[slot].store(n, std::memory_order_relaxed);
  }
  return n;
}

template <int E>
bool launch(const void* in, void* out, const kernels::Tile2dPlan& p, cudaStream_t stream) {
  using T = kernels::BytesOf<E>;
  kernels::Tile2dTmaPlan P;
  if (!pad_batch(p, P.p) || !encode_map<E>(in, P.p, P.map)) return false;
  const int device = c10::cuda::current_device();
  const int64_t grid = std::min<int64_t>(P.p.total_tiles, int64_t{multiprocessor_count(device)} * blocks_per_sm<T>(device));
  kernels::tile2d_tma_copy<T><<<grid, kernels::kPermuteThreads, kernels::kTmaSmemBytes, stream>>>(static_cast<T*>(out), P);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return true;
}

}  // namespace

bool launch_tile2d_tma(int64_t element_size, const void* in, void* out, const kernels::Tile2dPlan& p,
                       cudaStream_t stream) {
  return with_element_size(element_size, [&](auto E) { return launch<decltype(E)::value>(in, out, p, stream); });
}

}  // namespace torch_grouped
