// pair_swap_copy (part of the default permute_copy path): the two short axes at either end of a
// run swap places, [P, M, Q] → in the output order with P the input's unit-stride axis, M next to
// it in the input (stride |P|) and Q the output-inner axis: (3, H, W, 7) → (7, H, W, 3), an
// interleaved image's channels exchanged with its planes. Both inner axes hold less than 16 bytes,
// so the tile kernels find no vector on either side (the gather kernel moved one element per
// thread: a third of copy speed). Here a block takes a chunk of C positions along M: it reads the
// Q input runs of C·P contiguous elements with 16-byte loads into shared memory ([Q][C·P]), then
// writes the P output runs of C·Q contiguous elements with 16-byte stores, gathering each
// vector's elements (m, q) from the tile. C fills 16 KB of tile (C·P·Q·E bytes).
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

template <typename T>
__global__ void __launch_bounds__(kPermuteThreads) pair_swap_copy(const T* __restrict__ in, T* __restrict__ out,
                                                                  const __grid_constant__ PairSwapPlan p) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  extern __shared__ uint4 tile_raw[];
  T* tile = reinterpret_cast<T*>(tile_raw);
  for (uint32_t u = blockIdx.x; u < p.units; u += gridDim.x) {
    const uint32_t b = p.chunks.div(u);
    const int64_t m0 = int64_t{u - b * p.chunks.d} * p.chunk;
    const int32_t c = static_cast<int32_t>(min(int64_t{p.chunk}, p.m - m0));  // a multiple of 16
    int64_t in_base = m0 * p.p, out_base = m0 * p.q;
    add_batch_offsets(b, p.batch, p.batch_size, p.batch_in, p.batch_out, in_base, out_base);
    // Load: Q runs of c·P elements, 16 bytes per thread and step.
    const int32_t run_in = c * p.p / V, row = p.chunk * p.p;  // vectors per run, tile row (elements)
    for (int32_t v = threadIdx.x; v < run_in * p.q; v += kPermuteThreads) {
      const int32_t q = v / run_in, x = v - q * run_in;
      reinterpret_cast<uint4*>(tile + q * row)[x] =
          __ldg(reinterpret_cast<const uint4*>(in + in_base + q * p.q_in_stride) + x);
    }
    __syncthreads();
    // Store: P runs of c·Q elements; element j of run p is (m = j / Q, q = j % Q) = tile[q][m·P + p].
    const int32_t run_out = c * p.q / V;
    for (int32_t v = threadIdx.x; v < run_out * p.p; v += kPermuteThreads) {
      const int32_t pp = v / run_out, x = v - pp * run_out;
      int32_t j = x * V, m = j / p.q, q = j - m * p.q;
      Vec<T, V> w;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        w.v[e] = tile[q * row + m * p.p + pp];
        if (++q == p.q) q = 0, ++m;
      }
      reinterpret_cast<Vec<T, V>*>(out + out_base + pp * p.p_out_stride)[x] = w;
    }
    __syncthreads();
  }
}

}  // namespace torch_grouped::kernels
