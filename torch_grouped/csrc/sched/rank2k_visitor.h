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

// Whether every element of tile (i, j) lies in the `uplo` triangle (the diagonal included): the
// tiles whose store needs no mask. A square tile on the diagonal does not; nor, with 128 x 256
// tiles, one whose columns reach past its rows' diagonal elements.
TG_HOST_DEVICE bool tile_inside_triangle(TileShape tile, Uplo uplo, int64_t i, int64_t j) {
  const int64_t row_first = i * tile.m, row_last = (i + 1) * tile.m - 1;
  const int64_t col_first = j * tile.n, col_last = (j + 1) * tile.n - 1;
  return uplo == Uplo::Lower ? row_first >= col_last : row_last <= col_first;
}

// Whether syr2k's tile walk runs faster in 2 x 1 clusters (kernels/grouped_gemm_sm90.cuh). Where
// full waves of CTAs pull their operands from L2 together, a clustered CTA finishes its 128 x 128
// tile in about kRank2KClusterTileTime of the time a CTA alone takes (the B-role multicast: n =
// 8192, k = 1024, 16 waves either way: 337 against 364 µs); a walk of less than two waves gains
// nothing from it and loses to the cluster's constraints (n = 1024: 28.0 against 27.2 µs; n =
// 2048, k = 1024, 136 tiles: 50.3 against 46.9). And the 256 x 128 pair tiles come in waves of
// the resident clusters, which can cost a wave (n = 4096: 272 pairs on 66 clusters take 5 waves
// where 528 tiles on 132 CTAs take 4: 289 against 244 µs). H100, session 13. `tiles` and
// `pairs`: the walk's slots without and with clusters; `ctas` and `clusters`: how many run at once.
inline constexpr double kRank2KClusterTileTime = 0.93;
TG_HOST_DEVICE bool rank2k_clusters_pay(int64_t tiles, int64_t ctas, int64_t pairs, int64_t clusters) {
  return tiles >= 2 * ctas && static_cast<double>(ceil_div(pairs, clusters)) * kRank2KClusterTileTime <
                                   static_cast<double>(ceil_div(tiles, ctas));
}

// The walk of a Rank2K kernel whose CTAs run in clusters of `cluster` along M: pair tiles of
// cluster·tm x tn (macro tiles of the triangle), each CTA one tm x tn member.
TG_HOST_DEVICE SymmetricTiles cluster_walk(SymmetricTiles tiles, int32_t cluster) {
  return SymmetricTiles{Rank2KTiles{{tiles.triangle.tile.m * cluster, tiles.triangle.tile.n}, tiles.triangle.uplo},
                        tiles.all_tiles};
}

// The cluster size (1 or 2) for syr2k's tile walk over problems of orders n[0..count) with 128-row
// tiles `tiles` (tiles.triangle.tile square), given how many CTAs and 2-CTA clusters run at once.
inline int rank2k_walk_cluster(const int64_t* n, int32_t count, SymmetricTiles tiles, int64_t ctas, int64_t clusters) {
  if (clusters <= 0) return 1;
  const GroupSizes sizes{n, n, count};
  return rank2k_clusters_pay(total_tiles(sizes, tiles), ctas, total_tiles(sizes, cluster_walk(tiles, 2)), clusters) ? 2
                                                                                                                   : 1;
}

}  // namespace torch_grouped::sched
