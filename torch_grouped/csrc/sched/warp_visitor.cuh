// The warp-parallel "device-only" problem visitor of seed 000: the GPU twin of GroupedVisitor
// (grouped_visitor.h), for problems whose sizes only the device knows (grouped_mm's offsets).
//
// All 32 lanes of a warp call find() together. Lane i owns group `window + i`: it reads that
// group's sizes, counts its tiles with the shared Tiles policy, a warp-wide inclusive prefix sum
// gives every lane the first tile after its group, and a ballot finds the lane whose group holds
// the tile. Like the sequential visitor, the window only moves forward because a CTA's tile
// indices only grow, so a whole walk reads each group's sizes about once per 32 groups passed.
#pragma once
#include "grouped_visitor.h"

namespace torch_grouped::sched {

// `Sizes` maps a group index to its (m, n): `TG_HOST_DEVICE void operator()(int32_t g, int64_t&
// m, int64_t& n) const`, called only for g < count.
template <class Tiles, class Sizes>
struct WarpGroupedVisitor {
  Sizes sizes;
  int32_t count;
  Tiles tiles;
  int32_t window = 0;        // first group of the 32 the warp looks at
  int64_t window_first = 0;  // linear index of that group's first tile

  // Every lane gets the same answer. Returns false once `index` is past the last tile.
  __device__ __forceinline__ bool find(int64_t index, TileCoord& out, int64_t& m, int64_t& n) {
    const int lane = threadIdx.x & 31;
    while (window < count) {
      const int32_t g = window + lane;
      int64_t gm = 0, gn = 0;
      if (g < count) sizes(g, gm, gn);
      const int64_t own = g < count ? tiles.count(gm, gn) : 0;
      int64_t inclusive = own;  // tiles of groups window..g
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int64_t up = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= d) inclusive += up;
      }
      const int64_t window_tiles = __shfl_sync(0xffffffffu, inclusive, 31);
      if (index < window_first + window_tiles) {
        const unsigned hit = __ballot_sync(0xffffffffu, index < window_first + inclusive);
        const int owner = __ffs(hit) - 1;
        const int64_t first = window_first + __shfl_sync(0xffffffffu, inclusive - own, owner);
        m = __shfl_sync(0xffffffffu, gm, owner);
        n = __shfl_sync(0xffffffffu, gn, owner);
        window += owner;  // the next tile is in this group or a later one
        window_first = first;
        out = tiles.coord(window, m, n, index - first);
        return true;
      }
      window += 32;
      window_first += window_tiles;
    }
    return false;
  }
};

}  // namespace torch_grouped::sched
