// Which GPU's calibration serves this one. streamk_mm's Stream-K models (streamk_calibration.h)
// are fitted per GPU model, named as torch.cuda.get_device_name() reports it. A GPU without an
// entry of its own takes the entry of a calibrated GPU of the same kind — the same compute
// capability and SM count: the same die at the same clocks, where the model's terms (fixed launch
// and prologue costs, a MAC iteration, the fixup's partial tiles, mostly through L2) carry over;
// a GH200 takes the H100's. Else the model's generic defaults. (Session 34, H200: with the defaults
// streamk_mm ran 0.57-0.69x cuBLAS on shapes where the H100's constants give it 0.73-0.96x.) The
// H200, the same die with faster, larger memory, has its own since session 50: on its sweeps the
// H100's constants picked plans 1.020x slower than the best measured, its own fit 1.005x. syr2k's
// hand-kept models (rank2k_calibration.h) are not carried over: the H100's ran syr2k n = 1024
// slower on an H200 than the defaults (the H200 has an entry there: the model it ran before).
#pragma once
#include "named_entry.h"
#include "streamk_calibration.h"

namespace torch_grouped::sched {

struct GpuKind {
  const char* name;  // as torch.cuda.get_device_name() reports it
  int major, minor;  // compute capability
  int sms;
};

// The GPUs the calibrations were taken on: every name in streamk_calibration.h (checked below
// when this header compiles).
inline constexpr GpuKind kCalibratedGpus[] = {
    {"NVIDIA H100 80GB HBM3", 9, 0, 132},  // (first: the entry of uncalibrated GPUs of its kind)
    {"NVIDIA H200", 9, 0, 132},
};

// The streamk_mm calibration that serves `gpu`: its own when it was calibrated, else that of the
// first calibrated GPU of its kind; nullptr: none (the defaults).
inline const StreamKCalibration* streamk_calibration_for(const GpuKind& gpu) {
  if (const StreamKCalibration* own = entry_named(kStreamKCalibrations, gpu.name)) return own;
  for (const GpuKind& c : kCalibratedGpus)
    if (c.major == gpu.major && c.minor == gpu.minor && c.sms == gpu.sms) return entry_named(kStreamKCalibrations, c.name);
  return nullptr;
}

template <class Table>
constexpr bool every_entry_calibrated_on_a_listed_gpu(const Table& table) {
  for (const auto& entry : table) {
    bool listed = false;
    for (const GpuKind& gpu : kCalibratedGpus) listed = listed || same_name(entry.device_name, gpu.name);
    if (!listed) return false;
  }
  return true;
}
static_assert(every_entry_calibrated_on_a_listed_gpu(kStreamKCalibrations), "a streamk_mm calibration's GPU is missing from kCalibratedGpus");

}  // namespace torch_grouped::sched
