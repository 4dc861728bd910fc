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
#pragma once
#include "grouped_visitor.h"

namespace torch_grouped::sched {

// `Sizes` maps a group index to its (m, n): `TG_HOST_DEVICE void operator()(int32_t g, int64_t&
// m, int64_t& n) const`, called only for g < count.
template <class Tiles, class Sizes, bool Remember = true>
struct WarpGroupedVisitor {
  Sizes sizes;
  int32_t count;
  Tiles tiles;
  int32_t window = 0;        // first group of the 32 the warp looks at
  int64_t window_first = 0;  // linear index of that group's first tile
  int64_t found_tiles = 0;   // tiles of group `window` once a search found it there (0: none yet)
  int64_t found_m = 0, found_n = 0;  // its sizes

  // Every lane gets the same answer. Returns false once `index` is past the last tile.
  __device__ __forceinline__ bool find(int64_t index, TileCoord& out, int64_t& m, int64_t& n) {
    if constexpr (Remember) {
      if (index - window_first < found_tiles) {  // the group of the last answer (index never decreases)
        m = found_m, n = found_n;
        out = tiles.coord(window, m, n, index - window_first);
        return true;
      }
    }
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
        if constexpr (Remember) found_tiles = __shfl_sync(0xffffffffu, own, owner), found_m = m, found_n = n;
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
