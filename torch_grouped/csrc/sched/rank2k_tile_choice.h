// syr2k's tile for one problem: 128 x 128 (square: the least waste on the diagonal, the
// clustered walk) or 128 x 256 (256 x 256 macro tiles of the triangle walk, two tiles each: fewer
// operand bytes per MAC), weighed by the Rank2K Stream-K model (rank2k_calibration.h). Host only;
// shared by syr2k's CUDA path and a private op for the CPU tests (grouped::_rank2k_plan).
#pragma once
#include "rank2k_visitor.h"
#include "streamk_model.h"
#include "streamk_plan.h"

namespace torch_grouped::sched {

// The 128 x 256 tile's model, from the 128 x 128 one: a 64-deep K block of twice the MACs in
// kRank2KWideBlockCost times the time, the other terms as the square tile's. Measured per block,
// the wide tile's K loop takes 1.24 times the square one's (0.655 against 0.53 µs; it reads 48 KB
// per 4.2 MFLOP against 32 KB per 2.1), but its epilogue writes twice the bytes while both
// consumer warpgroups store, and the fixed term a does not grow with it: 1.75 (streamk_mm's fits
// put the same ratio at 1.76) picks as measured on four of the five shapes syr2k was measured on
// (H100, session 15: n = 8192, k = 1024 wide, 252 against 274 µs; n = 4096, k = 4096, n = 2048,
// k = 8192, and n = 1024 square) and gives the fifth, a near tie, to the wide tile (n = 2048,
// k = 1024: 38.5 against 37.1 µs). Only its data-parallel walk is weighed: over Stream-K
// units the wide tile ran far slower than its K loop's rate (n = 2048, k = 8192: 156 µs where 140
// of its iterations per CTA predict 92; the square tile's Stream-K: 140).
inline constexpr double kRank2KWideBlockCost = 1.75;
inline StreamKModel rank2k_wide_model(StreamKModel square) {
  square.c *= kRank2KWideBlockCost;
  return square;
}

// The problem a Stream-K plan sees for one syr2k problem of order n walked in `tiles`: one row of
// the walk's slots, each 2·ceil(k / tile_k) K blocks (both passes: A Bᵀ, then B Aᵀ).
struct Rank2KPlanShape {
  int64_t m, n, k, tile_m, tile_n;
};
inline Rank2KPlanShape rank2k_plan_shape(int64_t n, int64_t k, const SymmetricTiles& tiles, int64_t tile_k) {
  const TileShape t = tiles.triangle.tile;
  return {t.m, tiles.count(n, n) * t.n, 2 * ceil_div(k, tile_k) * tile_k, t.m, t.n};
}

// What one problem in `tiles` asks of the Stream-K plan resolution (resolve_streamk_plan, or its
// cache on the GPU): the square tile's model, or for 128 x 256 tiles rank2k_wide_model, whose
// `auto` weighs only the data-parallel walk; decomposition `d` (or `auto`) as given otherwise.
// `auto` weighs split-K in the count that fills the grid as well (choose_streamk_plan): n = 1024's
// 36 tiles on 132 SMs in 3 slices. In fp32 (3xTF32: 192 K blocks a tile) the H100 model's best
// power of two, 2 slices, ran 69.6 µs and 3 slices 57.3 (stream_k 63.4, data-parallel 101; H100,
// session 35); the model predicts 46.9 and 43.5.
struct Rank2KPlanRequest {
  StreamKModel model;
  Decomposition decomposition;
  bool is_auto;
  Rank2KPlanShape shape;
};
inline Rank2KPlanRequest rank2k_plan_request(const StreamKModel& square, const SymmetricTiles& tiles, int64_t n,
                                             int64_t k, int64_t tile_k, Decomposition d, bool is_auto) {
  const bool wide = tiles.triangle.tile.n != tiles.triangle.tile.m;
  if (wide && is_auto) is_auto = false, d = Decomposition::DataParallel;
  return {wide ? rank2k_wide_model(square) : square, d, is_auto, rank2k_plan_shape(n, k, tiles, tile_k)};
}

// Whether the 128 x 256 tile's plan (`auto`: its data-parallel walk) is predicted faster than the
// square tile's (`auto`: its best plan), under the square tile's model `square`.
inline bool rank2k_wide_tile_pays(const StreamKModel& square, const StreamKPlan& square_plan,
                                  const StreamKPlan& wide_plan) {
  return predicted_time(rank2k_wide_model(square), wide_plan, 128 * 256) < predicted_time(square, square_plan, 128 * 128);
}

// How a request becomes a plan: resolve_streamk_plan, or on the GPU its cache
// (resolve_streamk_plan_cached), which takes the same arguments.
using StreamKPlanResolver = StreamKPlan (*)(const StreamKModel& model, Decomposition d, bool is_auto, int64_t splits,
                                            int64_t m, int64_t n, int64_t k, int64_t tile_m, int64_t tile_n,
                                            int64_t tile_k, int64_t grid, bool may_separate);

// syr2k's choice for one problem of order n and kernel depth k (3xTF32: its three parts) in K
// steps of tile_k (64; 32: the TF32 kernel, which runs 128 x 128 tiles only; a TF32 step costs
// about what a 16-bit one does: half the MACs at half the rate) on `sms` CTAs: its
// tiles and plan. 128 x 128 or 128 x 256 tiles as rank2k_wide_tile_pays weighs them, unless
// `forced_tile_n` (128 or 256; 0: none) names one; decomposition `d`, or `auto`. The CUDA path and
// the CPU tests' private op (grouped::_rank2k_plan) both make it here.
struct Rank2KOneProblem {
  SymmetricTiles tiles;
  StreamKPlan plan;
};
inline Rank2KOneProblem rank2k_one_problem(const StreamKModel& square, int64_t n, int64_t k, int64_t tile_k,
                                           Uplo uplo, Decomposition d, bool is_auto, int32_t forced_tile_n,
                                           int64_t sms, StreamKPlanResolver resolve) {
  auto work = [&](int32_t tile_n) {
    const SymmetricTiles tiles{Rank2KTiles{{128, tile_n}, uplo}, false};
    const Rank2KPlanRequest r = rank2k_plan_request(square, tiles, n, k, tile_k, d, is_auto);
    const Rank2KPlanShape& s = r.shape;
    return Rank2KOneProblem{tiles, resolve(r.model, r.decomposition, r.is_auto, 0, s.m, s.n, s.k, s.tile_m, s.tile_n,
                                           tile_k, sms, /*may_separate=*/false)};
  };
  if (tile_k != 64) forced_tile_n = 128;
  if (forced_tile_n > 0) return work(forced_tile_n);
  const Rank2KOneProblem narrow = work(128), wide = work(256);
  return rank2k_wide_tile_pays(square, narrow.plan, wide.plan) ? wide : narrow;
}

}  // namespace torch_grouped::sched
