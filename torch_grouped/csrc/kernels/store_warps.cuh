// Store warps: the epilogue's global stores issued by warps that do no math, so that a tile's
// output drains while the consumers run the next tile's WGMMAs.
//
// Why: with a short K per tile (an MoE weight gradient, K ≈ 256 per expert) a 128 x 256 tile's
// 64 KB of output take as long to reach DRAM as its MMAs take to compute, and stores issued by
// the consumers themselves stall them until the memory system takes the data: the weight
// gradient's time was the sum of its stores alone (every group empty: 317 µs for DeepSeek-V3
// down) and its MMAs (598 µs in all; H100, session 24). TMA stores did not overlap either (the
// consumers wait for the engine to read each chunk buffer, and the loads queue behind the
// stores; sessions 10 and 23).
//
// How: the consumers convert the tile into one shared buffer (the whole tile, 2-byte elements,
// 16-byte units swizzled by row so that both the pair writes and the row reads are free of bank
// conflicts), describe it (StagedTile), and go on; warps 1-3 of the producer warpgroup (idle
// otherwise: one thread of warp 0 issues the TMA loads) copy it to global memory with 16-byte
// stores. Two named barriers hand the buffer back and forth: kStaged (consumers arrive, store
// warps wait) and kFree (store warps arrive, consumers wait before they write the next tile).
#pragma once
#include <cstdint>

#include <cute/tensor.hpp>

#include "float_convert.cuh"

namespace torch_grouped::kernels {

// What the store warps need of a staged tile: where its element (0, 0) goes, the output's row
// stride, and how many of its rows and columns lie inside the problem (16-byte aligned rows:
// a column count that is not a multiple of 8 never comes here). `end`: no tile, the walk is over.
struct StagedTile {
  char* dst;
  int64_t ldc;  // elements
  int32_t rows, cols;
  int32_t end;
};

template <int BM, int BN>
struct EpilogueStoreWarps {
  static constexpr int Units = BN / 8;            // 16-byte units of a staged row (2-byte elements)
  static constexpr int Threads = 96;              // warps 1-3 of the producer warpgroup
  static constexpr int Handoff = 2 * 128 + Threads;  // both consumer warpgroups and the store warps
  // Named barrier ids: past CUTLASS's reserved 0-7 and the kernels' own (8 + 1 + warpgroup).
  static constexpr uint32_t kStaged = 11, kFree = 12;
  static_assert(BM % 8 == 0 && Units % 8 == 0, "the swizzle permutes 8 units within each row");

  // bar.sync / bar.arrive with a memory clobber, so that the compiler keeps the shared-memory
  // accesses on their side of the hand-over (the barrier orders them for the hardware).
  static __device__ __forceinline__ void sync(uint32_t id) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(Handoff) : "memory");
  }
  static __device__ __forceinline__ void arrive(uint32_t id) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(Handoff) : "memory");
  }

  // Element offset of (row, col) in the staged tile: unit col / 8 of row `row` at unit
  // (col / 8) ^ (row % 8). A warp's pair writes (8 rows x 4 pairs of one unit) then fall in eight
  // distinct units, 32 banks; a warp's reads (32 consecutive units of one row) are one row.
  static __device__ __forceinline__ int offset(int row, int col) {
    return row * BN + (((col / 8) ^ (row % 8)) * 8) + col % 8;
  }

  // Consumers (all 256 threads, every tile): wait until the store warps have read the last tile,
  // stage this one, describe it, and hand it over. `coords(i)`: the tile (row, col) of value i.
  template <class Out, class Acc, class Coords>
  static __device__ __forceinline__ void hand_over(const Acc& acc, const Coords& coords, Out* tile,
                                                   StagedTile& staged, const StagedTile& description, int thread) {
    sync(kFree);
    CUTE_UNROLL
    for (int i = 0; i < int(cute::size(acc)); i += 2) {
      const int r = int(cute::get<0>(coords(i))), c = int(cute::get<1>(coords(i)));
      store_pair(tile + offset(r, c), acc(i), acc(i + 1));
    }
    if (thread == 0) staged = description;
    arrive(kStaged);
  }

  // Consumers, after their last tile: tell the store warps to stop.
  static __device__ __forceinline__ void finish(StagedTile& staged, int thread) {
    sync(kFree);
    if (thread == 0) staged.end = 1;
    arrive(kStaged);
  }

  // Store warps (`t` = 0 .. 95): copy each staged tile out, 16 bytes a store, until the end.
  static __device__ __forceinline__ void run(const uint4* tile, const StagedTile& staged, int t) {
    arrive(kFree);  // the buffer starts free
    while (true) {
      sync(kStaged);
      const StagedTile d = staged;
      if (d.end) return;
      auto store = [&](int v) __attribute__((always_inline)) {
        const int r = v / Units, u = v % Units;
        store_global_16(d.dst + (int64_t(r) * d.ldc + u * 8) * 2, tile[r * Units + (u ^ (r % 8))]);
      };
      if (d.rows == BM && d.cols == BN) {  // a whole tile: no bounds (most of them)
#pragma unroll 4
        for (int v = t; v < BM * Units; v += Threads) store(v);
      } else {
        for (int v = t; v < BM * Units; v += Threads) {
          if (v / Units < d.rows && (v % Units) * 8 < d.cols) store(v);
        }
      }
      arrive(kFree);  // read: the consumers may refill it
    }
  }
};

}  // namespace torch_grouped::kernels
