// gather_fast_copy (part of TORCH_GROUPED_PERMUTE_KERNEL=next): one element per thread and step,
// the output written in order, the input offset from the output index's coordinates. Unlike
// gather_copy (kernels/permute.cuh), which divides with 64-bit `/` and `%` per element and axis,
// the coordinates come from multiply-shift divisions (FastDivmod: 32-bit, so numel < 2^31), and
// each thread keeps kGatherUnroll loads in flight. Used for the gather kind and for row copies of
// 16-byte elements (a row of widened elements is a gather of whole vectors).
#pragma once
#include "permute.cuh"

namespace torch_grouped::kernels {

constexpr int kGatherUnroll = 4;

struct GatherPlan {
  int rank = 0;  // axes in output order, the last fastest
  FastDivmod size[kPermuteMaxRank];
  int64_t in_stride[kPermuteMaxRank];
  uint32_t numel = 0;  // < 2^31
};

template <typename T>
__global__ void __launch_bounds__(kPermuteThreads) gather_fast_copy(const T* __restrict__ in, T* __restrict__ out,
                                                                    const __grid_constant__ GatherPlan p) {
  constexpr uint32_t kBlockElems = kPermuteThreads * kGatherUnroll;
  for (uint32_t first = blockIdx.x * kBlockElems + threadIdx.x; first < p.numel; first += gridDim.x * kBlockElems) {
    T v[kGatherUnroll];
#pragma unroll
    for (int u = 0; u < kGatherUnroll; ++u) {
      const uint32_t n = first + u * kPermuteThreads;
      if (n >= p.numel) break;
      int64_t src = 0, unused = 0;
      add_batch_offsets(n, p.rank, p.size, p.in_stride, p.in_stride, src, unused);
      v[u] = in[src];
    }
#pragma unroll
    for (int u = 0; u < kGatherUnroll; ++u) {
      const uint32_t n = first + u * kPermuteThreads;
      if (n < p.numel) out[n] = v[u];
    }
  }
}

}  // namespace torch_grouped::kernels
