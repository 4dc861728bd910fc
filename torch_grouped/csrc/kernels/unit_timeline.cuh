// A development probe of the persistent kernels: when the build defines TORCH_GROUPED_TIMELINE
// (setup.py with TORCH_GROUPED_TIMELINE=1), thread 0 of every consumer warpgroup stamps the GPU's
// global timer (ns, one clock for all SMs) at its start and at each step of each work unit (the
// walk to it, its first K block's arrival, the K loop's end, the Stream-K fixup's, the
// epilogue's), keeps the stamps in registers and local memory, and prints them once its work is
// done, so that printing does not disturb what it times
// (later CTAs' stamps can be: a printing CTA slows the memory system for the others).
// tools/timeline.py turns the lines of the last launch into per-CTA timelines. This is how
// session 16 found that the 128 x 256 Rank2K tile's Stream-K units lose ~20 µs to publishing
// partials and the last arrivers' sums (benchmarks/NOTES.md). Without the macro the probe is an
// empty object: the kernels' code is unchanged.
#pragma once
#include <cstdint>
#include <cstdio>

namespace torch_grouped::kernels {

// Walked: the consumer has its next unit (the walk since the previous unit's last stamp);
// FirstBlock: the unit's first K block has landed (the wait since Walked is the producer's head
// start lost at the unit's boundary).
enum class TimelineEvent : int { Start = 0, KLoop = 1, Fixup = 2, LastFixup = 3, Store = 4, FirstBlock = 5, Walked = 6 };

#ifdef TORCH_GROUPED_TIMELINE
struct UnitTimeline {
  static constexpr int kCapacity = 32;  // stamps kept; later ones are counted as dropped
  uint64_t time[kCapacity];
  int32_t event[kCapacity];
  int64_t tile[kCapacity];
  int32_t kblocks[kCapacity];
  int count = 0, dropped = 0;

  __device__ __forceinline__ void stamp(TimelineEvent e, int64_t t = -1, int32_t kb = 0) {
    if (count == kCapacity) {
      ++dropped;
      return;
    }
    uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    time[count] = now, event[count] = int32_t(e), tile[count] = t, kblocks[count] = kb;
    ++count;
  }
  __device__ __forceinline__ void first_block(int32_t kb) {
    if (kb == 0) stamp(TimelineEvent::FirstBlock);
  }
  // One line per stamp: "TL cta warpgroup index time_ns event tile kblocks dropped".
  __device__ __forceinline__ void print(int warpgroup, int thread) const {
    if (thread % 128 != 0) return;
    for (int i = 0; i < count; ++i)
      printf("TL %d %d %d %llu %d %lld %d %d\n", int(blockIdx.x), warpgroup, i, (unsigned long long)time[i], event[i],
             (long long)tile[i], kblocks[i], dropped);
  }
};
#else
struct UnitTimeline {
  __device__ __forceinline__ void stamp(TimelineEvent, int64_t = -1, int32_t = 0) {}
  __device__ __forceinline__ void first_block(int32_t) {}
  __device__ __forceinline__ void print(int, int) const {}
};
#endif

}  // namespace torch_grouped::kernels
