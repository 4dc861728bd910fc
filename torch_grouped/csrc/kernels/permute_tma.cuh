// tile2d with TMA loads (TORCH_GROUPED_PERMUTE_KERNEL=tma): the same tiles and the same store
// phase as tile2d_copy (kernels/permute.cuh), but the load phase is one thread issuing
// cp.async.bulk.tensor per tile into a ring of kTmaStages shared-memory tiles, completing on one
// mbarrier per stage. Why: tile2d's loads cost registers (4 vectors per thread held across the
// store phase) and a tile of address math per block step; with TMA a block keeps kTmaStages - 1
// tiles in flight while it stores one, and no thread computes a load address.
//
// The input map (encoded on the host, cuda/permute_tma.cu) is 5-D, in bytes along i:
//   d0 = i (bytes), d1 = o / V, d2 = o % V, d3 = inner batch axis, d4 = outer batch axis,
// with a box of {128 B, TO / V, V, 1, 1} and the 128-byte swizzle. Splitting o puts the V rows of
// an o-group TO/V rows apart in shared memory, so the swizzle key of a row (row % 8) is its
// group's index % 8: the store phase's reads (V rows of one group per lane, 8 groups per warp)
// then fall in distinct banks exactly as with tile2d's own (row / V) % 8 swizzle.
// Out-of-bounds parts of a box are zero-filled by TMA (and never stored).
#pragma once
#include <cuda.h>

#include "permute.cuh"

namespace torch_grouped::kernels {

constexpr int kTmaStages = 4;
constexpr int kTmaTileBytes = kTile2dRows * 128;  // 16 KB
// Dynamic shared memory of a block: the ring, 1024 bytes of slack to align it for the 128-byte
// swizzle (whose pattern repeats every 1024 bytes), the barriers.
constexpr int kTmaSmemBytes = kTmaStages * kTmaTileBytes + 1024 + kTmaStages * 8;

struct Tile2dTmaPlan {
  CUtensorMap map;  // 64-byte aligned: first
  Tile2dPlan p;     // p.batch == 2 (size-1 axes pad it on the host)
};

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void tma_load_5d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int32_t c0,
                                            int32_t c1, int32_t c2, int32_t c3, int32_t c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// Issues the TMA load of tile `t` into the stage at shared address `dst` (one thread).
template <typename T>
__device__ __forceinline__ void tile2d_tma_issue(const Tile2dTmaPlan& P, uint32_t t, uint32_t dst, uint32_t bar) {
  using Tr = Tile2dTraits<T>;
  int32_t b[2];
  const Tile2dOrigin o = tile2d_origin<2>(P.p, t, Tr::TI, Tr::TO, b);
  mbar_expect_tx(bar, kTmaTileBytes);  // the whole box counts, out-of-bounds zeros included
  tma_load_5d(dst, &P.map, bar, o.i0 * Tr::E, o.o0 / Tr::V, 0, b[1], b[0]);
}

// Persistent: block b takes tiles b, b + grid, ...; tile k of the block uses stage k % kTmaStages.
template <typename T>
__global__ void __launch_bounds__(kPermuteThreads) tile2d_tma_copy(T* __restrict__ out,
                                                                   const __grid_constant__ Tile2dTmaPlan P) {
  using Tr = Tile2dTraits<T>;
  extern __shared__ unsigned char smem_raw[];
  // Align the ring to 1024 bytes from the array itself, so the compiler keeps the shared space.
  const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  unsigned char* ring = smem_raw + ((1024 - raw % 1024) % 1024);
  const uint32_t ring_s = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
  const uint32_t bars = ring_s + kTmaStages * kTmaTileBytes;
  const uint32_t total = static_cast<uint32_t>(P.p.total_tiles);
  if (blockIdx.x >= total) return;
  const uint32_t count = (total - 1 - blockIdx.x) / gridDim.x + 1;  // tiles of this block
  if (threadIdx.x == 0) {
    for (int s = 0; s < kTmaStages; ++s) mbar_init(bars + 8 * s, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (uint32_t k = 0; k < count && k < kTmaStages; ++k)
      tile2d_tma_issue<T>(P, blockIdx.x + k * gridDim.x, ring_s + k * kTmaTileBytes, bars + 8 * k);
  }
  __syncthreads();  // the barriers are initialised before anyone waits on them
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t s = k % kTmaStages;
    int32_t unused[2];
    const Tile2dOrigin o = tile2d_origin<2>(P.p, blockIdx.x + k * gridDim.x, Tr::TI, Tr::TO, unused);
    mbar_wait(bars + 8 * s, (k / kTmaStages) & 1);
    tile2d_store<T, true>(out, ring + s * kTmaTileBytes, P.p, o);
    __syncthreads();  // every thread is done reading stage s
    if (threadIdx.x == 0 && k + kTmaStages < count) {
      // the stage's next writer is the async proxy: order the generic reads before it
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      tile2d_tma_issue<T>(P, blockIdx.x + (k + kTmaStages) * gridDim.x, ring_s + s * kTmaTileBytes, bars + 8 * s);
    }
  }
}

}  // namespace torch_grouped::kernels
