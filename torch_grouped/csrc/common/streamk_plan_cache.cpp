#include "streamk_plan_cache.h"

#include <c10/util/Exception.h>

#include <array>
#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_map>

namespace torch_grouped {
namespace {

// A choice's inputs, every one of them (the model's constants too: each tile and syr2k have their
// own), as 64-bit words: doubles by their bits, so that equal keys are exactly equal inputs. A
// fixed array: the lookup runs on every `auto` call and allocates nothing.
struct Key {
  static constexpr int kCapacity = 40;  // the tile choice's: 7 problem words + 3 x (rows, width + 7 constants)
  std::array<int64_t, kCapacity> words{};
  int size = 0;
  void add(int64_t v) {
    TORCH_INTERNAL_ASSERT(size < kCapacity, "streamk plan memo: key too long");
    words[size++] = v;
  }
  void add(double v) {
    int64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    add(bits);
  }
  void add(const sched::StreamKModel& model) {
    for (double v : {model.a, model.b, model.c, model.d, model.e, model.f, model.dram_us_per_mb}) add(v);
  }
  bool operator==(const Key& o) const { return size == o.size && words == o.words; }
};

struct KeyHash {
  size_t operator()(const Key& key) const {
    size_t h = size_t(key.size);
    for (int i = 0; i < key.size; ++i) h ^= std::hash<int64_t>{}(key.words[i]) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
  }
};

// Choices remembered by their inputs; thread-safe, and started over when full. `choose` runs
// outside the lock: two threads may both make the same choice, which is harmless.
template <typename Value>
class Memo {
 public:
  template <typename Choose>
  Value get(const Key& key, Choose&& choose) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      const auto it = values_.find(key);
      if (it != values_.end()) return it->second;
    }
    const Value value = choose();
    const std::lock_guard<std::mutex> lock(mutex_);
    if (values_.size() >= kMaxValues) values_.clear();
    values_.emplace(key, value);
    return value;
  }

 private:
  static constexpr size_t kMaxValues = 4096;
  std::mutex mutex_;
  std::unordered_map<Key, Value, KeyHash> values_;
};

Key problem_key(int64_t m, int64_t n, int64_t k, int64_t tile_m, int64_t tile_k, int64_t grid, bool may_separate) {
  Key key;
  for (int64_t v : {m, n, k, tile_m, tile_k, grid, int64_t{may_separate}}) key.add(v);
  return key;
}

}  // namespace

sched::StreamKPlan resolve_streamk_plan_cached(const sched::StreamKModel& model, sched::Decomposition d, bool is_auto,
                                               int64_t splits, int64_t m, int64_t n, int64_t k, int64_t tile_m,
                                               int64_t tile_n, int64_t tile_k, int64_t grid, bool may_separate) {
  if (!is_auto) {
    return sched::resolve_streamk_plan(model, d, is_auto, splits, m, n, k, tile_m, tile_n, tile_k, grid, may_separate);
  }
  static Memo<sched::StreamKPlan> plans;
  Key key = problem_key(m, n, k, tile_m, tile_k, grid, may_separate);
  key.add(tile_n);
  key.add(model);
  return plans.get(key, [&] {
    return sched::choose_streamk_plan(model, m, n, k, tile_m, tile_n, tile_k, grid, may_separate);
  });
}

int choose_streamk_tile_cached(const sched::StreamKTileOption* options, int count, int64_t m, int64_t n, int64_t k,
                               int64_t tile_k, int64_t grid, bool may_separate) {
  static Memo<int> tiles;
  Key key = problem_key(m, n, k, /*tile_m: per option*/ 0, tile_k, grid, may_separate);
  for (int i = 0; i < count; ++i) {
    key.add(int64_t{options[i].tile.m});
    key.add(int64_t{options[i].tile.n});
    key.add(options[i].model);
  }
  return tiles.get(key, [&] {
    return sched::choose_streamk_tile(options, count, m, n, k, tile_k, grid, may_separate);
  });
}

}  // namespace torch_grouped
