// The Stream-K paper's analytical model of a CTA's running time, used by `auto` to pick the
// decomposition and grid:  time(g) = a + b·[peers > 1] + c·iters_per_cta(g) + d·(reads − 1)
// + e·[a Stream-K tile is cut] + f·(extra partial MB),
// peers being the most segments a tile is cut into and reads the partials that the fixup's
// slowest path reads one after another (StreamKPlan::fixup_serial_reads: peers itself up to 8
// peers; beyond, about 2·sqrt(peers) where the fixup sums in two levels, 2 where the separate
// kernel sums in parallel: the paper's d·(peers − 1) with the fixup as we run it).
//   a: fixed cost of a CTA (launch, prologue, epilogue of one tile)
//   b: cost of having to fix up at all (workspace write, flag wait)
//   c: cost of one MAC-loop iteration
//   d: cost per partial read by the fixup
//   e: cost of cutting Stream-K tiles rather than only split-K slices (1408² x 8192 cut the same
//      way, every tile in two halves: 69.7 µs as Stream-K, 58.7 µs as split-K, H100, session 6)
//   f: cost per MB of fp32 partial tiles stored beyond one per cut tile (FixupStats::extra_partials)
// e and f are not in the paper: with a-d alone the picks were 1.045x the best measured
// configuration (leave-one-shape-out over session 6's sweep of 26 shapes), Stream-K on all 132
// SMs taken where split-K or a smaller grid was up to 1.42x faster (512 x 1024 x 32768); with
// e and f, 1.007x (session 10, offline; benchmarks/NOTES.md).
// The constants are fitted per GPU model by benchmarks/calibrate_streamk.py; the defaults below
// are in units of one MAC iteration and are only a starting point for unknown GPUs.
#pragma once
#include "common.h"
#include "streamk_plan.h"

