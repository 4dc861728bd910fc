// CUDA path of permute_copy and layout_transform: plan on the host (common/permute_plan.h), then
// one launch of the kernel that fits (kernels/permute.cuh), on the current stream.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdlib>
#include <string>
#include <type_traits>

#include "../common/checks.h"
#include "../common/layout.h"
#include "../kernels/permute.cuh"
#include "device_info.h"
#include "layout_cuda.h"

namespace torch_grouped {
namespace {

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

template <int N>
using Width = std::integral_constant<int, N>;

// Calls f(Width<w>) for the vector widths a kernel is built for: 16 bytes, 4 bytes, 1 element.
template <typename T, typename F>
void with_width(int w, F&& f) {
  constexpr int wide = 16 / sizeof(T), narrow = 4 / sizeof(T);
  if constexpr (wide > 1) {
    if (w == wide) return f(Width<wide>{});
  }
  if constexpr (narrow > 1) {
    if (w == narrow) return f(Width<narrow>{});
  }
  TORCH_INTERNAL_ASSERT(w == 1, "permute_copy: no kernel for vector width ", w);
  f(Width<1>{});
}

// The widest of those widths that `ok` accepts.
template <typename T, typename Ok>
int widest(Ok&& ok) {
  for (int w : {16 / static_cast<int>(sizeof(T)), 4 / static_cast<int>(sizeof(T))})
    if (w > 1 && ok(w)) return w;
  return 1;
}

bool aligned(const void* ptr, int64_t bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; }

// Elements per box: 16 KB of tile. A block keeps one box of loads in flight while it stores the
// previous one, so the box size sets the bytes in flight per SM (8 KB boxes measured at ~50% of
// copy bandwidth on an H100: latency-bound).
template <typename T>
constexpr int tile_elems() {
  return 16384 / static_cast<int>(sizeof(T));
}

// Tuning knob for benchmarks: TORCH_GROUPED_PERMUTE_KERNEL=box keeps the tile kernel even where
// no vector access fits (default: the gather kernel then).
const std::string& forced_kernel() {
  static const std::string value = [] {
    const char* v = std::getenv("TORCH_GROUPED_PERMUTE_KERNEL");
    return std::string(v ? v : "");
  }();
  return value;
}

template <typename T>
void launch_typed(const void* in_raw, void* out_raw, const PermuteShape& shape, PermuteKind kind) {
  const T* in = static_cast<const T*>(in_raw);
  T* out = static_cast<T*>(out_raw);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const int64_t max_blocks = int64_t{multiprocessor_count(c10::cuda::current_device())} * 8;
  constexpr int T_ = kernels::kPermuteThreads;
  if (kind == PermuteKind::Gather) {
    const int64_t blocks = std::min(max_blocks, (shape.numel + T_ - 1) / T_);
    kernels::gather_copy<T><<<blocks, T_, 0, stream>>>(in, out, shape);
  } else if (kind == PermuteKind::Rows) {
    const int v = widest<T>([&](int w) {
      // A rank-0 shape is one element: no vector fits it (a vector would run past the output).
      bool ok = aligned(in, w * sizeof(T)) && shape.rank > 0 && shape.size[shape.rank - 1] % w == 0;
      for (int d = 0; d + 1 < shape.rank; ++d) ok &= shape.in_stride[d] % w == 0;
      return ok;
    });
    constexpr int unroll = 4;
    with_width<T>(v, [&](auto V) {
      const RowsPlan p = plan_rows(shape, int64_t{T_} * V * unroll);
      const int64_t blocks = std::min(max_blocks, p.rows * p.chunks_per_row);
      kernels::row_copy<T, V, unroll><<<blocks, T_, 0, stream>>>(in, out, p);
    });
  } else {
    constexpr int tile = tile_elems<T>();
    const BoxPlan p = plan_box(shape, sizeof(T), tile);
    TORCH_INTERNAL_ASSERT(p.box_elems <= tile, "permute_copy: box of ", p.box_elems, " elements");
    const int in_axis = p.axis[0], out_axis = shape.rank - 1;
    int out_slot = 0;
    for (int k = 0; k < p.count; ++k) out_slot = p.axis[k] == out_axis ? k : out_slot;
    const int vin = widest<T>([&](int w) {
      bool ok = aligned(in, w * sizeof(T)) && shape.size[in_axis] % w == 0 && (1 << p.log2_extent[0]) % w == 0;
      for (int d = 0; d < shape.rank; ++d) ok &= d == in_axis || shape.in_stride[d] % w == 0;
      return ok;
    });
    const int vout = widest<T>([&](int w) {
      return aligned(out, w * sizeof(T)) && shape.size[out_axis] % w == 0 && (1 << p.log2_extent[out_slot]) % w == 0;
    });
    if (vin == 1 && vout == 1 && forced_kernel() != "box") {
      // No vector fits on either side (odd inner sizes, as in (3, H, W, 7) → (7, H, W, 3)):
      // element-wise tiles only add shared-memory traffic to the same scalar accesses.
      return launch_typed<T>(in_raw, out_raw, shape, PermuteKind::Gather);
    }
    const int64_t blocks = std::min(max_blocks, p.total_boxes);
    const size_t smem = static_cast<size_t>(p.smem_elems) * sizeof(T);
    with_width<T>(vin, [&](auto VIN) {
      with_width<T>(vout, [&](auto VOUT) {
        kernels::box_copy<T, tile, VIN, VOUT><<<blocks, T_, smem, stream>>>(in, out, p);
      });
    });
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

at::Tensor permute_copy_cuda(const at::Tensor& x, at::IntArrayRef dims) {
  const std::vector<int64_t> perm = check_permutation(x, dims);
  std::vector<int64_t> sizes;
  for (int64_t d : perm) sizes.push_back(x.size(d));
  at::Tensor out = at::empty(sizes, x.options().memory_format(at::MemoryFormat::Contiguous));
  const PermuteShape shape = simplify_permutation(static_cast<int>(x.dim()), x.sizes().data(),
                                                  x.strides().data(), perm.data());
  const PermuteKind kind = choose_permute_kind(shape, x.element_size());
  if (kind == PermuteKind::Empty) return out;
  const c10::cuda::CUDAGuard guard(x.device());
  const void* in = x.const_data_ptr();  // includes the storage offset
  switch (x.element_size()) {
    case 1: launch_typed<uint8_t>(in, out.data_ptr(), shape, kind); break;
    case 2: launch_typed<uint16_t>(in, out.data_ptr(), shape, kind); break;
    case 4: launch_typed<uint32_t>(in, out.data_ptr(), shape, kind); break;
    case 8: launch_typed<uint64_t>(in, out.data_ptr(), shape, kind); break;
    case 16: launch_typed<Bytes16>(in, out.data_ptr(), shape, kind); break;
    default: TORCH_CHECK(false, "permute_copy: element size ", x.element_size(), " is not supported");
  }
  return out;
}

at::Tensor layout_transform_cuda(const at::Tensor& x, const std::string& src, const std::string& dst) {
  return layout_transform_with(x, src, dst, &permute_copy_cuda);
}

}  // namespace torch_grouped
