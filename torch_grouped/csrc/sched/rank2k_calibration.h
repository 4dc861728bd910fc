// The Stream-K model's constants for syr2k's one-problem plan (the Rank2K walk's 128 x 128 tiles
// over Stream-K work units) per GPU model, in microseconds. Hand-kept, not fitted: streamk_mm's
// fits (streamk_calibration.h) do not carry over. The Rank2K fixup has no separate kernel and each
// tile is stored twice (itself and its mirror), so cutting tiles costs it more than streamk_mm's
// fit says: with session 12's constants syr2k bf16 n1024 k1024 took split-K, 43 µs, against 32 µs
// data-parallel (H100). The H100 entry is the 128 x 256 fit syr2k ran with until then (session 11's,
// c halved for the 128 x 128 tile): its picks were measured (n1024 data-parallel 29 µs, n2048 k8192
// Stream-K 157 µs against 200 data-parallel; H100, session 12). GPUs not listed use streamk_mm's
// 128 x 256 model with c halved. The H200 entry is the model it ran syr2k with until session 50
// gave it a streamk_mm calibration of its own: the H100's 128 x 256 fit with c halved. (Its own
// fit, c halved, took another plan for fp32 n8192 k1024: 2405 µs against 1595; H200, session 50.)
#pragma once
#include "named_entry.h"
#include "streamk_model.h"

namespace torch_grouped::sched {

struct Rank2KCalibration {
  const char* device_name;  // as torch.cuda.get_device_name() reports it
  StreamKModel model;
};

inline constexpr Rank2KCalibration kRank2KCalibrations[] = {
    {"NVIDIA H100 80GB HBM3", StreamKModel{13.17, 0, 0.2906, 2.553, 3.875, 1.474}},
    {"NVIDIA H200", StreamKModel{9.062, 1.589, 0.6546 / 2, 2.105, 2.483, 1.143}},
};

// The model calibrated for the GPU named `device_name`; nullptr: none.
inline const StreamKModel* rank2k_calibrated_model(const char* device_name) {
  const Rank2KCalibration* entry = entry_named(kRank2KCalibrations, device_name);
  return entry != nullptr ? &entry->model : nullptr;
}

}  // namespace torch_grouped::sched
