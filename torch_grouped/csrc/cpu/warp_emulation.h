// A warp on the CPU, for the tests of warp-synchronous scheduler code (sched/warp_visitor.cuh):
// 32 host threads, one per lane, run the same function; every shuffle and ballot is an exchange
// through shared slots between two barriers, as the lanes of a warp meet in the hardware's
// lockstep. The code under test must keep its primitives warp-uniform (all lanes call the same
// sequence), as the `_sync` intrinsics with a full mask require on the GPU; a lane that skipped
// one would leave the others waiting, so the exchange times out and reports it instead.
#pragma once
#include <c10/util/Exception.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace torch_grouped {

class EmulatedWarp {
 public:
  static constexpr int kLanes = 32;

  // The Warp policy of sched::WarpGroupedVisitor, as CUDA's intrinsics define them.
  static int lane() { return lane_; }
  template <class T>
  static T shfl(T value, int src) {
    return exchange(value)[src & (kLanes - 1)];
  }
  template <class T>
  static T shfl_up(T value, int delta) {  // lanes below `delta` keep their own value
    return exchange(value)[lane_ >= delta ? lane_ - delta : lane_];
  }
  static unsigned ballot(bool predicate) {
    const std::array<bool, kLanes> all = exchange(predicate);
    unsigned mask = 0;
    for (int l = 0; l < kLanes; ++l) mask |= (all[l] ? 1u : 0u) << l;
    return mask;
  }
  static int first_lane(unsigned mask) { return mask == 0 ? -1 : __builtin_ctz(mask); }

  // Runs body() on 32 threads, lane() telling each its lane, and returns when all are done. One
  // emulated warp at a time (the slots are shared). A lane left waiting (the others stopped
  // exchanging) fails the call, and so does a body that exchanges more than `max_exchanges`
  // times (a search that never ends: every lane counts the same exchanges and stops at once).
  static void run(const std::function<void()>& body, int64_t max_exchanges) {
    static std::mutex one_at_a_time;
    std::lock_guard<std::mutex> hold(one_at_a_time);
    Shared shared;
    shared.max_exchanges = max_exchanges;
    shared_ = &shared;
    std::vector<std::thread> lanes;
    for (int l = 0; l < kLanes; ++l) {
      lanes.emplace_back([&, l] {
        lane_ = l;
        exchanges_ = 0;
        try {
          body();
        } catch (...) {
          std::lock_guard<std::mutex> lock(shared.mutex);
          shared.failed = true;
          shared.changed.notify_all();
        }
        std::lock_guard<std::mutex> lock(shared.mutex);
        ++shared.finished;
        shared.changed.notify_all();
      });
    }
    for (std::thread& t : lanes) t.join();
    shared_ = nullptr;
    TORCH_CHECK(!shared.failed, "warp emulation: a lane stopped exchanging before the others (a primitive "
                                "called by some lanes only), the lanes exchanged more than ", max_exchanges,
                " times, or the body threw");
  }

 private:
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    int arrived = 0, finished = 0;
    uint64_t generation = 0;
    bool failed = false;
    int64_t max_exchanges = 0;
    uint64_t slots[kLanes] = {};
  };

  // Waits until every lane has arrived; throws if a lane finished or failed instead (it will
  // never arrive) or none came for ten seconds.
  static void barrier(Shared& s) {
    std::unique_lock<std::mutex> lock(s.mutex);
    const uint64_t generation = s.generation;
    if (++s.arrived == kLanes) {
      s.arrived = 0;
      ++s.generation;
      s.changed.notify_all();
      return;
    }
    const bool met = s.changed.wait_for(lock, std::chrono::seconds(10), [&] {
      return s.generation != generation || s.failed || s.finished > 0;
    });
    if (s.generation != generation) return;
    s.failed = true;
    s.changed.notify_all();
    TORCH_CHECK(false, met ? "warp emulation: a lane finished while the others exchanged"
                           : "warp emulation: the lanes did not meet within ten seconds");
  }

  // Every lane's `value`, in lane order.
  template <class T>
  static std::array<T, kLanes> exchange(T value) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(uint64_t), "one 64-bit slot per lane");
    Shared& s = *shared_;
    TORCH_CHECK(++exchanges_ <= s.max_exchanges, "warp emulation: more exchanges than the body may make");
    std::memcpy(&s.slots[lane_], &value, sizeof(T));
    barrier(s);  // every lane's value is in its slot
    std::array<T, kLanes> all;
    for (int l = 0; l < kLanes; ++l) std::memcpy(&all[l], &s.slots[l], sizeof(T));
    barrier(s);  // every lane has read: the slots may change
    return all;
  }

  inline static thread_local int lane_ = -1;
  inline static thread_local int64_t exchanges_ = 0;
  inline static Shared* shared_ = nullptr;
};

}  // namespace torch_grouped
