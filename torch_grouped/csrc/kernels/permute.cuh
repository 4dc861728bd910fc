// Device code of permute_copy (plans in common/permute_plan.h).
//
// box_copy: each block copies one tile ("box") of up to four axes through shared memory: the load
// phase walks the box in input order (unit-stride axis fastest, 16-byte vectors where aligned),
// scattering into a tile laid out in output order with one pad per scatter stride (no bank
// conflicts); the store phase walks the tile in output order and writes 16-byte vectors. Box
// extents are powers of two, so every coordinate is a shift and a mask. A grid-stride loop over
// boxes, software-pipelined (the next box's loads are issued before the current box is stored);
// all offsets are 64-bit.
// row_copy: the innermost output axis is the input's unit-stride axis: vectorised row copies.
// gather_copy: inputs with no unit-stride axis, or where no vector access fits on either side:
// one element per thread, coalesced writes.
#pragma once
#include <cstdint>

#include "../common/permute_plan.h"

namespace torch_grouped::kernels {

constexpr int kPermuteThreads = 256;

template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// The base offsets of box `index`, and how much of each box axis lies inside the tensor.
struct BoxOrigin {
  int64_t in = 0, out = 0;
  int32_t remaining[kPermuteMaxBox];
};

__device__ __forceinline__ BoxOrigin box_origin(const BoxPlan& p, int64_t index) {
  BoxOrigin o;
  const PermuteShape& s = p.shape;
  int64_t first[kPermuteMaxRank];
  for (int d = s.rank - 1; d >= 0; --d) {
    const int64_t t = index % p.tiles[d];
    index /= p.tiles[d];
    first[d] = t;  // in tiles for box axes, in elements otherwise (tile of one)
  }
  for (int d = 0; d < s.rank; ++d) {
    int64_t start = first[d];
    for (int k = 0; k < p.count; ++k)
      if (p.axis[k] == d) {
        start <<= p.log2_extent[k];
        const int64_t left = s.size[d] - start;
        o.remaining[k] = static_cast<int32_t>(left < (int64_t{1} << p.log2_extent[k]) ? left : (int64_t{1} << p.log2_extent[k]));
      }
    o.in += start * s.in_stride[d];
    o.out += start * s.out_stride[d];
  }
  return o;
}

// Element `lin` of a box, counted in input order (kOutputOrder = false: slot 0 fastest) or in
// output order (true: out_order[0] fastest): its global offset from the box's base, its padded
// position in the output-ordered tile, and whether it lies inside the tensor.
struct BoxPoint {
  int64_t offset;
  int32_t pos;
  bool inside;
};

template <bool kOutputOrder>
__device__ __forceinline__ BoxPoint box_point(const BoxPlan& p, const BoxOrigin& o, int32_t lin) {
  const PermuteShape& s = p.shape;
  BoxPoint pt{kOutputOrder ? o.out : o.in, 0, true};
#pragma unroll
  for (int n = 0; n < kPermuteMaxBox; ++n) {
    if (n >= p.count) break;
    const int k = kOutputOrder ? p.out_order[n] : n;
    const int32_t c = lin & ((1 << p.log2_extent[k]) - 1);
    lin >>= p.log2_extent[k];
    pt.inside &= c < o.remaining[k];
    pt.offset += c * (kOutputOrder ? s.out_stride[p.axis[k]] : s.in_stride[p.axis[k]]);
    pt.pos += c * static_cast<int32_t>(p.smem_stride[k]);
  }
  // Padding; a vector (along slot 0 on loads, along the output-inner axis on stores) never
  // straddles a pad.
  if (p.pad) pt.pos += (pt.pos >> p.pad_shift) * p.pad;
  return pt;
}

// One thread's share of a box's load phase: its vectors, where they go in the tile.
template <typename T, int TILE, int VIN>
struct BoxLoads {
  static constexpr int kCount = (TILE / VIN + kPermuteThreads - 1) / kPermuteThreads;
  Vec<T, VIN> regs[kCount];
  int32_t dst[kCount];  // padded tile position of each vector's first element, -1 if none

  // Issues every load of this thread's vectors of the box (no shared memory touched).
  __device__ __forceinline__ void load(const T* __restrict__ in, const BoxPlan& p, const BoxOrigin& o) {
#pragma unroll
    for (int i = 0; i < kCount; ++i) {
      const int32_t lin = (threadIdx.x + i * kPermuteThreads) * VIN;
      dst[i] = -1;
      if (lin >= p.box_elems) continue;
      const BoxPoint pt = box_point<false>(p, o, lin);
      if (!pt.inside) continue;
      regs[i] = *reinterpret_cast<const Vec<T, VIN>*>(in + pt.offset);
      dst[i] = pt.pos;
    }
  }

