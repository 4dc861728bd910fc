// A CTA's work units, handed from its producer warp to its consumer warpgroups through a ring of
// shared-memory slots with a full and an empty mbarrier each (CUTLASS's scheduler pipeline, in
// small). The producer walks to every unit anyway, and ahead of the consumers (it runs up to a
// pipeline's depth of K blocks before them); the consumers' own walk to their next unit (the
// device-only visitor's scan of the offsets, resolve_group's reads) was time in which they issued
// no WGMMA at every tile boundary of the grouped kernels: ~2 µs, 16% of a tile of grouped_mm's 64
// small experts and ~30% of 128 tiny ones (H100, session 28). Walking during the consumers' first
// K block instead stalled the WGMMAs there (session 29). Through the ring the consumers read a
// unit from shared memory.
#pragma once
#include <cutlass/arch/barrier.h>

namespace torch_grouped::kernels {

template <class Unit, int Slots>
struct UnitRingStorage {
  struct alignas(16) Slot {
    Unit unit;
    int32_t live;  // 0: the walk has ended (the unit is not set)
  };
  Slot slots[Slots];
  cutlass::arch::ClusterBarrier full[Slots];   // the slot holds the next unit (one arrival: the producer's)
  cutlass::arch::ClusterBarrier empty[Slots];  // every consumer warp has read it
};

template <class Unit, int Slots>
struct UnitRing {
  static_assert(Slots >= 2, "the producer fills one slot while its current unit sits in another");
  using Storage = UnitRingStorage<Unit, Slots>;
  Storage& s;
  int index = 0;
  uint32_t phase;  // the parity this side waits for: a fresh barrier's "previous" phase (1) counts as done

  // Producer: starts with every slot free; consumer: with none full.
  __device__ UnitRing(Storage& storage, bool producer) : s(storage), phase(producer ? 1u : 0u) {}

  // Once, by one thread, before the CTA's first __syncthreads (or cluster barrier).
  static __device__ void init(Storage& storage, int consumer_warps) {
    for (int i = 0; i < Slots; ++i) {
      storage.full[i].init(1);
      storage.empty[i].init(uint32_t(consumer_warps));
    }
    cutlass::arch::fence_barrier_init();
  }

  // Every lane of the producer warp (the walk is warp-wide): the next unit, or the end of the walk
  // (live false), which `writer` waits for a free slot for, writes and signals. Returns the slot,
  // which every lane may read once this returns and which stays as it is for Slots - 1 more
  // pushes: the producer reads its current unit there rather than hold it in registers beside the
  // walk's next one (two units in its 56 registers spilled ~700 bytes; session 29).
  __device__ __forceinline__ int push(const Unit& u, bool live, bool writer) {
    const int at = index;
    if (writer) {
      s.empty[at].wait(phase);
      if (live) s.slots[at].unit = u;
      s.slots[at].live = live ? 1 : 0;
      s.full[at].arrive();  // (release: the slot's stores before it)
    }
    __syncwarp();  // (the writer's stores before the other lanes' reads)
    step();
    return at;
  }
  __device__ __forceinline__ const Unit& unit(int at) const { return s.slots[at].unit; }

  // Every consumer thread: the next unit into `u`, false at the end of the walk. Lane 0 of each
  // warp frees the slot once the warp's lanes have read it.
  __device__ __forceinline__ bool pop(Unit& u, int thread) {
    s.full[index].wait(phase);
    const bool live = s.slots[index].live != 0;
    if (live) u = s.slots[index].unit;
    __syncwarp();
    if (thread % 32 == 0) s.empty[index].arrive();
    step();
    return live;
  }

 private:
  __device__ __forceinline__ void step() {
    if (++index == Slots) index = 0, phase ^= 1u;
  }
};

}  // namespace torch_grouped::kernels
