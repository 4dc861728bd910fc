// TORCH_GROUPED_STREAMK_MODEL=a,b,c,d[,e,f]: the Stream-K model's constants (sched::StreamKModel, in
// microseconds) for `auto`, in place of the calibration compiled in for this GPU (or the defaults),
// so that a benchmark can try a refit without a rebuild. Unset or empty: `base`.
#pragma once
#include "../sched/streamk_model.h"

namespace torch_grouped {

// `base`, or the constants the environment gives; a malformed value is a ValueError.
sched::StreamKModel streamk_model_from_env(const sched::StreamKModel& base);

}  // namespace torch_grouped
