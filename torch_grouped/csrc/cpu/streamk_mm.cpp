// streamk_mm on the CPU: the plan of csrc/sched/streamk_plan.h run CTA by CTA. A tile cut into
// segments has each segment's partial in a workspace slot; the reduction adds them in the order of
// the plan's FixupTree, as the GPU's last-arriving CTAs do, or of its SeparateFixup, as the GPU's
// separate fixup kernel does.
#include "../common/checks.h"
#include "../common/streamk_model_env.h"
#include "../common/streamk_plan_cache.h"
#include "../sched/streamk_model.h"
#include "portable.h"

namespace torch_grouped {

at::Tensor streamk_mm_tiled(const at::Tensor& a, const at::Tensor& b,
                            const std::string& decomposition, int64_t splits, int64_t grid,
                            int64_t sms) {
  bool is_auto = false;
  const sched::Decomposition d = check_streamk(a, b, decomposition, splits, grid, is_auto);
  const int64_t m = a.size(0), n = b.size(1), k = a.size(1);
  constexpr int64_t tm = kCpuStreamKTile[0], tn = kCpuStreamKTile[1], tk = kCpuStreamKTile[2];
  const int64_t g = grid > 0 ? grid : sms;
  const sched::StreamKPlan plan =
      resolve_streamk_plan_cached(streamk_model_from_env(sched::StreamKModel{}), d, is_auto, splits, m, n, k, tm, tn, tk, g, /*may_separate=*/true);

  const at::ScalarType acc_t = accumulate_dtype(a);
  const at::Tensor a_acc = a.to(acc_t), b_acc = b.to(acc_t);
  at::Tensor out = at::empty({m, n}, a.options().dtype(acc_t));
  std::vector<at::Tensor> workspace(plan.workspace_slots());
  int64_t written = 0;  // tiles

  auto tile_rows = [&](int64_t tile) { return a_acc.narrow(0, (tile / plan.tiles_n) * tm, std::min(tm, m - (tile / plan.tiles_n) * tm)); };
  auto tile_cols = [&](int64_t tile) { return b_acc.narrow(1, (tile % plan.tiles_n) * tn, std::min(tn, n - (tile % plan.tiles_n) * tn)); };
  auto store = [&](int64_t tile, const at::Tensor& accum) {
    const int64_t r0 = (tile / plan.tiles_n) * tm, c0 = (tile % plan.tiles_n) * tn;
    out.narrow(0, r0, accum.size(0)).narrow(1, c0, accum.size(1)).copy_(accum);
    ++written;
  };

  for (int64_t cta = 0; cta < plan.grid; ++cta) {
    sched::StreamKCursor cursor = plan.begin(cta);
    sched::StreamKWorkUnit u;
    while (plan.next(cta, cursor, u)) {
      const at::Tensor rows = tile_rows(u.tile), cols = tile_cols(u.tile);
      const int64_t k0 = std::min(u.k_begin * tk, k), k1 = std::min(u.k_end * tk, k);
      at::Tensor accum = k1 > k0 ? at::mm(rows.narrow(1, k0, k1 - k0), cols.narrow(0, k0, k1 - k0))
                                 : at::zeros({rows.size(0), cols.size(1)}, rows.options());
      if (u.slot < 0) {
        store(u.tile, accum);
        continue;
      }
      TORCH_INTERNAL_ASSERT(!workspace[u.slot].defined(), "streamk_mm: slot ", u.slot, " written twice");
      workspace[u.slot] = accum;
    }
  }
  // The reduction of every cut tile: its segments' partials in the FixupTree's order (deterministic).
  auto sum = [&](int64_t count, auto slot_of) {
    at::Tensor accum;
    for (int64_t j = 0; j < count; ++j) {
      at::Tensor& partial = workspace[slot_of(j)];
      TORCH_INTERNAL_ASSERT(partial.defined(), "streamk_mm: slot ", slot_of(j), " was never written");
      accum = j == 0 ? partial : accum.add_(partial);
      partial = at::Tensor();
    }
    return accum;
  };
  for (int64_t tile = 0; tile < plan.tiles(); ++tile) {
    const int64_t segments = plan.segments(tile);
    if (segments < 2) continue;
    auto segment_slot = [&](int64_t j) { return plan.segment_slot(tile, j); };
    if (plan.separate_fixup) {  // the parts of SeparateFixup in K order, then the parts in order
      at::Tensor accum = at::zeros_like(workspace[segment_slot(0)]);
      for (int w = 0; w < sched::SeparateFixup::kParts; ++w) {
        const int64_t first = sched::SeparateFixup::part_begin(segments, w);
        const int64_t count = sched::SeparateFixup::part_begin(segments, w + 1) - first;
        if (count > 0) accum.add_(sum(count, [&](int64_t j) { return segment_slot(first + j); }));
      }
      store(tile, accum);
      continue;
    }
    const sched::FixupTree tree = sched::FixupTree::of(segments);
    for (int64_t g = 0; g < tree.groups; ++g) {  // a run's sum goes to the slot of its first segment
      const int64_t first = tree.group_begin(g);
      workspace[segment_slot(first)] =
          sum(tree.group_begin(g + 1) - first, [&](int64_t j) { return segment_slot(first + j); });
    }
    store(tile, sum(tree.groups, [&](int64_t g) { return segment_slot(tree.group_begin(g)); }));
  }
  TORCH_INTERNAL_ASSERT(written == plan.tiles(), "streamk_mm: ", written, " tiles written of ", plan.tiles());
  return out.to(a.scalar_type());
}

}  // namespace torch_grouped
