// The grouped Rank2K scheduler of seed 000: a tile index maps to a tile of the lower (or upper)
// triangle only, so CTAs are never handed tiles that a symmetric output does not need.
//
// A problem of order n with tile tm × tn is seen as a square grid of G × G "macro tiles" of side
// max(tm, tn), G = ceil(n / max(tm, tn)). Each macro tile holds r = max/min true tiles (tile shapes
// are powers of two, so r is an integer). The macro triangle has G(G+1)/2 tiles, so a problem has
// r·G(G+1)/2 slots. Macro index t → (i, j) in closed form: i = ceil(sqrt(2t + 2.25) − 0.5) − 1,
// j = t − i(i+1)/2 (corrected in integers, since the square root is floating point). When the true
// grid does not divide into macro tiles, the larger grid dimension is padded: the slots that land
// past the real grid come back with valid = false and the CTA skips them. Upper = swapped (i, j).
#pragma once
#include <math.h>

#include "common.h"
#include "grouped_visitor.h"

namespace torch_grouped::sched {

enum class Uplo : int32_t { Lower = 0, Upper = 1 };

// Row i of the lower triangle holds macro indices [i(i+1)/2, (i+1)(i+2)/2).
TG_HOST_DEVICE void triangle_row_col(int64_t t, int64_t& i, int64_t& j) {
  i = static_cast<int64_t>(ceil(sqrt(2.0 * static_cast<double>(t) + 2.25) - 0.5)) - 1;
  while (i > 0 && i * (i + 1) / 2 > t) --i;            // the sqrt rounded up
  while ((i + 1) * (i + 2) / 2 <= t) ++i;              // the sqrt rounded down
  j = t - i * (i + 1) / 2;
}

struct Rank2KTiles {
  TileShape tile;
  Uplo uplo;

  TG_HOST_DEVICE int64_t ratio() const {
    return tile.m > tile.n ? tile.m / tile.n : tile.n / tile.m;
  }
  TG_HOST_DEVICE int64_t macro_side() const { return tile.m > tile.n ? tile.m : tile.n; }
  // Slots of a problem of order n (m == n for Rank2K; m is ignored).
  TG_HOST_DEVICE int64_t count(int64_t m, int64_t n) const {
    (void)m;
    const int64_t g = ceil_div(n, macro_side());
    return ratio() * g * (g + 1) / 2;
  }
  TG_HOST_DEVICE TileCoord coord(int32_t group, int64_t m, int64_t n, int64_t local) const {
    (void)m;
    const int64_t r = ratio();
    int64_t im, jm;
    triangle_row_col(local / r, im, jm);
    if (uplo == Uplo::Upper) {
      const int64_t swap = im;
      im = jm;
      jm = swap;
    }
    int64_t i = im, j = jm;
    if (tile.m > tile.n) {
      j = jm * r + local % r;
    } else if (tile.m < tile.n) {
      i = im * r + local % r;
    }
    const bool valid = i < ceil_div(n, tile.m) && j < ceil_div(n, tile.n);
    return TileCoord{group, static_cast<int32_t>(i), static_cast<int32_t>(j), valid};
  }
};

// The tiles of a symmetric output: the Rank2K walk over the triangle, or, with `all_tiles`, the
// plain GEMM walk over the whole square (the grouped GEMM scheduler, which the Rank2K scheduler
// is measured against).
struct SymmetricTiles {
  Rank2KTiles triangle;
  bool all_tiles;
  TG_HOST_DEVICE GemmTiles square() const { return GemmTiles{triangle.tile}; }
  TG_HOST_DEVICE int64_t count(int64_t m, int64_t n) const {
    return all_tiles ? square().count(n, n) : triangle.count(m, n);
  }
  TG_HOST_DEVICE TileCoord coord(int32_t group, int64_t m, int64_t n, int64_t local) const {
    return all_tiles ? square().coord(group, n, n, local) : triangle.coord(group, m, n, local);
  }
};

// Whether tile (i, j) of an order-n problem holds any element of the `uplo` triangle: these are
// exactly the tiles the walk must produce.
TG_HOST_DEVICE bool tile_meets_triangle(TileShape tile, Uplo uplo, int64_t i, int64_t j) {
  const int64_t row_first = i * tile.m, row_last = (i + 1) * tile.m - 1;
  const int64_t col_first = j * tile.n, col_last = (j + 1) * tile.n - 1;
  return uplo == Uplo::Lower ? row_last >= col_first : row_first <= col_last;
}

// The square tile of a syr2k call on a GPU of `sms` SMs: 128 (one CTA per SM) or 64 (two CTAs per
// SM, the pair at `pair_rate` of one 128x128 CTA's throughput: smaller tiles load more bytes per
// MAC). Each is timed as its number of waves of equal tiles, in units of one 128x128 tile's time.
// Few 128 tiles (order 1024: 36 tiles on 132 SMs) or an almost empty last wave (order 2048: 136
// tiles, two waves) go faster in 64 tiles; many waves keep the more efficient 128.
// `orders` are the groups' n; `all_tiles` counts the whole square (the GEMM walk).
inline constexpr double kRank2KPairRate = 0.7;  // H100 guess, see benchmarks/NOTES.md
inline int choose_rank2k_tile(const int64_t* orders, size_t groups, int sms, bool all_tiles,
                              double pair_rate = kRank2KPairRate) {
  auto waves = [&](int32_t tile, int64_t slots) {
    const SymmetricTiles tiles{Rank2KTiles{{tile, tile}, Uplo::Lower}, all_tiles};
    int64_t count = 0;
    for (size_t g = 0; g < groups; ++g) count += tiles.count(orders[g], orders[g]);
    return double(ceil_div(count, slots));
  };
  const double t128 = waves(128, sms), t64 = waves(64, 2 * int64_t(sms)) * 0.5 / pair_rate;
  return t64 < t128 ? 64 : 128;
}

}  // namespace torch_grouped::sched
