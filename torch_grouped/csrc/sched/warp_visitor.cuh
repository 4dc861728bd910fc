// The warp-parallel "device-only" problem visitor of seed 000: the GPU twin of GroupedVisitor
// (grouped_visitor.h), for problems whose sizes only the device knows (grouped_mm's offsets).
//
// All 32 lanes of a warp call find() together. Lane i owns group `window + i`: it reads that
// group's sizes, counts its tiles with the shared Tiles policy, a warp-wide inclusive prefix sum
// gives every lane the first tile after its group, and a ballot finds the lane whose group holds
// the tile. Like the sequential visitor, the window only moves forward because a CTA's tile
// indices only grow, so a whole walk reads each group's sizes about once per 32 groups passed.
// With `Remember`, the group of the last answer is kept as well: a CTA often takes several tiles
// of a group in a row (an MoE weight gradient: ~3 of an expert's 448), and those skip the search
// (its reads of the sizes, five 64-bit shuffle steps and the ballot: ~16% of the warps' stall
// samples between the K loops of the DeepSeek-V3 down weight gradient, H100, session 22). It
// costs registers, which the kernels whose tiles have long K loops keep for other things.
//
// The lanes' primitives come from a `Warp` policy: DeviceWarp on the GPU (this thread is one lane;
// the intrinsics, so the kernels' code is what it was without the policy), and on the CPU
// cpu/warp_emulation.h's EmulatedWarp, which runs the same find() on 32 host threads in lockstep,
// so that the CPU tests check the lane algorithm itself against the sequential visitor.
#pragma once
#include "grouped_visitor.h"

#if defined(__CUDACC__)
#define TG_WARP_FN __device__ __forceinline__
#else
#define TG_WARP_FN inline
#endif

namespace torch_grouped::sched {

#if defined(__CUDACC__)
struct DeviceWarp {
  __device__ __forceinline__ static int lane() { return threadIdx.x & 31; }
  template <class T>
  __device__ __forceinline__ static T shfl(T v, int src) { return __shfl_sync(0xffffffffu, v, src); }
  template <class T>
  __device__ __forceinline__ static T shfl_up(T v, int delta) { return __shfl_up_sync(0xffffffffu, v, delta); }
  __device__ __forceinline__ static unsigned ballot(bool predicate) { return __ballot_sync(0xffffffffu, predicate); }
  __device__ __forceinline__ static int first_lane(unsigned mask) { return __ffs(mask) - 1; }
};
#endif

// `Sizes` maps a group index to its (m, n): `void operator()(int32_t g, int64_t& m, int64_t& n)
// const`, called only for g < count. `Warp`: DeviceWarp, or the CPU's EmulatedWarp.
template <class Tiles, class Sizes, bool Remember, class Warp>
struct WarpGroupedVisitor {
  Sizes sizes;
  int32_t count;
  Tiles tiles;
  int32_t window = 0;        // first group of the 32 the warp looks at
  int64_t window_first = 0;  // linear index of that group's first tile
  int64_t found_tiles = 0;   // tiles of group `window` once a search found it there (0: none yet)
  int64_t found_m = 0, found_n = 0;  // its sizes

  // Every lane gets the same answer. Returns false once `index` is past the last tile.
  TG_WARP_FN bool find(int64_t index, TileCoord& out, int64_t& m, int64_t& n) {
    if constexpr (Remember) {
      if (index - window_first < found_tiles) {  // the group of the last answer (index never decreases)
        m = found_m, n = found_n;
        out = tiles.coord(window, m, n, index - window_first);
        return true;
      }
    }
    const int lane = Warp::lane();
    while (window < count) {
      const int32_t g = window + lane;
      int64_t gm = 0, gn = 0;
      if (g < count) sizes(g, gm, gn);
      const int64_t own = g < count ? tiles.count(gm, gn) : 0;
      int64_t inclusive = own;  // tiles of groups window..g
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int64_t up = Warp::shfl_up(inclusive, d);
        if (lane >= d) inclusive += up;
      }
      const int64_t window_tiles = Warp::shfl(inclusive, 31);
      if (index < window_first + window_tiles) {
        const unsigned hit = Warp::ballot(index < window_first + inclusive);
        const int owner = Warp::first_lane(hit);
        const int64_t first = window_first + Warp::shfl(inclusive - own, owner);
        m = Warp::shfl(gm, owner);
        n = Warp::shfl(gn, owner);
        if constexpr (Remember) found_tiles = Warp::shfl(own, owner), found_m = m, found_n = n;
        window += owner;  // the next tile is in this group or a later one
        window_first = first;
        out = tiles.coord(window, m, n, index - first);
        return true;
      }
      window += 32;
      window_first += window_tiles;
      if constexpr (Remember) found_tiles = 0;
    }
    return false;
  }
};

}  // namespace torch_grouped::sched
