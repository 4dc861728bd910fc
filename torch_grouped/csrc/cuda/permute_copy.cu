// CUDA path of permute_copy and layout_transform: plan on the host (common/permute_plan.h), then
// one launch of the kernel that fits (kernels/permute.cuh), on the current stream; and the same
// copy into a caller's buffer on its stream (permute_into.h: other ops' staged operands).
#include <ATen/ATen.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "../common/checks.h"
#include "../common/layout.h"
#include "../kernels/permute.cuh"
#include "device_info.h"
#include "element_size_dispatch.h"
#include "layout_cuda.h"
#include "permute_batch.h"
#include "permute_gather.h"
#include "permute_into.h"
#include "permute_pair.h"
#include "permute_small.h"
#include "permute_tma.h"

namespace torch_grouped {
namespace {

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

// Kernel variants, read once per call (a getenv is cheap) so that a benchmark or a test can switch
// in one process (TORCH_GROUPED_PERMUTE_KERNEL). Unset (or "next"), the default: wider elements
// where whole runs move (widen_elements), the small-axis kernel (kernels/permute_small.cuh) where
// one axis of a transpose holds at most 16 bytes, tile2d's tiles loaded by TMA
// (kernels/permute_tma.cuh) where TMA can address the input, gathers and rows of 16-byte
// elements by gather_fast_copy (kernels/permute_gather.cuh), the box kernel elsewhere; it was
// faster than or equal to every other variant on every benchmark case (run 22, H100).
// The others, kept for comparison: =tma (no widening, small-axis or fast gather), =tile2d (the
// same with tile2d's own loads), =legacy (the box kernel, the plain gather where no vector access
// fits), =box (the box kernel even there).
enum class Variant { Next, Tma, Tile2d, Legacy, Box };

Variant forced_variant() {
  const char* v = std::getenv("TORCH_GROUPED_PERMUTE_KERNEL");
  if (v == nullptr || *v == '\0') return Variant::Next;
  static constexpr std::pair<const char*, Variant> kNames[] = {
      {"next", Variant::Next}, {"tma", Variant::Tma}, {"tile2d", Variant::Tile2d},
      {"legacy", Variant::Legacy}, {"box", Variant::Box}};
  for (const auto& [name, variant] : kNames)
    if (std::strcmp(v, name) == 0) return variant;
  TORCH_CHECK(false, "TORCH_GROUPED_PERMUTE_KERNEL must be next, tma, tile2d, legacy or box (or unset), got '", v, "'");
}

// A tile2d plan for `shape`, or false where tile2d does not apply: the input-inner and
// output-inner axes differ, both are multiples of the 16-byte vector and at least half a tile,
// the input is 16-byte aligned with every row start aligned, and tile indices fit 31 bits. An
// input-inner axis of less than 128 bytes is extended by the axis that follows it in the input.
template <typename T>
bool plan_tile2d(const PermuteShape& s, const T* in, kernels::Tile2dPlan& p) {
  using Tr = kernels::Tile2dTraits<T>;
  if (s.rank < 2 || !aligned(in, 16)) return false;
  const int o = s.rank - 1;
  int i = -1;
  for (int d = 0; d < s.rank; ++d)
    if (s.in_stride[d] == 1) i = d;
  if (i < 0 || i == o) return false;
  if (s.size[i] % Tr::V || s.size[o] % Tr::V) return false;
  // An input-inner axis shorter than a tile row (128 bytes) takes the input axis that follows it
  // in memory (stride = its size) into the tile's i axis, which the input holds contiguous and
  // the output at two strides: int8 (64, 64, 64, 64) -> (3, 2, 1, 0) filled a quarter of each
  // 128-byte x 128-row tile (81% of a copy's speed, its fp16 twin half: 92%; H100, session 13).
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  int f = -1;
  if (s.size[i] * Tr::E < 128) {
    for (int d = 0; d < s.rank; ++d)
      if (d != i && d != o && s.in_stride[d] == s.size[i] && s.size[i] * s.size[d] <= kMax) f = d;
  }
  const int64_t size_i = f >= 0 ? s.size[i] * s.size[f] : s.size[i];
  // At least half a tile along each tensor axis (64 bytes along i, 64 rows along o); narrower
  // copies keep the box kernel, which extends short runs with a second axis.
  if (s.size[i] * Tr::E < 64 || s.size[o] < Tr::TO / 2) return false;
  for (int d = 0; d < s.rank; ++d)
    if (d != i && s.in_stride[d] % Tr::V) return false;
  if (size_i > kMax || s.size[o] > kMax) return false;
  const int64_t ti = (size_i + Tr::TI - 1) / Tr::TI, to = (s.size[o] + Tr::TO - 1) / Tr::TO;
  int64_t total = ti * to;
  p = kernels::Tile2dPlan{};
  const uint32_t own = (1u << i) | (1u << o) | (f >= 0 ? 1u << f : 0u);
  if (total > kMax || !fill_batch_axes(s, own, Tr::V, total, p)) return false;
  p.size_i = static_cast<int32_t>(size_i);
  p.size_o = static_cast<int32_t>(s.size[o]);
  p.stride_o_in = s.in_stride[o];
  p.stride_i_out = s.out_stride[i];
  p.i_run = kernels::FastDivmod(static_cast<uint32_t>(s.size[i]));
  p.stride_i_out_outer = f >= 0 ? s.out_stride[f] : 0;
  p.tiles_i = kernels::FastDivmod(static_cast<uint32_t>(ti));
  p.tiles_o = kernels::FastDivmod(static_cast<uint32_t>(to));
  p.total_tiles = static_cast<int32_t>(total);
  return true;
}

// Resident tile2d blocks per SM (16 KB of shared memory each), asked once per element type.
template <typename T>
int tile2d_blocks_per_sm() {
  static const int value = [] {
    int n = 0;
    C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernels::tile2d_copy<T>,
                                                                 kernels::kPermuteThreads, 0));
    return std::max(n, 1);
  }();
  return value;
}

