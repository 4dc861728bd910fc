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
#include <type_traits>

#include "../common/permute_plan.h"

namespace torch_grouped::kernels {

constexpr int kPermuteThreads = 256;

// An unsigned type of E bytes (1, 2, 4, 8, 16): the kernels only move bytes, so the launchers that
// dispatch on the element size instantiate them on these.
template <int E>
using BytesOf = std::conditional_t<E == 1, uint8_t,
                std::conditional_t<E == 2, uint16_t,
                std::conditional_t<E == 4, uint32_t, std::conditional_t<E == 8, uint64_t, uint4>>>>;

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

// ---------------------------------------------------------------------------------------------
// tile2d (TORCH_GROUPED_PERMUTE_KERNEL=tile2d): a batched 2-D transpose. The input's unit-stride
// axis `i` and the output's innermost axis `o` differ; every other axis is a batch axis. A tile is
// 128 bytes along i (one line per row) by 128 elements along o: 16 KB whatever the element size.
//  - load: 16-byte vectors along i, 8 per tile row, each thread 4 rows 32 apart (one 64-bit
//    pointer per tile, a 64-bit add per vector); stored as-is into shared memory, row-major by o,
//    16-byte chunk index XOR-swizzled by (row / V) % 8 (no padding: rows stay 16-byte aligned).
//  - store: a warp takes 8 vectors along o (8·V rows = one 128-byte output line per i) by 4 words
//    along i (a word = max(4, element size) bytes); a lane reads its word from V rows (V loads of
//    4/8/16 bytes, conflict-free thanks to the swizzle), transposes them in registers (byte_perm
//    for 1- and 2-byte elements) and writes 4/element-size output vectors of 16 bytes.
//  - the tile index is decomposed once per tile with multiply-shift divisions (32-bit tile
//    indices, host-checked); software-pipelined like box_copy (the next tile's loads are in
//    flight while the current one is stored).
// Needs: 16-byte aligned input, size_i and size_o multiples of V = 16 / element size, every
// input stride but i's a multiple of V. Otherwise the launcher falls back to box_copy.

// n / d and n % d for 0 <= n < 2^31, 1 <= d < 2^31 (Granlund–Montgomery, as ATen's IntDivider).
struct FastDivmod {
  uint32_t d = 1, m = 0, s = 0;
  FastDivmod() = default;
  explicit FastDivmod(uint32_t divisor) : d(divisor) {
    for (s = 0; s < 32; ++s)
      if ((uint64_t{1} << s) >= d) break;
    m = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << s) - d)) / d + 1);
  }
  __device__ __forceinline__ uint32_t div(uint32_t n) const { return (__umulhi(n, m) + n) >> s; }
};

// Adds the offsets of batch index t over n batch axes (outermost first, the last fastest) to `in`
// and `out`. kFixed >= 0: exactly kFixed axes, unrolled, each coordinate also written to coord[k]
// (the TMA variant needs them); kFixed < 0: n axes (run time).
template <int kFixed = -1>
__device__ __forceinline__ void add_batch_offsets(uint32_t t, int n, const FastDivmod* size, const int64_t* in_stride,
                                                  const int64_t* out_stride, int64_t& in, int64_t& out,
                                                  int32_t* coord = nullptr) {
#pragma unroll
  for (int k = (kFixed < 0 ? n : kFixed) - 1; k >= 0; --k) {
    const uint32_t q = size[k].div(t);
    const int64_t b = t - q * size[k].d;
    t = q;
    in += b * in_stride[k];
    out += b * out_stride[k];
    if constexpr (kFixed >= 0) coord[k] = static_cast<int32_t>(b);
  }
}

constexpr int kTile2dBatch = kPermuteMaxRank - 2;
constexpr int kTile2dRows = 128;  // tile extent along o (rows of the shared-memory tile)

// The axes a 2-D kernel (tile2d, small_axis_copy) loops over around its two axes, outermost first.
struct BatchAxes {
  int batch = 0;
  FastDivmod batch_size[kTile2dBatch];
  int64_t batch_in[kTile2dBatch], batch_out[kTile2dBatch];
};

struct Tile2dPlan : BatchAxes {
  int32_t size_i = 0, size_o = 0;     // extents of the two axes (< 2^31)
  int64_t stride_o_in = 0;            // input stride of o (elements)
  int64_t stride_i_out = 0;           // output stride of i (elements)
  // i may be two tensor axes that follow each other in the input but not in the output (an
  // input-inner axis of less than a tile row, with the next one folded in): position i of the
  // tile axis lies at (i / i_run)·stride_i_out_outer + (i % i_run)·stride_i_out in the output.
  // One axis: i_run = size_i.
  FastDivmod i_run;
  int64_t stride_i_out_outer = 0;
  FastDivmod tiles_i, tiles_o;
  int32_t total_tiles = 0;
};

