// small_axis_copy (part of TORCH_GROUPED_PERMUTE_KERNEL=next): a batched 2-D transpose whose
// short axis S holds s = 2..8 elements (at most 16 bytes, V = 16 / element size) and whose long
// axis L has unit stride on one side: the NCHW <-> NCHWxc layout changes. The tile kernels waste
// most of a tile there (a 4-wide axis fills 4 of 128 rows) or fall back to narrow stores; here
// each thread moves one block of V positions of L by s positions of S with s 16-byte loads and s
// 16-byte stores, transposed in registers: no shared memory, no tile, every access 16 bytes.
//  - kPlanesIn (S is the output-inner axis, NCHW -> NCHW4c): the input holds s planes along L
//    (`plane` apart), the output the interleaved (L, S) run.
//  - !kPlanesIn (S is the input's unit-stride axis, NCHW4c -> NCHW): the reverse; the output
//    planes are `plane` apart.
// s need not divide V: V positions by s values are s whole vectors on either side (NCHW -> NHWC
// with 3 channels: three 16-byte planes in, three 16-byte runs of (pixel, channel) out).
// Where s = V (the short axis is one 16-byte vector), the interleaved side's positions along L
// need not be adjacent: `run` apart, with other axes between L and S ((1024, 2, 32, 8) ->
// (3, 2, 0, 1): 8 values at each of 2048 positions 256 elements apart; the box kernel moved it
// at 6.1 µs, H100). Otherwise run = s.
// Lanes take consecutive L blocks, so a warp's loads of one plane are 512 contiguous bytes and
// its s stores of the interleaved side cover s·512 contiguous bytes (in the planes-in direction
// through a staging area, so that each store instruction writes 512 of them: see StagedChunks).
#pragma once
#include "permute.cuh"

