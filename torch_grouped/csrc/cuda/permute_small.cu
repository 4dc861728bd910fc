// Host side of permute_copy's small-axis kernel: which axis is short, the batch axes, the launch.
#include "permute_small.h"

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>
#include <type_traits>

#include "../kernels/permute_small.cuh"
#include "device_info.h"
#include "element_size_dispatch.h"
#include "permute_batch.h"

namespace torch_grouped {
namespace {

// The longest short axis taken: 16 int8 elements (a 256-byte block per thread) spilled the
// transposed vectors to local memory (ptxas: 32 bytes of spills at 80 registers); 8 did not.
constexpr int kMaxShort = 8;

// Calls f(integral_constant<S>) for S = n, from 2 to min(V, kMaxShort) (3 included: RGB).
template <int V, int S = 2, typename F>
void with_short_size(int64_t n, F&& f) {
  if constexpr (S <= V && S <= kMaxShort) {
    if (n == S) return f(std::integral_constant<int, S>{});
    with_short_size<V, S + 1>(n, f);
  }
}

template <int E>
bool launch(const PermuteShape& s, const SmallAxisPadding* pad, const void* in, void* out, cudaStream_t stream) {
  constexpr int V = 16 / E;
  if (s.rank < 2 || reinterpret_cast<uintptr_t>(in) % 16 || reinterpret_cast<uintptr_t>(out) % 16) return false;
  const int o = s.rank - 1;
  int i = -1;
  for (int d = 0; d < s.rank; ++d)
    if (s.in_stride[d] == 1) i = d;
  if (i < 0 || i == o) return false;
  // planes in: S = o, interleaved with L = i in the output; planes out: S = i, interleaved with
  // L = o in the input. The interleaved side's (L, S) run is contiguous (L's stride there is S),
  // or S is one whole vector and L's stride there a multiple of one.
  const auto interleaves = [&](int64_t short_size, int64_t run) {
    return run == short_size || (short_size == V && run % V == 0);
  };
  bool planes_in;
  if (s.size[o] * E <= 16 && interleaves(s.size[o], s.out_stride[i])) planes_in = true;
  else if (s.size[i] * E <= 16 && interleaves(s.size[i], s.in_stride[o])) planes_in = false;
  else return false;
  const int S = planes_in ? o : i, L = planes_in ? i : o;
  kernels::SmallAxisPlan p;
  if (pad != nullptr) {
    // the padded axis is split into (pad->axis, S): a batch axis outside the plane
    if (!planes_in || pad->axis == L || pad->axis == S) return false;
    p.padded = true;
    p.pad_limit = pad->limit;
    p.pad_batch_axis = -1;
    if (pad->axis >= 0) {
      p.pad_batch_axis = 0;  // its index among the batch axes (fill_batch_axes keeps the order)
      for (int d = 0; d < pad->axis; ++d) p.pad_batch_axis += d != S && d != L;
    }
  }
  const int64_t short_size = s.size[S];
  if (short_size < 2 || short_size > kMaxShort || short_size > V || s.size[L] % V) return false;
  p.plane = planes_in ? s.in_stride[S] : s.out_stride[S];
  p.run = planes_in ? s.out_stride[L] : s.in_stride[L];
  if (p.plane % V) return false;
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  int64_t units = s.size[L] / V;
  if (units > kMax) return false;
  p.blocks = kernels::FastDivmod(static_cast<uint32_t>(units));
  if (!fill_batch_axes(s, (1u << S) | (1u << L), V, units, p)) return false;
  p.units = static_cast<uint32_t>(units);
  using T = kernels::BytesOf<E>;
  constexpr int threads = kernels::kPermuteThreads;
  const int64_t blocks = grid_stride_blocks((units + threads - 1) / threads);
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  with_short_size<V>(short_size, [&](auto N) {
    if (planes_in) kernels::small_axis_copy<T, N, true><<<blocks, threads, 0, stream>>>(src, dst, p);
    else kernels::small_axis_copy<T, N, false><<<blocks, threads, 0, stream>>>(src, dst, p);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return true;
}

}  // namespace

bool launch_small_axis(int64_t element_size, const PermuteShape& s, const void* in, void* out, cudaStream_t stream) {
  // (16-byte elements: no two fit a vector, launch<16> declines)
  return with_element_size(element_size,
                           [&](auto E) { return launch<decltype(E)::value>(s, nullptr, in, out, stream); });
}

bool launch_small_axis_padded(int64_t element_size, const PermuteShape& s, const SmallAxisPadding& pad, const void* in,
                              void* out, cudaStream_t stream) {
  return with_element_size(element_size, [&](auto E) { return launch<decltype(E)::value>(s, &pad, in, out, stream); });
}

}  // namespace torch_grouped