template <typename T>
void launch_typed(const void* in_raw, void* out_raw, const PermuteShape& shape, PermuteKind kind, Variant variant,
                  cudaStream_t stream) {
  const T* in = static_cast<const T*>(in_raw);
  T* out = static_cast<T*>(out_raw);
  constexpr int T_ = kernels::kPermuteThreads;
  const bool next = variant == Variant::Next;
  // next: gathers, row copies of 16-byte (widened) elements, and tensors of a few KB whatever
  // their layout, with 32-bit multiply-shift index math (cuda/permute_gather.cu). A tiny copy is
  // launch-bound: one element per thread and no shared memory start fastest (a 32 x 48
  // transpose: 2.9 µs of box kernel, a 105-element gather 1.3 µs; H100, session 5, run 1).
  constexpr int64_t kTinyBytes = 32 << 10;
  const bool tiny = shape.numel * int64_t{sizeof(T)} <= kTinyBytes;
  // A transpose of 16-byte (widened) elements whose output-inner axis is short and whose input
  // rows run along the next output axis (NCHW8c -> NHWC in fp16: 8 x 16 bytes): a warp's gather
  // reads 32/n consecutive elements from each of n rows, whole sectors, with nothing to stage
  // through shared memory (the box kernel's 16 KB tiles: 5.1 µs for 3.2 MB, H100, session 7).
  const int o = shape.rank - 1;
  const bool short_wide_rows = sizeof(T) == 16 && o >= 1 && shape.size[o] <= 16 && shape.in_stride[o - 1] == 1;
  if (next && (tiny || kind == PermuteKind::Gather || (kind == PermuteKind::Rows && sizeof(T) == 16) ||
               (kind == PermuteKind::Box && short_wide_rows)) &&
      launch_gather_fast(sizeof(T), shape, in, out, stream))
    return;
  if (kind == PermuteKind::Gather) {
    const int64_t blocks = grid_stride_blocks((shape.numel + T_ - 1) / T_);
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
      const int64_t blocks = grid_stride_blocks(p.rows * p.chunks_per_row);
      kernels::row_copy<T, V, unroll><<<blocks, T_, 0, stream>>>(in, out, p);
    });
  } else {
    kernels::Tile2dPlan tp;
    // next: a transpose with a short axis (NCHW <-> NCHW4c) in registers (cuda/permute_small.cu),
    // two short axes swapped around a run ((3, H, W, 7) -> (7, H, W, 3), cuda/permute_pair.cu)
    if (next && launch_small_axis(sizeof(T), shape, in, out, stream)) return;
    if (next && launch_pair_swap(sizeof(T), shape, in, out, stream)) return;
    if ((variant == Variant::Tile2d || variant == Variant::Tma || next) && plan_tile2d<T>(shape, in, tp)) {
      // tma, next: tile2d's tiles loaded by TMA (cuda/permute_tma.cu), tile2d where TMA cannot address the input
      if ((variant == Variant::Tma || next) && launch_tile2d_tma(sizeof(T), in, out, tp, stream)) return;
      const int64_t blocks = grid_stride_blocks(tp.total_tiles, tile2d_blocks_per_sm<T>());
      kernels::tile2d_copy<T><<<blocks, T_, 0, stream>>>(in, out, tp);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
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
    // (next: 16-byte elements, e.g. widened ones, are whole vectors: the box kernel coalesces both sides)
    if (vin == 1 && vout == 1 && variant != Variant::Box && !(next && sizeof(T) == 16)) {
      // No vector fits on either side (odd inner sizes, as in (3, H, W, 7) → (7, H, W, 3)):
      // element-wise tiles only add shared-memory traffic to the same scalar accesses.
      return launch_typed<T>(in_raw, out_raw, shape, PermuteKind::Gather, variant, stream);
    }
    const int64_t blocks = grid_stride_blocks(p.total_boxes);
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

void permute_into(const void* in, void* out, int64_t element_size, int rank, const int64_t* sizes,
                  const int64_t* strides, const int64_t* dims, cudaStream_t stream) {
  PermuteShape shape = simplify_permutation(rank, sizes, strides, dims);
  const Variant variant = forced_variant();
  // The default (next): wider elements where whole runs move (NCHW8c -> NHWC in fp16: 16-byte elements)
  if (variant == Variant::Next) element_size = widen_elements(shape, element_size, reinterpret_cast<uintptr_t>(in));
  const PermuteKind kind = choose_permute_kind(shape, element_size);
  if (kind == PermuteKind::Empty) return;
  const bool launched = with_element_size(element_size, [&](auto E) {
    launch_typed<kernels::BytesOf<decltype(E)::value>>(in, out, shape, kind, variant, stream);
    return true;
  });
  TORCH_CHECK(launched, "permute_copy: element size ", element_size, " is not supported");
}

namespace {

// x's memory seen as (sizes, strides) of `rank` axes, permuted by `dims` into a fresh contiguous
// tensor of `out_sizes` (the permuted sizes, or a shape with as many elements). Allocated straight
// from the CUDA allocator: through the dispatcher, at::empty costs microseconds of host, which
// a copy of a few MB notices.
at::Tensor permute_strided(const at::Tensor& x, int rank, const int64_t* sizes, const int64_t* strides,
                           const int64_t* dims, at::IntArrayRef out_sizes) {
  at::Tensor out = at::detail::empty_cuda(out_sizes, x.scalar_type(), x.device(), std::nullopt);
  const c10::cuda::CUDAGuard guard(x.device());
  // (const_data_ptr includes the storage offset)
  permute_into(x.const_data_ptr(), out.data_ptr(), x.element_size(), rank, sizes, strides, dims,
               c10::cuda::getCurrentCUDAStream().stream());
  return out;
}

}  // namespace

at::Tensor permute_copy_cuda(const at::Tensor& x, at::IntArrayRef dims) {
  const std::vector<int64_t> perm = check_permutation(x, dims);
  std::vector<int64_t> sizes;
  for (int64_t d : perm) sizes.push_back(x.size(d));
  return permute_strided(x, static_cast<int>(x.dim()), x.sizes().data(), x.strides().data(), perm.data(), sizes);
}

namespace {

// layout_transform's padded views (NCHW -> NCHW8c with C = 62) in one pass: the small-axis kernel
// reads x itself and writes the padding's zeros, where a padding pass and a permutation took two
// (and an allocation). Declines, for the two-pass path, where the padded axis's inner atom is not
// the output-inner axis or the kernel does not apply.
std::optional<at::Tensor> padded_permute_cuda(const at::Tensor& x, const PaddedView& v, at::IntArrayRef dims,
                                              at::IntArrayRef out_sizes) {
  const int rank = static_cast<int>(v.sizes.size());
  if (forced_variant() != Variant::Next || rank > kPermuteMaxRank || dims.back() != v.inner) return std::nullopt;
  const PermuteShape s = simplify_permutation(rank, v.sizes.data(), v.strides.data(), dims.data());
  if (s.numel == 0 || s.rank < 2) return std::nullopt;
  // Where the two atoms went: the inner one must stay the output-inner axis, the outer one (unless
  // of size 1, dropped) an axis of its own, both unmerged.
  const int o = s.rank - 1;
  if (s.size[o] != v.sizes[v.inner] || s.in_stride[o] != v.strides[v.inner]) return std::nullopt;
  SmallAxisPadding pad{-1, v.limit};
  if (v.sizes[v.outer] > 1) {
    for (int d = 0; d < o; ++d)
      if (s.size[d] == v.sizes[v.outer] && s.in_stride[d] == v.strides[v.outer] && v.strides[v.outer] != 0)
        pad.axis = pad.axis == -1 ? d : -2;
    if (pad.axis < 0) return std::nullopt;  // merged or ambiguous
  }
  at::Tensor out = at::detail::empty_cuda(out_sizes, x.scalar_type(), x.device(), std::nullopt);
  const c10::cuda::CUDAGuard guard(x.device());
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  if (!launch_small_axis_padded(x.element_size(), s, pad, x.const_data_ptr(), out.data_ptr(), stream)) return std::nullopt;
  return out;
}

// layout_transform's one permutation of an atom view; views of more axes than the kernels take
// go through permute_copy's checks (and its error).
at::Tensor permute_atoms_cuda(const at::Tensor& x, const AtomView& view, at::IntArrayRef dims,
                              at::IntArrayRef out_sizes) {
  const int rank = static_cast<int>(view.sizes.size());
  if (rank > kPermuteMaxRank) return permute_copy_cuda(x.as_strided(view.sizes, view.strides), dims).view(out_sizes);
  return permute_strided(x, rank, view.sizes.data(), view.strides.data(), dims.data(), out_sizes);
}

}  // namespace

at::Tensor layout_transform_cuda(const at::Tensor& x, const std::string& src, const std::string& dst) {
  return layout_transform_with(x, src, dst, &permute_atoms_cuda, &padded_permute_cuda);
}

}  // namespace torch_grouped