// The output offset of position i of the tile's i axis.
__device__ __forceinline__ int64_t tile2d_i_offset(const Tile2dPlan& p, int32_t i) {
  const uint32_t outer = p.i_run.div(static_cast<uint32_t>(i));
  return int64_t{outer} * p.stride_i_out_outer + int64_t{static_cast<int32_t>(i - outer * p.i_run.d)} * p.stride_i_out;
}

template <typename T>
struct Tile2dTraits {
  static constexpr int E = sizeof(T);
  static constexpr int V = 16 / E;               // elements per 16-byte vector
  static constexpr int LOG2V = V == 1 ? 0 : V == 2 ? 1 : V == 4 ? 2 : V == 8 ? 3 : 4;
  static constexpr int TI = 128 / E;             // tile extent along i (8 vectors)
  static constexpr int TO = kTile2dRows;         // tile extent along o
  static constexpr int WB = E < 4 ? 4 : E;       // bytes per shared-memory word in the store phase
  static constexpr int EPW = WB / E;             // elements per word = output vectors per lane-task
  static constexpr int WPC = 16 / WB;            // words per 16-byte chunk
  static constexpr int LOADS = TO * 8 / kPermuteThreads;  // vectors per thread (4)
  static constexpr int OGROUPS = TO / (8 * V);   // warp tasks along o
  static constexpr int IGROUPS = 128 / WB / 4;   // warp tasks along i
  static constexpr int TASKS = OGROUPS * IGROUPS / (kPermuteThreads / 32);  // per warp
  static_assert(TASKS * kPermuteThreads * EPW * 16 == TO * 128, "store tasks must cover the tile");
};

template <int WB>
struct WordOf;
template <>
struct WordOf<4> {
  using type = uint32_t;
};
template <>
struct WordOf<8> {
  using type = uint2;
};
template <>
struct WordOf<16> {
  using type = uint4;
};

struct Tile2dOrigin {
  int64_t in, out;  // out: the batch and o offsets (i's comes from tile2d_i_offset)
  int32_t rem_i, rem_o;  // extent of the tile inside the tensor along i and o
  int32_t i0, o0;        // first element of the tile along i and o
};

// kBatch < 0: p.batch batch axes (run time). kBatch >= 0: exactly kBatch (the TMA variant,
// which needs each batch coordinate: `coord[k]`, unrolled so that coord stays in registers).
template <int kBatch = -1>
__device__ __forceinline__ Tile2dOrigin tile2d_origin(const Tile2dPlan& p, uint32_t t, int TI, int TO,
                                                      int32_t* coord = nullptr) {
  Tile2dOrigin o;
  uint32_t q = p.tiles_i.div(t);
  const int32_t ti = static_cast<int32_t>(t - q * p.tiles_i.d);
  t = q;
  q = p.tiles_o.div(t);
  const int32_t to = static_cast<int32_t>(t - q * p.tiles_o.d);
  t = q;
  const int32_t i0 = ti * TI, o0 = to * TO;
  o.i0 = i0;
  o.o0 = o0;
  o.in = int64_t{o0} * p.stride_o_in + i0;
  o.out = o0;
  add_batch_offsets<kBatch>(t, p.batch, p.batch_size, p.batch_in, p.batch_out, o.in, o.out, coord);
  o.rem_i = min(TI, p.size_i - i0);
  o.rem_o = min(TO, p.size_o - o0);
  return o;
}

template <typename T>
struct Tile2dLoads {
  using Tr = Tile2dTraits<T>;
  uint4 regs[Tr::LOADS];
  uint32_t valid = 0;  // bit k: vector k lies inside the tensor

  __device__ __forceinline__ void load(const T* __restrict__ in, const Tile2dPlan& p, const Tile2dOrigin& o) {
    const int32_t row = threadIdx.x >> 3, col = (threadIdx.x & 7) * Tr::V;
    const uint4* ptr = reinterpret_cast<const uint4*>(in + o.in + row * p.stride_o_in + col);
    const int64_t step = p.stride_o_in * (kPermuteThreads / 8) * Tr::E / 16;  // in uint4 units
    valid = 0;
    const bool col_ok = col < o.rem_i;
#pragma unroll
    for (int k = 0; k < Tr::LOADS; ++k) {
      if (col_ok && row + k * (kPermuteThreads / 8) < o.rem_o) {
        regs[k] = *ptr;
        valid |= 1u << k;
      }
      ptr += step;
    }
  }

  __device__ __forceinline__ void scatter(unsigned char* tile) const {
    const int32_t chunk = threadIdx.x & 7;
#pragma unroll
    for (int k = 0; k < Tr::LOADS; ++k) {
      const int32_t row = (threadIdx.x >> 3) + k * (kPermuteThreads / 8);
      const int32_t phys = chunk ^ ((row >> Tr::LOG2V) & 7);
      // Vectors outside the tensor leave stale data; the store phase never writes those.
      if (valid & (1u << k)) *reinterpret_cast<uint4*>(tile + row * 128 + phys * 16) = regs[k];
    }
  }
};

