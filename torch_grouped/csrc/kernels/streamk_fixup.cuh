// How the CTAs that share a Stream-K (or split-K) tile combine their work, without waiting for
// each other (sched/streamk_plan.h says who holds which segment of a tile).
//
// Every segment stores its fp32 partial accumulators in its workspace slot, then counts itself in
// on the tile's counter. The segment that arrives last adds all the partials in K order
// (segment 0, 1, ...) and stores the tile; the order of the sum is fixed, so results never
// depend on timing, and since nobody waits, nothing depends on which CTAs are resident.
//
// A partial is stored in the accumulators' register order, not as a matrix: thread i of every
// CTA holds the same elements of the tile, so each thread reads back exactly what thread i wrote,
// in coalesced 16-byte accesses, without shared memory.
//
// Counters are per tile and consumer warpgroup (each warpgroup owns its 64 rows and never
// synchronises with the other). The last arriver sets its counter back to zero, so the counters
// are all zero between launches and the host never clears them.
#pragma once
#include <cuda/atomic>
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include <cstdint>

#include "../sched/streamk_plan.h"

namespace torch_grouped::kernels {

struct StreamKFixup {
  float* workspace;   // slots of slot_floats fp32 each
  int32_t* counters;  // tiles x consumers
  int slot_floats;    // one whole tile
  int consumers;      // consumer warpgroups per CTA
  int warpgroup;      // this thread's consumer warpgroup
  int barrier;        // the warpgroup's named barrier
  int* last_flag;     // the warpgroup's word of shared memory, to broadcast lane 0's verdict

  __device__ __forceinline__ float4* part(int64_t slot) const {
    return reinterpret_cast<float4*>(workspace + (slot * consumers + warpgroup) * (slot_floats / consumers));
  }

  // Stores this warpgroup's accumulators in `slot` and counts the segment in on `tile`, one of
  // `segments`. True, in every thread of the warpgroup, for the last to arrive.
  template <class Acc>
  __device__ __forceinline__ bool publish(const Acc& acc, int64_t slot, int64_t tile, int64_t segments, int lane) const {
    float4* dst = part(slot);
    CUTE_UNROLL
    for (int j = 0; j < int(cute::size(acc)) / 4; ++j)
      dst[j * 128 + lane] = make_float4(acc(4 * j), acc(4 * j + 1), acc(4 * j + 2), acc(4 * j + 3));
    // The barrier orders every thread's stores before lane 0's fenced release (the pattern of
    // CUTLASS's generic barrier); lane 0's acquire, then the second barrier, order the last
    // arriver's reads after every other segment's stores.
    cutlass::arch::NamedBarrier::sync(128, barrier);
    if (lane == 0) {
      __threadfence();
      cuda::atomic_ref<int32_t, cuda::thread_scope_device> counter(counters[tile * consumers + warpgroup]);
      const bool last = counter.fetch_add(1, cuda::memory_order_acq_rel) == segments - 1;
      if (last) counter.store(0, cuda::memory_order_relaxed);  // ready for the next launch
      *last_flag = last;
    }
    cutlass::arch::NamedBarrier::sync(128, barrier);
    return *last_flag != 0;
  }

  // acc = the sum of `tile`'s partials in K order.
  template <class Acc>
  __device__ __forceinline__ void reduce(Acc& acc, const sched::StreamKPlan& plan, int64_t tile, int64_t segments,
                                         int lane) const {
    const float4* first = part(plan.segment_slot(tile, 0));
    CUTE_UNROLL
    for (int j = 0; j < int(cute::size(acc)) / 4; ++j) {
      const float4 v = __ldcg(first + j * 128 + lane);  // from L2: other SMs wrote it
      acc(4 * j) = v.x, acc(4 * j + 1) = v.y, acc(4 * j + 2) = v.z, acc(4 * j + 3) = v.w;
    }
    for (int64_t s = 1; s < segments; ++s) {
      const float4* src = part(plan.segment_slot(tile, s));
      CUTE_UNROLL
      for (int j = 0; j < int(cute::size(acc)) / 4; ++j) {
        const float4 v = __ldcg(src + j * 128 + lane);
        acc(4 * j) += v.x, acc(4 * j + 1) += v.y, acc(4 * j + 2) += v.z, acc(4 * j + 3) += v.w;
      }
    }
  }
};

}  // namespace torch_grouped::kernels
