// Host side of permute_copy's pair_swap_copy: applicability, the plan, the launch.
#include "permute_pair.h"

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>

#include "../kernels/permute_pair.cuh"
#include "device_info.h"
#include "element_size_dispatch.h"
#include "permute_batch.h"

namespace torch_grouped {
namespace {

constexpr int kTileBytes = 16384;
constexpr int kBlocksPerSm = 6;  // resident blocks of 256 threads and two tiles of at most 16 KB each

// The chunk C (positions of M per block trip; a multiple of 16, at most `largest`, at least half
// of it) whose trips spread most evenly over `slots` resident blocks: the fewest positions in the
// busiest block, the larger chunk on a tie. (3, 1024, 1024, 7) in chunks of the largest C, 384:
// 2731 chunks on 1056 blocks, whose third trip left 41% of the blocks idle; C = 336: 3121 chunks,
// three trips for 96% of the blocks.
int64_t balanced_chunk(int64_t m, int64_t batch, int64_t largest, int64_t slots) {
  int64_t best = largest, best_cost = -1;
  for (int64_t c = largest; c >= 16 && 2 * c >= largest; c -= 16) {
    const int64_t units = batch * ((m + c - 1) / c), cost = (units + slots - 1) / slots * c;
    if (best_cost < 0 || cost < best_cost) best = c, best_cost = cost;
  }
  return best;
}

template <int E>
bool launch(const PermuteShape& s, const void* in, void* out, cudaStream_t stream) {
  if constexpr (E > 4) {
    return false;  // (a short axis of 8-byte elements holds one element: nothing to pair)
  } else {
    constexpr int V = 16 / E;
    if (s.rank < 3 || reinterpret_cast<uintptr_t>(in) % 16 || reinterpret_cast<uintptr_t>(out) % 16) return false;
    const int Q = s.rank - 1, M = s.rank - 2, P = s.rank - 3;
    const int64_t p = s.size[P], q = s.size[Q], m = s.size[M];
    if (s.in_stride[P] != 1 || s.in_stride[M] != p || p < 2 || q < 2 || p * E >= 16 || q * E >= 16) return false;
    if (m % 16 || s.in_stride[Q] % V || s.out_stride[P] % V) return false;
    kernels::PairSwapPlan plan;
    plan.p = static_cast<int32_t>(p), plan.q = static_cast<int32_t>(q), plan.m = m;
    plan.q_in_stride = s.in_stride[Q];
    plan.p_out_stride = s.out_stride[P];
    int64_t batch = 1;
    for (int d = 0; d < P; ++d) batch *= s.size[d];
    const int64_t slots = int64_t{multiprocessor_count(c10::cuda::current_device())} * kBlocksPerSm;
    plan.chunk = static_cast<int32_t>(
        balanced_chunk(m, batch, std::max<int64_t>(16, kTileBytes / (p * q * E) / 16 * 16), slots));
    int64_t units = (m + plan.chunk - 1) / plan.chunk;
    if (units >= (int64_t{1} << 31)) return false;
    plan.chunks = kernels::FastDivmod(static_cast<uint32_t>(units));
    // (every axis before P is a batch axis: bit d of the mask skips axis d)
    if (!fill_batch_axes(s, (1u << P) | (1u << M) | (1u << Q), V, units, plan)) return false;
    plan.units = static_cast<uint32_t>(units);
    using T = kernels::BytesOf<E>;
    const size_t smem = 2 * static_cast<size_t>(plan.chunk) * p * q * E;  // two tiles
    const int64_t blocks = grid_stride_blocks(units, kBlocksPerSm);
    kernels::pair_swap_copy<T><<<static_cast<unsigned>(blocks), kernels::kPermuteThreads, smem, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), plan);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }
}

}  // namespace

bool launch_pair_swap(int64_t element_size, const PermuteShape& s, const void* in, void* out, cudaStream_t stream) {
  return with_element_size(element_size, [&](auto E) { return launch<decltype(E)::value>(s, in, out, stream); });
}

}  // namespace torch_grouped