// Output vector e of a lane-task from V words (one per row), each of EPW elements.
template <typename T>
__device__ __forceinline__ uint4 tile2d_transpose(const typename WordOf<Tile2dTraits<T>::WB>::type* w, int e) {
  using Tr = Tile2dTraits<T>;
  if constexpr (Tr::E == 1) {
    uint32_t out[4];
    const uint32_t sel = static_cast<uint32_t>(e) | (static_cast<uint32_t>(e + 4) << 4);
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const uint32_t lo = __byte_perm(w[4 * m], w[4 * m + 1], sel);
      const uint32_t hi = __byte_perm(w[4 * m + 2], w[4 * m + 3], sel);
      out[m] = __byte_perm(lo, hi, 0x5410);
    }
    return make_uint4(out[0], out[1], out[2], out[3]);
  } else if constexpr (Tr::E == 2) {
    uint32_t out[4];
    const uint32_t sel = e == 0 ? 0x5410 : 0x7632;
#pragma unroll
    for (int m = 0; m < 4; ++m) out[m] = __byte_perm(w[2 * m], w[2 * m + 1], sel);
    return make_uint4(out[0], out[1], out[2], out[3]);
  } else if constexpr (Tr::E == 4) {
    return make_uint4(w[0], w[1], w[2], w[3]);
  } else if constexpr (Tr::E == 8) {
    return make_uint4(w[0].x, w[0].y, w[1].x, w[1].y);
  } else {
    return w[0];
  }
}

// kSplitRows = false: tile row r holds o = o0 + r (tile2d's own loads). true: the V rows of
// o-group g (o = o0 + g·V + j) lie TO/V rows apart, row j·(TO/V) + g (the TMA variant's box order,
// which makes TMA's 128-byte swizzle key (row % 8) equal to tile2d's (g % 8)).
template <typename T, bool kSplitRows = false>
__device__ __forceinline__ void tile2d_store(T* __restrict__ out, const unsigned char* tile, const Tile2dPlan& p,
                                             const Tile2dOrigin& o) {
  using Tr = Tile2dTraits<T>;
  using W = typename WordOf<Tr::WB>::type;
  const int32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int32_t a = lane & 7, q = lane >> 3;
#pragma unroll
  for (int t = 0; t < Tr::TASKS; ++t) {
    const int32_t g = warp + t * (kPermuteThreads / 32);
    const int32_t og = g % Tr::OGROUPS, ig = g / Tr::OGROUPS;
    const int32_t o_elem = (og * 8 + a) * Tr::V;     // first o of this lane's output vectors
    const int32_t word = ig * 4 + q;                 // word index along the tile row
    const int32_t i_elem = word * Tr::EPW;           // first i of this lane's output vectors
    if (o_elem >= o.rem_o || i_elem >= o.rem_i) continue;
    const int32_t chunk = word / Tr::WPC, in_chunk = (word % Tr::WPC) * Tr::WB;
    // swizzle key (row / V) % 8, or row % 8 with kSplitRows: a either way
    constexpr int kGroupBytes = kSplitRows ? 128 : Tr::V * 128, kRowBytes = kSplitRows ? Tr::TO / Tr::V * 128 : 128;
    const unsigned char* src = tile + (og * 8 + a) * kGroupBytes + ((chunk ^ a) << 4) + in_chunk;
    W w[Tr::V];
#pragma unroll
    for (int j = 0; j < Tr::V; ++j) w[j] = *reinterpret_cast<const W*>(src + j * kRowBytes);
    // (the EPW positions from i_elem lie in one run of i: i_run is a multiple of V)
    T* dst = out + o.out + tile2d_i_offset(p, o.i0 + i_elem) + o_elem;
#pragma unroll
    for (int e = 0; e < Tr::EPW; ++e) {
      if (i_elem + e < o.rem_i) *reinterpret_cast<uint4*>(dst) = tile2d_transpose<T>(w, e);
      dst += p.stride_i_out;
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kPermuteThreads) tile2d_copy(const T* __restrict__ in, T* __restrict__ out,
                                                               const __grid_constant__ Tile2dPlan p) {
  using Tr = Tile2dTraits<T>;
  __shared__ __align__(128) unsigned char tile[Tr::TO * 128];
  uint32_t t = blockIdx.x;
  if (t >= static_cast<uint32_t>(p.total_tiles)) return;
  Tile2dLoads<T> loads;
  Tile2dOrigin origin = tile2d_origin(p, t, Tr::TI, Tr::TO);
  loads.load(in, p, origin);
  while (true) {
    loads.scatter(tile);
    __syncthreads();
    const Tile2dOrigin current = origin;
    t += gridDim.x;
    const bool more = t < static_cast<uint32_t>(p.total_tiles);
    if (more) {
      origin = tile2d_origin(p, t, Tr::TI, Tr::TO);
      loads.load(in, p, origin);
    }
    tile2d_store<T>(out, tile, p, current);
    if (!more) break;
    __syncthreads();
  }
}

}  // namespace torch_grouped::kernels
