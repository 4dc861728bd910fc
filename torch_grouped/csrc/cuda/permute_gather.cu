// Host side of permute_copy's gather_fast_copy: the plan (sizes as multiply-shift divisors) and the launch.
#include "permute_gather.h"

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>

#include "../kernels/permute_gather.cuh"
#include "device_info.h"
#include "element_size_dispatch.h"

namespace torch_grouped {
namespace {

template <int E>
bool launch(const PermuteShape& s, const void* in, void* out, cudaStream_t stream) {
  if (s.rank == 0 || s.numel >= (int64_t{1} << 31)) return false;
  if (reinterpret_cast<uintptr_t>(in) % E || reinterpret_cast<uintptr_t>(out) % E) return false;
  kernels::GatherPlan p;
  p.rank = s.rank;
  for (int d = 0; d < s.rank; ++d) {
    p.size[d] = kernels::FastDivmod(static_cast<uint32_t>(s.size[d]));
    p.in_stride[d] = s.in_stride[d];
  }
  p.numel = static_cast<uint32_t>(s.numel);
  using T = kernels::BytesOf<E>;
  constexpr int64_t per_block = int64_t{kernels::kPermuteThreads} * kernels::kGatherUnroll;
  const int64_t blocks = grid_stride_blocks((s.numel + per_block - 1) / per_block);
  kernels::gather_fast_copy<T><<<blocks, kernels::kPermuteThreads, 0, stream>>>(static_cast<const T*>(in),
                                                                                 static_cast<T*>(out), p);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return true;
}

}  // namespace

bool launch_gather_fast(int64_t element_size, const PermuteShape& s, const void* in, void* out, cudaStream_t stream) {
  return with_element_size(element_size, [&](auto E) { return launch<decltype(E)::value>(s, in, out, stream); });
}

}  // namespace torch_grouped
