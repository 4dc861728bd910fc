#include "streamk_plan_cache.h"

#include <functional>
#include <mutex>
#include <unordered_map>

namespace torch_grouped {
namespace {

// Every input of choose_streamk_plan: the model's constants too (syr2k scales its c).
struct AutoPlanKey {
  double a, b, c, d, e, f;
  int64_t m, n, k, tile_m, tile_n, tile_k, grid;
  bool may_separate;
  bool operator==(const AutoPlanKey& o) const {
    return a == o.a && b == o.b && c == o.c && d == o.d && e == o.e && f == o.f && m == o.m && n == o.n && k == o.k && tile_m == o.tile_m &&
           tile_n == o.tile_n && tile_k == o.tile_k && grid == o.grid && may_separate == o.may_separate;
  }
};

struct AutoPlanKeyHash {
  size_t operator()(const AutoPlanKey& key) const {
    size_t h = std::hash<bool>{}(key.may_separate);
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    for (double v : {key.a, key.b, key.c, key.d, key.e, key.f}) mix(std::hash<double>{}(v));
    for (int64_t v : {key.m, key.n, key.k, key.tile_m, key.tile_n, key.tile_k, key.grid}) mix(std::hash<int64_t>{}(v));
    return h;
  }
};

constexpr size_t kMaxPlans = 4096;

}  // namespace

sched::StreamKPlan resolve_streamk_plan_cached(const sched::StreamKModel& model, sched::Decomposition d, bool is_auto,
                                               int64_t splits, int64_t m, int64_t n, int64_t k, int64_t tile_m,
                                               int64_t tile_n, int64_t tile_k, int64_t grid, bool may_separate) {
  if (!is_auto) {
    return sched::resolve_streamk_plan(model, d, is_auto, splits, m, n, k, tile_m, tile_n, tile_k, grid, may_separate);
  }
  static std::mutex mutex;
  static std::unordered_map<AutoPlanKey, sched::StreamKPlan, AutoPlanKeyHash> plans;
  const AutoPlanKey key{model.a, model.b, model.c, model.d, model.e, model.f, m, n, k, tile_m, tile_n, tile_k, grid, may_separate};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = plans.find(key);
    if (it != plans.end()) return it->second;
  }
  // Chosen outside the lock: two threads may both choose the same plan, which is harmless.
  const sched::StreamKPlan plan = sched::choose_streamk_plan(model, m, n, k, tile_m, tile_n, tile_k, grid, may_separate);
  const std::lock_guard<std::mutex> lock(mutex);
  if (plans.size() >= kMaxPlans) plans.clear();
  plans.emplace(key, plan);
  return plan;
}

}  // namespace torch_grouped
