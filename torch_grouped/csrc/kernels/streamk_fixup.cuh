// How the CTAs that share a Stream-K tile meet (sched/streamk_plan.h says who shares what).
//
// A peer stores its partial accumulators in its workspace slot and raises the slot's flag; the
// finisher waits for each peer's flag in K order and adds that partial to its own accumulators,
// so the order of the sum, and the result, never depend on timing.
//
// A partial is stored in the accumulators' register order, not as a matrix: thread i of the
// finisher holds the same elements as thread i of the peer, so every thread reads back exactly
// what one thread wrote, in coalesced 16-byte accesses, without shared memory.
//
// Flags are per slot and consumer warpgroup (each warpgroup owns its 64 rows and never waits for
// the other). The finisher sets a flag back to zero once it has seen it, so the flags are all
// zero between launches and the host never clears them.
#pragma once
#include <cuda/atomic>
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include <cstdint>

namespace torch_grouped::kernels {

struct StreamKSlots {
  float* workspace;     // slots of slot_floats fp32 each
  int32_t* flags;       // slots x consumers
  int slot_floats;      // one whole tile
  int consumers;        // consumer warpgroups per CTA
  int warpgroup;        // this thread's consumer warpgroup
  int barrier;          // the warpgroup's named barrier

  __device__ __forceinline__ float4* part(int64_t slot) const {
    return reinterpret_cast<float4*>(workspace + (slot * consumers + warpgroup) * (slot_floats / consumers));
  }
  __device__ __forceinline__ cuda::atomic_ref<int32_t, cuda::thread_scope_device> flag(int64_t slot) const {
    return cuda::atomic_ref<int32_t, cuda::thread_scope_device>(flags[slot * consumers + warpgroup]);
  }

  // Stores this warpgroup's accumulators in `slot` and raises its flag.
  template <class Acc>
  __device__ __forceinline__ void publish(const Acc& acc, int64_t slot, int lane) const {
    float4* dst = part(slot);
    CUTE_UNROLL
    for (int j = 0; j < int(cute::size(acc)) / 4; ++j)
      dst[j * 128 + lane] = make_float4(acc(4 * j), acc(4 * j + 1), acc(4 * j + 2), acc(4 * j + 3));
    // The barrier orders every thread's stores before lane 0's release (the pattern of CUTLASS's
    // generic barrier: bar.sync, then one fenced release).
    cutlass::arch::NamedBarrier::sync(128, barrier);
    if (lane == 0) {
      __threadfence();
      flag(slot).store(1, cuda::memory_order_release);
    }
  }

  // Waits for `slot`'s flag, clears it, and adds the partial stored there to `acc`.
  template <class Acc>
  __device__ __forceinline__ void add_into(Acc& acc, int64_t slot, int lane) const {
    if (lane == 0) {
      auto f = flag(slot);
      while (f.load(cuda::memory_order_acquire) == 0) __nanosleep(32);
      f.store(0, cuda::memory_order_relaxed);
    }
    cutlass::arch::NamedBarrier::sync(128, barrier);
    const float4* src = part(slot);
    CUTE_UNROLL
    for (int j = 0; j < int(cute::size(acc)) / 4; ++j) {
      const float4 v = __ldcg(src + j * 128 + lane);  // from L2: another SM wrote it
      acc(4 * j) += v.x, acc(4 * j + 1) += v.y, acc(4 * j + 2) += v.z, acc(4 * j + 3) += v.w;
    }
  }
};

}  // namespace torch_grouped::kernels
