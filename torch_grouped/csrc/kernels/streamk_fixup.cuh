// How the CTAs that share a Stream-K (or split-K) tile combine their work, without waiting for
// each other (sched/streamk_plan.h says who holds which segment of a tile, and FixupTree in what
// order the partials are summed).
//
// Every segment stores its fp32 partial accumulators in its workspace slot, then counts itself in
// on a counter. The segment that arrives last adds the partials in K order; with FixupTree's two
// levels, the last of each run of segments sums the run into the run's first slot and counts the
// run in on the tile, and the last run sums the runs. The order of every sum is fixed, so results
// never depend on timing, and since nobody waits, nothing depends on which CTAs are resident.
//
// A partial is stored in the accumulators' register order, not as a matrix: thread i of every
// CTA holds the same elements of the tile, so each thread reads back exactly what thread i wrote,
// in coalesced 16-byte accesses, without shared memory (and a run's sum can overwrite the run's
// first slot: the thread that writes an element is the only one that read it). The separate
// fixup kernel reads the same form (sched::PartialQuad maps it back onto the tile).
//
// Counters are per consumer warpgroup (each warpgroup owns its 64 rows and never synchronises
// with the other). The last arriver sets its counter back to zero, so the counters are all zero
// between launches and the host never clears them.
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
  int slot_floats;    // one whole tile (a cluster's pair tile)
  int consumers;      // consumer warpgroups per tile (of the cluster's CTAs together)
  int warpgroup;      // this thread's consumer warpgroup among them
  int barrier;        // the warpgroup's named barrier
  int* last_flag;     // the warpgroup's word of shared memory, to broadcast lane 0's verdict

  __device__ __forceinline__ float4* part(int64_t slot) const {
    return reinterpret_cast<float4*>(workspace + (slot * consumers + warpgroup) * (slot_floats / consumers));
  }

  // Stores this warpgroup's accumulators in `slot`, in register order (sched::PartialQuad says
  // where each element lies): the separate fixup's partials go out so as well.
  template <class Acc>
  __device__ __forceinline__ void store(const Acc& acc, int64_t slot, int lane) const {
    float4* dst = part(slot);
    CUTE_UNROLL
    for (int j = 0; j < int(cute::size(acc)) / 4; ++j)
      dst[j * 128 + lane] = make_float4(acc(4 * j), acc(4 * j + 1), acc(4 * j + 2), acc(4 * j + 3));
  }

  // Stores this warpgroup's accumulators in `slot` and counts them in on `counter`, one of
  // `arrivals`. True, in every thread of the warpgroup, for the last to arrive.
  template <class Acc>
  __device__ __forceinline__ bool publish(const Acc& acc, int64_t slot, int64_t counter, int64_t arrivals,
                                          int lane) const {
    store(acc, slot, lane);
    // The barrier orders every thread's stores before lane 0's release, which is cumulative (the
    // pattern of CUTLASS's generic barrier: a CTA barrier, then one thread's fence.acq_rel.gpu and
    // atomic); lane 0's acquire, then the second barrier, order the last arriver's reads after
    // every other segment's stores. The read-modify-write's own acq_rel is the only fence: an
    // extra __threadfence() before it was a fence.sc.gpu (MEMBAR.SC.GPU, ERRBAR and an L1
    // invalidation) on every partial's way out.
    cutlass::arch::NamedBarrier::sync(128, barrier);
    if (lane == 0) {
      cuda::atomic_ref<int32_t, cuda::thread_scope_device> count(counters[counter * consumers + warpgroup]);
      const bool last = count.fetch_add(1, cuda::memory_order_acq_rel) == arrivals - 1;
      if (last) count.store(0, cuda::memory_order_relaxed);  // ready for the next launch
      *last_flag = last;
    }
    cutlass::arch::NamedBarrier::sync(128, barrier);
    return *last_flag != 0;
  }

  // acc = the sum, in order, of the partials in slots slot_of(0), ..., slot_of(count - 1).
  template <class Acc, class SlotOf>
  __device__ __forceinline__ void sum(Acc& acc, int64_t count, SlotOf slot_of, int lane) const {
    const float4* first = part(slot_of(0));
    CUTE_UNROLL
    for (int j = 0; j < int(cute::size(acc)) / 4; ++j) {
      const float4 v = __ldcg(first + j * 128 + lane);  // from L2: other SMs wrote it
      acc(4 * j) = v.x, acc(4 * j + 1) = v.y, acc(4 * j + 2) = v.z, acc(4 * j + 3) = v.w;
    }
    for (int64_t s = 1; s < count; ++s) {
      const float4* src = part(slot_of(s));
      CUTE_UNROLL
      for (int j = 0; j < int(cute::size(acc)) / 4; ++j) {
        const float4 v = __ldcg(src + j * 128 + lane);
        acc(4 * j) += v.x, acc(4 * j + 1) += v.y, acc(4 * j + 2) += v.z, acc(4 * j + 3) += v.w;
      }
    }
  }

  // Hands segment `segment` of `tile` (its partial in acc, its slot `slot`) to the fixup. True
  // when this warpgroup finished the tile: acc then holds the whole sum, to be stored.
  template <class Acc>
  __device__ __forceinline__ bool combine(Acc& acc, const sched::StreamKPlan& plan, int64_t tile, int64_t segment,
                                          int64_t slot, int lane) const {
    const sched::FixupTree tree = sched::FixupTree::of(plan.segments(tile));
    const auto segment_slot = [&](int64_t j) { return plan.segment_slot(tile, j); };
    if (tree.groups == 1) {
      if (!publish(acc, slot, tile, tree.segments, lane)) return false;
      sum(acc, tree.segments, segment_slot, lane);
      return true;
    }
    const int64_t g = tree.group_of(segment), first = tree.group_begin(g);
    const int64_t length = tree.group_begin(g + 1) - first;
    if (!publish(acc, slot, plan.group_counter(tile, tree, g), length, lane)) return false;
    sum(acc, length, [&](int64_t j) { return segment_slot(first + j); }, lane);
    if (!publish(acc, segment_slot(first), tile, tree.groups, lane)) return false;
    sum(acc, tree.groups, [&](int64_t r) { return segment_slot(tree.group_begin(r)); }, lane);
    return true;
  }
};

}  // namespace torch_grouped::kernels
