// TORCH_GROUPED_STREAMK_MODEL=a,b,c,d[,e,f]: the Stream-K model's constants (sched::StreamKModel, in
// microseconds) for `auto`, in place of the calibration compiled in for this GPU (or the defaults),
// so that a benchmark can try a refit without a rebuild; TORCH_GROUPED_STREAMK_MODEL_NARROW likewise
// for the 128 x 128 tile of streamk_mm's CUDA path, TORCH_GROUPED_STREAMK_MODEL_ROWS for its
// row-copy kernel, TORCH_GROUPED_STREAMK_MODEL_TALL for its 192 x 128 tile (which `auto` then
// weighs, calibrated or not). A tile's variable replaces both of its models (aligned and unaligned shapes:
// StreamKModels::tile_model). Unset or empty: `base`.
#pragma once
#include "../sched/streamk_model.h"

namespace torch_grouped {

inline constexpr const char* kStreamKModelVariable = "TORCH_GROUPED_STREAMK_MODEL";
inline constexpr const char* kStreamKNarrowModelVariable = "TORCH_GROUPED_STREAMK_MODEL_NARROW";
inline constexpr const char* kStreamKRowsModelVariable = "TORCH_GROUPED_STREAMK_MODEL_ROWS";
inline constexpr const char* kStreamKTallModelVariable = "TORCH_GROUPED_STREAMK_MODEL_TALL";

// `base`, or the constants the environment variable `name` gives; a malformed value is a ValueError.
sched::StreamKModel streamk_model_from_env(const sched::StreamKModel& base, const char* name = kStreamKModelVariable);

}  // namespace torch_grouped