namespace torch_grouped::kernels {

struct SmallAxisPlan : BatchAxes {
  // Padding (kPlanesIn only; layout_transform's NCHW -> NCHW8c with C = 62): plane k of a block
  // holds data when i * S + k < pad_limit, i the block's coordinate along batch axis
  // pad_batch_axis (0 when that is -1), and is written as zeros otherwise (never read).
  bool padded = false;
  int32_t pad_batch_axis = -1;
  int64_t pad_limit = 0;
  FastDivmod blocks;   // blocks of V positions along L (size_L / V)
  int64_t plane = 0;   // stride of S on the planar side (elements, a multiple of V)
  int64_t run = 0;     // stride of L on the interleaved side (elements): s, or a multiple of V where s = V
  uint32_t units = 0;  // blocks x batch (< 2^31)
};

// The planes-in direction's stores go out through a per-warp staging area: a thread's S vectors
// are adjacent in the output, so a direct store of vector m by the 32 lanes writes 16 bytes every
// S·16 bytes, and each 32-byte sector of the output is written by two store instructions that
// the L2 merges (NCHW -> NHWC, 3 channels: 81% of a copy's speed in fp16, 74% in uint8; the
// reverse direction, whose loads have that pattern, reaches 100%: loads merge in L1). Staged,
// store instruction r of the warp writes the warp's chunks 32r .. 32r + 31: 512 contiguous bytes
// where the lanes' blocks are adjacent (one batch row; any other placement is still correct).
// Staged chunk c sits at c + c / 8 for an even S (the lanes' S-chunk strides would otherwise
// meet in the same banks; S = 6 keeps one two-way conflict) and at c for an odd S (a quarter
// warp's chunks j·S + m, j < 8, already fall in distinct 16-byte bank groups).
template <int S>
struct StagedChunks {
  static constexpr int kPad = S % 2 == 0 ? 1 : 0;
  static constexpr int kCount = 32 * S + kPad * 4 * S;
  static __device__ __forceinline__ int at(int c) { return c + kPad * (c / 8); }
};

template <typename T, int S, bool kPlanesIn>
__global__ void __launch_bounds__(kPermuteThreads) small_axis_copy(const T* __restrict__ in, T* __restrict__ out,
                                                                   const __grid_constant__ SmallAxisPlan p) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  static_assert(S >= 2 && S <= V, "the short axis holds 2 to V elements");
  using Staged = StagedChunks<S>;
  __shared__ uint4 staged_all[kPlanesIn ? kPermuteThreads / 32 : 1][kPlanesIn ? Staged::kCount : 1];
  const int lane = static_cast<int>(threadIdx.x % 32);
  uint4* staged = staged_all[kPlanesIn ? threadIdx.x / 32 : 0];
  // Warp-uniform trips (the staged stores exchange offsets between lanes): the warp's first unit,
  // lanes past the last unit stay along without loading or storing.
  const uint32_t stride = gridDim.x * kPermuteThreads;
  for (uint32_t first = blockIdx.x * kPermuteThreads + (threadIdx.x & ~31u); first < p.units; first += stride) {
    const uint32_t u = first + lane;
    const bool active = u < p.units;
    const uint32_t q = p.blocks.div(u);
    const int64_t l = int64_t{u - q * p.blocks.d} * V;  // first position along L
    int64_t planar = l, interleaved = l * p.run;         // offsets of the block on either side
    // the interleaved side's vector m: positions m·V/S.. (adjacent runs), or position m (s = V)
    const int64_t step = S == V ? p.run : V;
    if constexpr (kPlanesIn) {
      add_batch_offsets(q, p.batch, p.batch_size, p.batch_in, p.batch_out, planar, interleaved);
    } else {
      add_batch_offsets(q, p.batch, p.batch_size, p.batch_in, p.batch_out, interleaved, planar);
    }
    // planes[k].v[x]: position x of L at S = k; mixed[n / V].v[n % V]: the pair n = x·S + k
    Vec<T, V> planes[S], mixed[S];
    if constexpr (kPlanesIn) {
      int64_t valid = active ? S : 0;  // planes of this block inside the input
      if (p.padded && active) {
        int64_t i = 0;
        if (p.pad_batch_axis >= 0) {
          uint32_t t = q;
          for (int k = p.batch - 1; k > p.pad_batch_axis; --k) t = p.batch_size[k].div(t);
          i = t - p.batch_size[p.pad_batch_axis].div(t) * p.batch_size[p.pad_batch_axis].d;
        }
        valid = p.pad_limit - i * S;
      }
      // (selected as whole 16-byte words: a select of Vec<uint8_t, 16> took 138 registers)
#pragma unroll
      for (int k = 0; k < S; ++k) {
        const uint4 w = k < valid ? *reinterpret_cast<const uint4*>(in + planar + k * p.plane) : make_uint4(0, 0, 0, 0);
        planes[k] = *reinterpret_cast<const Vec<T, V>*>(&w);
      }
#pragma unroll
      for (int n = 0; n < S * V; ++n) mixed[n / V].v[n % V] = planes[n % S].v[n / S];
#pragma unroll
      for (int m = 0; m < S; ++m) staged[Staged::at(lane * S + m)] = *reinterpret_cast<const uint4*>(&mixed[m]);
      __syncwarp();
      // chunk c = 32r + lane is vector c % S of lane c / S
#pragma unroll
      for (int r = 0; r < S; ++r) {
        const int c = 32 * r + lane, src = c / S, m = c - src * S;
        const int64_t base = __shfl_sync(0xffffffffu, interleaved, src);
        if (first + src < p.units)
          *reinterpret_cast<uint4*>(out + base + m * step) = staged[Staged::at(c)];
      }
      __syncwarp();  // the staging area is read before the next trip writes it
    } else {
      if (!active) continue;
#pragma unroll
      for (int m = 0; m < S; ++m) mixed[m] = *reinterpret_cast<const Vec<T, V>*>(in + interleaved + m * step);
#pragma unroll
      for (int n = 0; n < S * V; ++n) planes[n % S].v[n / S] = mixed[n / V].v[n % V];
#pragma unroll
      for (int k = 0; k < S; ++k) *reinterpret_cast<Vec<T, V>*>(out + planar + k * p.plane) = planes[k];
    }
  }
}

}  // namespace torch_grouped::kernels