namespace torch_grouped::sched {

struct StreamKModel {
  double a = 4.0;
  double b = 3.0;
  double c = 1.0;
  double d = 1.5;
  double e = 0.0;
  double f = 0.0;
  // Not fitted: the GPU's DRAM time per MB at its peak rate (µs; 0: no floor), for the floor on
  // Stream-K plans whose CTAs share no operand blocks (unshared_operand_mb). streamk_mm sets it
  // from the device's memory clock and bus width; syr2k's plans leave it 0.
  double dram_us_per_mb = 0.0;
};

// The defaults for 128 x 128 tiles on a GPU without a calibration, in the same units (one
// 128 x 256 iteration): the H100's ratios of the narrow tile's a and c to the wide one's (0.68,
// 0.66; session 12's fit), the other terms as the wide tile's.
inline constexpr StreamKModel kDefaultNarrowModel{2.7, 3.0, 0.66, 1.5, 0.0, 0.0};

// The row-copy kernel's (128 x 128 tiles, operands copied row by row into the stages by the
// producer warpgroup: kernels/row_copy.cuh) on a GPU without a calibration of it: the narrow
// tile's, an iteration 2.5 times as dear (the H100's fitted ratio, 0.99 against 0.40 µs: the
// producer's copies bound the K loop; session 26).
inline constexpr StreamKModel kDefaultRowsModel{2.7, 3.0, 1.65, 1.5, 0.0, 0.0};

// The fp32 partial tiles of `tile_elements` elements that `stats` counts beyond one per cut tile, in MB.
inline double extra_partials_mb(const FixupStats& stats, int64_t tile_elements) {
  return static_cast<double>(stats.extra_partials) * static_cast<double>(tile_elements) * 4.0 / (1 << 20);
}

// The MAC-loop iterations of the busiest CTA as the model counts them: the Stream-K share (ranges
// differ by at most one) plus its rounds of data-parallel or split-K units at the longest slice.
inline int64_t model_iters_per_cta(const StreamKPlan& plan) {
  int64_t iters = plan.sk_tiles > 0 ? ceil_div(plan.sk_iters(), plan.sk_grid()) : 0;
  return iters + ceil_div(plan.dp_units(), plan.grid) * ceil_div(plan.iters_per_tile, plan.splits);
}

// The operand MB that `plan`'s CTAs read from DRAM where every tile is Stream-K and each CTA's
// range is shorter than a tile's K (each CTA inside one tile): the CTAs of different tiles then sit
// at unrelated K offsets, so each tile reads its A and B blocks alone, where a wave of split-K
// slices (or data-parallel tiles) covers one K range of every tile and shares the blocks in L2.
// 512² x 65536 (16 tiles): as Stream-K 108.7 µs, about its 537 MB of unshared reads at the H200's
// 4.9 TB/s; as split_k 8 60.6 (torch.mm 56.1); H200, session 48. An iteration reads 128 bytes of
// each operand row (a BK-wide K block). 0 elsewhere.
inline double unshared_operand_mb(const StreamKPlan& plan, int64_t tile_m, int64_t tile_n) {
  const int64_t tiles = plan.tiles();
  if (tiles < 2 || plan.sk_tiles != tiles || plan.iters_per_tile == 0) return 0.0;  // (then sk_grid() >= 1)
  if (ceil_div(plan.sk_iters(), plan.sk_grid()) >= plan.iters_per_tile) return 0.0;  // a CTA reaches a boundary
  const int64_t rows_per_tile = tile_m + tile_n;  // A's rows and B's columns of one tile
  const double bytes = static_cast<double>(tiles * rows_per_tile) * static_cast<double>(plan.iters_per_tile) * 128.0;
  return bytes / (1 << 20);
}

// Predicted time of the longest-running CTA of `plan`, whose tiles have `tile_elements` elements.
inline double predicted_time(const StreamKModel& model, const StreamKPlan& plan, int64_t tile_elements) {
  const int64_t tiles = plan.tiles();
  if (tiles == 0) return 0.0;
  const int64_t iters_per_cta = model_iters_per_cta(plan);
  const FixupStats stats = plan.fixup_stats();
  const int64_t peers = stats.max_segments;
  const int64_t reads = max64(stats.max_serial_reads, 1);  // 1 when no tile is cut: no term
  const double fixup = peers > 1 ? 1.0 : 0.0;
  return model.a + model.b * fixup + model.c * static_cast<double>(iters_per_cta) +
         model.d * static_cast<double>(reads - 1) + model.e * (stats.stream_k_cut ? 1.0 : 0.0) +
         model.f * extra_partials_mb(stats, tile_elements);
}

// The split count of an explicit split_k with splits = 0: enough slices to give every CTA work,
// between 2 and 16.
inline int64_t default_splits(int64_t grid, int64_t tiles) {
  const int64_t s = grid / max64(tiles, 1);
  return s < 2 ? 2 : (s > 16 ? 16 : s);
}

// `auto`: the decomposition (for split-K the split count, for Stream-K possibly half or a quarter
// of the grid) that minimises the model on at most `sms` CTAs.
// `predicted`, when given, receives the chosen plan's predicted time. Split-K is weighed in powers
// of two up to 16 and in the counts that fill the grid (default_splits; beyond 16 for fewer than
// 8 tiles, below) where those are none: syr2k fp32
// n = 1024 (36 tiles) ran 57 µs in 3 slices against 70 in 2 (rank2k_tile_choice.h), streamk_mm's
// 182 x 2064 x 43705 127 µs in 7 slices against 155 for its Stream-K pick, 673 x 289 x 40150 120
// against 144 (H100, session 35).
inline StreamKPlan choose_streamk_plan(const StreamKModel& model, int64_t m, int64_t n, int64_t k,
                                       int64_t tile_m, int64_t tile_n, int64_t tile_k, int64_t sms,
                                       bool may_separate, double* predicted = nullptr) {
  // The model's time, or the DRAM time of a Stream-K plan's unshared operand reads where that is longer.
  const auto predicted_time = [&](const StreamKModel& mo, const StreamKPlan& p, int64_t tile_elements) {
    const double floor = mo.dram_us_per_mb * unshared_operand_mb(p, tile_m, tile_n);
    const double t = sched::predicted_time(mo, p, tile_elements);
    return t > floor ? t : floor;
  };
  StreamKPlan best = make_streamk_plan(m, n, k, tile_m, tile_n, tile_k,
                                       Decomposition::DataParallel, 1, sms);
  double best_time = predicted_time(model, best, tile_m * tile_n);
  const Decomposition candidates[] = {Decomposition::StreamK, Decomposition::DpOneTileSk,
                                      Decomposition::TwoTileSkDp};
  for (Decomposition d : candidates) {
    const StreamKPlan p = make_streamk_plan(m, n, k, tile_m, tile_n, tile_k, d, 1, sms, may_separate);
    const double t = predicted_time(model, p, tile_m * tile_n);
    if (t < best_time) best = p, best_time = t;
  }
  // Stream-K on part of the grid: fewer segments per tile to reduce when tiles are few and long.
  for (int64_t g = sms / 2; g >= 8 && g >= sms / 4; g /= 2) {
    const StreamKPlan p =
        make_streamk_plan(m, n, k, tile_m, tile_n, tile_k, Decomposition::StreamK, 1, g, may_separate);
    const double t = predicted_time(model, p, tile_m * tile_n);
    if (t < best_time) best = p, best_time = t;
  }
  const auto try_split = [&](int64_t s) {
    const StreamKPlan p = make_streamk_plan(m, n, k, tile_m, tile_n, tile_k,
                                            Decomposition::SplitK, s, sms, may_separate);
    const double t = predicted_time(model, p, tile_m * tile_n);
    if (t < best_time) best = p, best_time = t;
  };
  for (int64_t s = 2; s <= 16; s *= 2) try_split(s);
  const int64_t tiles = ceil_div(m, tile_m) * ceil_div(n, tile_n);
  const int64_t fill = default_splits(sms, tiles);
  if ((fill & (fill - 1)) != 0) try_split(fill);
  // Fewer than 8 tiles: beyond 16 slices too, those that fill the grid and its halves (as Stream-K
  // weighs its half grids). The same iterations a CTA as Stream-K's, without its cuts (the e
  // term): 256² x 131072 split_k 33 51.1 µs against `auto`'s Stream-K 63.4, 219 x 157 x 10383
  // 22.4 against 23.3, 128² x 65536 split_k 66 23.8 against Stream-K on 66 CTAs 24.4 (H200,
  // session 48; the slices of one K range run side by side and share operand blocks in L2).
  for (int64_t s = sms / max64(tiles, 1); s > 16; s /= 2) try_split(s);
  if (predicted != nullptr) *predicted = best_time;
  return best;
}

// A tile the Stream-K kernel offers for streamk_mm and the model fitted on it: the constants
// differ per tile (a 128 x 128 iteration is half the MACs of a 128 x 256 one, but costs about two
// thirds of its time: it reads more operand bytes per MAC; H100, session 12).
struct StreamKTileOption {
  TileShape tile;
  StreamKModel model;
};

// `auto`'s tile: the index of the option whose best plan the model predicts fastest (the first
// on a tie). Narrow tiles win where wide ones leave SMs idle (few output tiles, short K); wide
// ones where every SM is busy anyway; 192 x 128 where its tiles fill one wave that the others'
// leave ragged. The tile is chosen per shape, for every decomposition, so that `data_parallel`
// and `auto` of one shape run the same tile (the benchmark compares them so).
inline int choose_streamk_tile(const StreamKTileOption* options, int count, int64_t m, int64_t n, int64_t k,
                               int64_t tile_k, int64_t sms, bool may_separate) {
  int best = 0;
  double best_time = 0.0;
  for (int i = 0; i < count; ++i) {
    double t = 0.0;
    choose_streamk_plan(options[i].model, m, n, k, options[i].tile.m, options[i].tile.n, tile_k, sms, may_separate, &t);
    if (i == 0 || t < best_time) best = i, best_time = t;
  }
  return best;
}

// The plan streamk_mm runs on `grid` CTAs: the model's choice for `auto`, else decomposition `d`
// (splits = 0: default_splits). `may_separate`: see make_streamk_plan.
inline StreamKPlan resolve_streamk_plan(const StreamKModel& model, Decomposition d, bool is_auto,
                                        int64_t splits, int64_t m, int64_t n, int64_t k, int64_t tile_m,
                                        int64_t tile_n, int64_t tile_k, int64_t grid, bool may_separate) {
  if (is_auto) return choose_streamk_plan(model, m, n, k, tile_m, tile_n, tile_k, grid, may_separate);
  if (splits <= 0) splits = default_splits(grid, ceil_div(m, tile_m) * ceil_div(n, tile_n));
  return make_streamk_plan(m, n, k, tile_m, tile_n, tile_k, d, splits, grid, may_separate);
}

// `plan`'s decomposition, split count and grid over a K loop of length k. For a loop of several
// passes over the same operands (3xTF32: hi·hi, hi·lo, lo·hi) `auto` chooses for one pass and runs
// the choice over all of them: the model, fitted on single passes, sees three times the iterations
// per tile as a reason for Stream-K's balance, but Stream-K's CTAs, spread over the tiles at
// different K offsets, share no operand block in L2 as a data-parallel wave does (fp32 4096³ in
// 3xTF32, H100, session 19: auto's stream_k 2.99 ms; one pass, data-parallel: 0.57 ms).
// `grid`: the CTAs the one-pass plan was made for (its own grid may be fewer: those with work).
inline StreamKPlan replan_for_k(const StreamKPlan& plan, int64_t m, int64_t n, int64_t k, int64_t tile_m,
                                int64_t tile_n, int64_t tile_k, int64_t grid, bool may_separate) {
  return make_streamk_plan(m, n, k, tile_m, tile_n, tile_k, plan.decomposition, plan.splits, grid, may_separate);
}

// Whether streamk_mm reads the operands TMA cannot address (rows 4-byte aligned at least) by row
// copies into its stages (kernels/row_copy.cuh) rather than through pitched copies. `a_width` and
// `b_width` are the cp.async pieces (4, 8 or 16 bytes) of the operands read so, 0 for one TMA reads;
// `pitched_beside`: the other operand's rows are only 2-byte aligned (an odd K or N), so it goes
// through a pitched copy whichever way this one goes. Measured on the 37 corpus shapes with an
// operand of 4-byte aligned rows (H100, session 25, benchmarks/NOTES.md; row copies of about three
// instructions a piece, 128 x 128 tiles against the pitched copies and `auto`'s tile):
// - a pitched copy costs a read and a write of its operand, a share of about 1/n (A) or 1/m (B) of
//   the matmul's time ("share" below, in units of 1/2750); the row copies cost the producer
//   warpgroup's copies, per 16 bytes of a row-copied operand 16/width of them ("load": 2 for one
//   operand of 8-byte pieces, 8 for both of 4), and the 128 x 128 tile where `auto` may take
//   128 x 256;
// - at most one tile per 16 CTAs the tiles' long K is spread over many CTAs and the operands'
//   bytes set the time: row copies (497 x 212 x 47612, 8 tiles: 109 -> 80 µs);
// - both operands readable: with load <= 4 they win where the copies are dear (share >= 1:
//   1559 x 1296 x 16966 294 -> 275 µs, 5117 x 196 x 6212 125 -> 113) and lose where they are cheap
//   (A of 2462 x 4928 x 286 +26%); load 6 or 8 loses wherever the tiles are many (1051 x 2898 x
//   5410 +41%) but wins within one wave (708 x 830 x 140: 14.3 -> 13.0 µs: no copy kernel at all;
//   383 x 1014 x 16638, load 8: 89 -> 81 µs once `auto` weighs the row-copy kernel's plans with
//   its own model, which takes Stream-K there: session 26);
// - beside a pitched copy (whose kernel stays) they win only where their operand's copy is most
//   of the work, share >= 8 (154 x 1234 x 24001 127 -> 79 µs, 5796 x 193 x 9436 189 -> 130) and
//   lose on 15 of the other 19 (210 x 1035 x 3118 +52%; wins left out: 1126 x 980 x 40163 -24%,
//   1160 x 3356 x 3217 -14%, which no threshold takes without eight of the losses).
//
// `copies_cheap` (a GPU whose DRAM peaks at 4 TB/s or more, an H200: the rule above is the H100's,
// at 3.35) tightens two clauses, fitted on the H200's 40 shapes of another draw of the corpus's
// distribution (tools/probe_row_rule.py --seed 2027, session 50) and checked on the corpus's 37;
// `k` is the product's depth:
// - beside a pitched copy, the row-copied operands must hold 8 MB or more: below, the copy rides
//   the launch the other operand needs anyway and the row-copy kernel's first K blocks cost more
//   (201 x 882 x 139 14.7 against 12.9 µs, 158 x 286 x 1439 22.2 / 19.0, 170 x 292 x 1423 21.0 /
//   19.6; 5796 x 193 x 9436, 109 MB, keeps them: 119 / 163);
// - within one wave, a load above 4 takes row copies only for a K of at most 256, where the copy
//   kernel would cost more than the K loop (708 x 830 x 140 13.2 against 14.2 µs; 250 x 1442 x
//   666 22.4 / 16.6, 383 x 1014 x 16638 82.7 / 76.1, 606 x 2740 x 914 27.4 / 25.0).
// The picks then lose 1.0015x geomean against the faster path on the draw (the H100's rule:
// 1.0236x, eight shapes by more than 5%) and 1.0070x on the corpus (1.0093x).
inline bool row_copies_pay(int64_t m, int64_t n, int64_t k, int64_t grid, int a_width, int b_width, bool pitched_beside,
                           bool copies_cheap) {
  const int64_t tiles = ceil_div(m, 128) * ceil_div(n, 128);
  const int64_t share = (a_width > 0 ? 2750 * m : 0) + (b_width > 0 ? 2750 * n : 0);  // x m·n/2750
  if (pitched_beside) {
    const int64_t row_copied_bytes = 2 * k * ((a_width > 0 ? m : 0) + (b_width > 0 ? n : 0));
    return (tiles * 16 <= grid || share >= 8 * m * n) && (!copies_cheap || row_copied_bytes >= (int64_t{8} << 20));
  }
  // (within one wave covers the few tiles' rule here)
  const int load = (a_width > 0 ? 16 / a_width : 0) + (b_width > 0 ? 16 / b_width : 0);
  const bool one_wave = tiles <= grid && (!copies_cheap || load <= 4 || k <= 256);
  return (load <= 4 && share >= m * n) || one_wave;
}

// Whether streamk_mm runs its plan in 2 x 1 clusters (kernels/grouped_gemm_sm90.cuh: 256-row pair
// tiles dealt to the clusters, B multicast): for shapes the TMA kernel does not read and write in
// place (`in_place` false: an operand through a pitched copy, or output rows off the 16-byte
// grid), with 128 x 256 tiles or at least 160 tiles of 128 x 128. Measured (H100, session 31,
// bf16, best of 2 alternating rounds of each setting on the 64-shape corpus): the clusters took
// 3976 x 3686 x 4155 from 336 to 248 µs, 831 x 3792 x 9195 159 -> 116, 1051 x 2898 x 5410 144 ->
// 111, all 16 shapes with 128 x 256 tiles but one (0.995) 1.05-1.37x faster, and 128 x 128 shapes
// of 160+ tiles 1.01-1.20x (734 x 6028 x 2544 0.993); below that they lose where the pairs are
// few against the clusters that fit (557 x 3141 x 150, 125 tiles: 0.82x; 128 x 1432 x 42927
// 0.81x). Shapes read and written in place keep one CTA a walker: 128 x 256 tiles there store
// through TMA, which the clustered kernel does not (16384² x 256: 0.86x in clusters), and the
// 128 x 128 anchors moved both ways (2304² x 2048 1.08x, 2176² x 4096 0.85x, 1408² x 8192 0.71x).
// Corpus geomean against torch.mm 1.443 -> 1.522 with this rule, no shape below 0.99x its time
// without clusters; on another draw of the corpus's distribution (seed 2027, not used to choose
// the rule) 1.327 -> 1.359, none below 0.97x. Clustering every shape not in place would give
// 1.527 and 1.381 but run two shapes at 0.81x (557 x 3141 x 150 to 0.80x torch.mm).
inline bool streamk_clusters_pay(bool in_place, int64_t tile_n, int64_t m, int64_t n) {
  return !in_place && (tile_n == 256 || ceil_div(m, 128) * ceil_div(n, 128) >= 160);
}

// Whether streamk_mm runs an m x n x k product in 64 x 64 tiles (one consumer warpgroup, two CTAs
// an SM) instead of weighing the 128-row tiles, on `grid` CTAs: where the 128 x 128 tiles would
// keep at most a third of the grid busy and K is at most 2048 (32 K blocks a tile). There the call
// is latency: a lone 128 x 128 tile's K block holds one SM's tensor cores 0.28-0.4 µs (session 26),
// and its operand blocks come from DRAM one SM at a time; a 64 x 64 tile quarters the one and
// halves the other, and its tiles, four for each 128 x 128 one, still run in one wave of two CTAs
// an SM. Measured against `auto`'s 128-row tile (do_bench µs, L2 flushed, H200, session 51, the
// stand-in model choosing the small tile's plan): 708 x 830 x 140 (42 tiles of 128 x 128, row
// copies) 12.5 -> 10.4, 290 x 136 x 248 7.6 -> 6.6, 384² x 128 6.8 -> 6.2, 435 x 392 x 157 10.6 ->
// 9.2, 1104 x 142 x 519 15.5 -> 13.5, 178 x 455 x 1095 19.1 -> 17.4, 939 x 167 x 675 16.9 -> 15.9.
// Past either bound it lost: deep K, where a 64 x 64 tile reads twice the operand bytes per MAC
// (219 x 157 x 10383, 4 tiles: 22.2 -> 31.0; 497 x 212 x 47612, 8 tiles: 76.7 -> 112), and more
// tiles (1463 x 1017 x 265, 96: 14.6 -> 15.9; 557 x 3141 x 150, 125: 15.3 -> 16.5); between them,
// 224 x 323 x 5013 (6 tiles) 25.9 -> 24.4 and 128² x 65536 24.0 -> 23.4 gained a little.
inline bool small_tile_pays(int64_t m, int64_t n, int64_t k, int64_t grid) {
  return m > 0 && n > 0 && k > 0 && k <= 2048 && 3 * ceil_div(m, 128) * ceil_div(n, 128) <= grid;
}

}  // namespace torch_grouped::sched
