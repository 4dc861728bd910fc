// The Stream-K plans and tiles that `auto` chose, remembered by their inputs. The model weighs a
// dozen plans per call and tile (sched::choose_streamk_plan: 5–11 µs of host per call on a 2-core
// x86 machine, each candidate walking the grid's CTAs for its fixup statistics), which a small
// matmul's call notices; a model runs the same shapes over and over. Host only; shared by the CPU
// and CUDA paths of streamk_mm and by syr2k's one-problem plan.
#pragma once
#include <cstdint>

#include "../sched/streamk_model.h"

namespace torch_grouped {

// sched::resolve_streamk_plan, with `auto`'s choice looked up before it is made. An explicit
// decomposition is built directly (it costs one plan). Thread-safe; the memo holds at most a few
// thousand plans and starts over when full.
sched::StreamKPlan resolve_streamk_plan_cached(const sched::StreamKModel& model, sched::Decomposition d, bool is_auto,
                                               int64_t splits, int64_t m, int64_t n, int64_t k, int64_t tile_m,
                                               int64_t tile_n, int64_t tile_k, int64_t grid, bool may_separate);

// sched::choose_streamk_tile (the index of the option taken), remembered likewise (it weighs
// every option's plans).
int choose_streamk_tile_cached(const sched::StreamKTileOption* options, int count, int64_t m, int64_t n, int64_t k,
                               int64_t tile_k, int64_t grid, bool may_separate);

}  // namespace torch_grouped
