// The Stream-K model's constants for syr2k's one-problem plan (the Rank2K walk's 128 x 128 tiles
// over Stream-K work units) per GPU model, in microseconds. Hand-kept, not fitted: streamk_mm's
// fits (streamk_calibration.h) do not carry over. The Rank2K fixup has no separate kernel and each
// tile is stored twice (itself and its mirror), so cutting tiles costs it more than streamk_mm's
// fit says: with session 12's constants syr2k bf16 n1024 k1024 took split-K, 43 µs, against 32 µs
// data-parallel (H100). The H100 entry is the 128 x 256 fit syr2k ran with until then (session 11's,
// c halved for the 128 x 128 tile): its picks were measured (n1024 data-parallel 29 µs, n2048 k8192
// Stream-K 157 µs against 200 data-parallel; H100, session 12). GPUs not listed use streamk_mm's
// 128 x 256 model with c halved.
#pragma once
#include "streamk_model.h"

namespace torch_grouped::sched {

struct Rank2KCalibration {
  const char* device_name;  // as torch.cuda.get_device_name() reports it
  StreamKModel model;
};

inline constexpr Rank2KCalibration kRank2KCalibrations[] = {
    {"NVIDIA H100 80GB HBM3", StreamKModel{13.17, 0, 0.2906, 2.553, 3.875, 1.474}},
};

// The 128 x 256 tile's model, from the 128 x 128 one: a 64-deep K block of twice the MACs in
// kRank2KWideBlockCost times the time, the other terms as the square tile's. Measured per block,
// the wide tile's K loop takes 1.24 times the square one's (0.655 against 0.53 µs; it reads 48 KB
// per 4.2 MFLOP against 32 KB per 2.1), but its epilogue writes twice the bytes while both
// consumer warpgroups store, and the fixed term a does not grow with it: 1.75 (streamk_mm's fits
// put the same ratio at 1.76) orders all five shapes syr2k was measured on as measured (H100,
// session 15: n = 8192, k = 1024 wide, 252 against 274 µs; n = 4096, k = 4096, n = 2048 with
// k = 8192 or 1024, and n = 1024 square). Only its data-parallel walk is weighed: over Stream-K
// units the wide tile ran far slower than its K loop's rate (n = 2048, k = 8192: 156 µs where 140
// of its iterations per CTA predict 92; the square tile's Stream-K: 140).
inline constexpr double kRank2KWideBlockCost = 1.75;
inline StreamKModel rank2k_wide_model(StreamKModel square) {
  square.c *= kRank2KWideBlockCost;
  return square;
}

}  // namespace torch_grouped::sched
