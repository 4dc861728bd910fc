// Fitted constants of the Stream-K model per GPU model (benchmarks/calibrate_streamk.py writes
// this file). Placeholder until calibrated: the defaults of StreamKModel.
#pragma once
#include "streamk_model.h"

namespace torch_grouped::sched {

struct StreamKCalibration {
  const char* device_name;  // as torch.cuda.get_device_name() reports it
  StreamKModel model;
};

inline constexpr StreamKCalibration kStreamKCalibrations[] = {
    {"NVIDIA H100 80GB HBM3", StreamKModel{4.0, 3.0, 1.0, 1.5}},  // placeholder until calibrated
};

}  // namespace torch_grouped::sched
