// pair_swap_copy (part of the default permute_copy path): the two short axes at either end of a
// run swap places, [P, M, Q] → in the output order with P the input's unit-stride axis, M next to
// it in the input (stride |P|) and Q the output-inner axis: (3, H, W, 7) → (7, H, W, 3), an
// interleaved image's channels exchanged with its planes. Both inner axes hold less than 16 bytes,
// so the tile kernels find no vector on either side (the gather kernel moved one element per
// thread: a third of copy speed). Here a block takes a chunk of C positions along M: it reads the
// Q input runs of C·P contiguous elements with 16-byte loads into shared memory ([Q][C·P]), then
// writes the P output runs of C·Q contiguous elements with 16-byte stores, gathering each
// vector's elements (m, q) from the tile. C fills 16 KB of tile (C·P·Q·E bytes); a block holds
// two, the next chunk loading while it stores one.
#pragma once
#include "permute.cuh"

namespace torch_grouped::kernels {

struct PairSwapPlan : BatchAxes {
  int32_t p = 0, q = 0;         // extents of the short axes
  int64_t m = 0;                // extent of M (a multiple of 16)
  int64_t q_in_stride = 0;      // input stride of Q (elements)
  int64_t p_out_stride = 0;     // output stride of P (m · q elements)
  int32_t chunk = 0;            // C: positions of M per block (a multiple of 16)
  FastDivmod chunks;            // chunks along M
  uint32_t units = 0;           // chunks x batch positions (< 2^31)
};

// Where chunk u of the plan lies: its first position along M, its length, its base offsets.
struct PairChunk {
  int64_t in_base, out_base;
  int32_t c;  // positions of M in this chunk (a multiple of 16)
};

__device__ __forceinline__ PairChunk pair_chunk(const PairSwapPlan& p, uint32_t u) {
  const uint32_t b = p.chunks.div(u);
  const int64_t m0 = int64_t{u - b * p.chunks.d} * p.chunk;
  PairChunk k{m0 * p.p, m0 * p.q, static_cast<int32_t>(min(int64_t{p.chunk}, p.m - m0))};
  add_batch_offsets(b, p.batch, p.batch_size, p.batch_in, p.batch_out, k.in_base, k.out_base);
  return k;
}

// The load phase of a chunk: Q runs of c·P elements into `tile` ([Q][C·P]), 16 bytes per thread
// and step, as asynchronous copies (cp.async: global to shared without registers), so that they
// fly while the block stores the previous chunk.
template <typename T>
__device__ __forceinline__ void pair_load_async(const T* __restrict__ in, T* tile, const PairSwapPlan& p,
                                                const PairChunk& k) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  const int32_t run_in = k.c * p.p / V, row = p.chunk * p.p;  // vectors per run, tile row (elements)
  for (int32_t v = threadIdx.x; v < run_in * p.q; v += kPermuteThreads) {
    const int32_t q = v / run_in, x = v - q * run_in;
    const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(tile + q * row + x * V));
    const T* src = in + k.in_base + q * p.q_in_stride + x * V;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// Two tiles: chunk i of the block is stored from tile i % 2 while chunk i + 1 loads into the
// other. (One tile, loaded then stored, left each block's load and store phases in turn:
// (3, 1024, 1024, 7) at 85-89% of a copy's speed; H100, session 13.)
template <typename T>
__global__ void __launch_bounds__(kPermuteThreads) pair_swap_copy(const T* __restrict__ in, T* __restrict__ out,
                                                                  const __grid_constant__ PairSwapPlan p) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  extern __shared__ uint4 tile_raw[];
  T* const tiles = reinterpret_cast<T*>(tile_raw);
  const int32_t tile_elems = p.chunk * p.p * p.q;  // (tile t at tiles + t·tile_elems: no indexed array, no stack)
  if (blockIdx.x >= p.units) return;
  PairChunk k = pair_chunk(p, blockIdx.x);
  pair_load_async(in, tiles, p, k);
  const int32_t row = p.chunk * p.p;
  for (uint32_t u = blockIdx.x, i = 0; u < p.units; u += gridDim.x, ++i) {
    const T* tile = tiles + (i % 2) * tile_elems;
    const uint32_t next = u + gridDim.x;
    PairChunk k_next{};
    if (next < p.units) {
      k_next = pair_chunk(p, next);
      pair_load_async(in, tiles + ((i + 1) % 2) * tile_elems, p, k_next);
      asm volatile("cp.async.wait_group 1;" ::: "memory");  // this chunk's copies are done
    } else {
      asm volatile("cp.async.wait_group 0;" ::: "memory");
    }
    __syncthreads();  // ... everyone's
    // Store: P runs of c·Q elements; element j of run p is (m = j / Q, q = j % Q) = tile[q][m·P + p].
    const int32_t run_out = k.c * p.q / V;
    for (int32_t v = threadIdx.x; v < run_out * p.p; v += kPermuteThreads) {
      const int32_t pp = v / run_out, x = v - pp * run_out;
      int32_t j = x * V, m = j / p.q, q = j - m * p.q;
      Vec<T, V> w;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        w.v[e] = tile[q * row + m * p.p + pp];
        if (++q == p.q) q = 0, ++m;
      }
      reinterpret_cast<Vec<T, V>*>(out + k.out_base + pp * p.p_out_stride)[x] = w;
    }
    __syncthreads();  // the tile is read before the next trip's copies overwrite it
    k = k_next;
  }
}

}  // namespace torch_grouped::kernels