  // Scatters the loaded vectors into the output-ordered tile.
  __device__ __forceinline__ void scatter(T* tile, const BoxPlan& p) const {
    const int32_t step = p.pad ? (1 << p.pad_shift) + p.pad : static_cast<int32_t>(p.smem_stride[0]);
#pragma unroll
    for (int i = 0; i < kCount; ++i) {
      if (dst[i] < 0) continue;
#pragma unroll
      for (int j = 0; j < VIN; ++j) tile[dst[i] + j * step] = regs[i].v[j];
    }
  }
};

template <typename T, int TILE, int VOUT>
__device__ __forceinline__ void store_box(T* __restrict__ out, const T* tile, const BoxPlan& p,
                                          const BoxOrigin& o) {
  constexpr int kStores = (TILE / VOUT + kPermuteThreads - 1) / kPermuteThreads;
#pragma unroll
  for (int i = 0; i < kStores; ++i) {
    const int32_t lin = (threadIdx.x + i * kPermuteThreads) * VOUT;
    if (lin >= p.box_elems) continue;
    const BoxPoint pt = box_point<true>(p, o, lin);
    if (!pt.inside) continue;
    Vec<T, VOUT> v;
#pragma unroll
    for (int j = 0; j < VOUT; ++j) v.v[j] = tile[pt.pos + j];
    *reinterpret_cast<Vec<T, VOUT>*>(out + pt.offset) = v;
  }
}

// Software-pipelined over the boxes of this block: the loads of box i+1 are in flight while
// box i is written out, so a block always has reads outstanding. (Capping registers for six
// blocks per SM spilled the prefetched vectors and halved throughput on an H100: NOTES.md.)
template <typename T, int TILE, int VIN, int VOUT>
__global__ void __launch_bounds__(kPermuteThreads) box_copy(const T* __restrict__ in, T* __restrict__ out,
                                                            const __grid_constant__ BoxPlan p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  int64_t box = blockIdx.x;
  if (box >= p.total_boxes) return;
  BoxLoads<T, TILE, VIN> loads;
  BoxOrigin origin = box_origin(p, box);
  loads.load(in, p, origin);
  while (true) {
    loads.scatter(tile, p);
    __syncthreads();
    const BoxOrigin current = origin;
    box += gridDim.x;
    const bool more = box < p.total_boxes;
    if (more) {
      origin = box_origin(p, box);
      loads.load(in, p, origin);
    }
    store_box<T, TILE, VOUT>(out, tile, p, current);
    if (!more) break;
    __syncthreads();
  }
}

// Rows shorter than a chunk are packed several to a chunk (plan_rows), so every block step moves
// a full chunk whatever the row length.
template <typename T, int V, int UNROLL>
__global__ void __launch_bounds__(kPermuteThreads) row_copy(const T* __restrict__ in, T* __restrict__ out,
                                                            const __grid_constant__ RowsPlan p) {
  const PermuteShape& s = p.shape;
  const int64_t total = (p.rows + p.rows_per_chunk - 1) / p.rows_per_chunk * p.chunks_per_row;
  for (int64_t c = blockIdx.x; c < total; c += gridDim.x) {
    const int64_t first_row = c / p.chunks_per_row * p.rows_per_chunk;
    const int64_t col0 = (c % p.chunks_per_row) * p.chunk;
    Vec<T, V> regs[UNROLL];
    int64_t src[UNROLL], dst[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int64_t local = (threadIdx.x + u * kPermuteThreads) * int64_t{V};
      const int64_t r = p.rows_per_chunk > 1 ? local / p.inner : 0;
      const int64_t col = p.rows_per_chunk > 1 ? local - r * p.inner : col0 + local;
      int64_t row = first_row + r;
      dst[u] = -1;
      if (r >= p.rows_per_chunk || row >= p.rows || col >= p.inner || (p.rows_per_chunk == 1 && local >= p.chunk)) continue;
      dst[u] = row * p.inner + col;
      src[u] = col;
      for (int d = s.rank - 2; d >= 0; --d) {
        src[u] += (row % s.size[d]) * s.in_stride[d];
        row /= s.size[d];
      }
      regs[u] = *reinterpret_cast<const Vec<T, V>*>(in + src[u]);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (dst[u] >= 0) *reinterpret_cast<Vec<T, V>*>(out + dst[u]) = regs[u];
  }
}

template <typename T>
__global__ void __launch_bounds__(kPermuteThreads) gather_copy(const T* __restrict__ in, T* __restrict__ out,
                                                               const __grid_constant__ PermuteShape s) {
  for (int64_t i = blockIdx.x * int64_t{kPermuteThreads} + threadIdx.x; i < s.numel;
       i += int64_t{gridDim.x} * kPermuteThreads) {
    int64_t rest = i, src = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      src += (rest % s.size[d]) * s.in_stride[d];
      rest /= s.size[d];
    }
    out[i] = in[src];
  }
}

}  // namespace torch_grouped::kernels
