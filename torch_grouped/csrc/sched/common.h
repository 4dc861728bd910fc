// Shared helpers for the scheduler index math. Everything in csrc/sched/ is plain integer
// arithmetic that compiles for the host (CPU path, host-side planning, CPU tests) and for the
// device (the persistent kernels), so one definition of every schedule serves both.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define TG_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TG_HOST_DEVICE inline
#endif

namespace torch_grouped::sched {

TG_HOST_DEVICE int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
// The same in 32 bits, for 0 <= a < 2^31 and 0 < b < 2^31 (a tile count along a problem side): on
// the GPU a 32-bit division by a runtime divisor is a short inline sequence, a 64-bit one a call
// into a long routine (grouped_visitor.h's GemmTiles, walked at every tile boundary).
TG_HOST_DEVICE uint32_t ceil_div32(int64_t a, int32_t b) {
  return (static_cast<uint32_t>(a) + static_cast<uint32_t>(b) - 1) / static_cast<uint32_t>(b);
}
TG_HOST_DEVICE int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
TG_HOST_DEVICE int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// The output tile shape of a threadblock (CTA).
struct TileShape {
  int32_t m;
  int32_t n;
};

// One unit of output work: tile (tile_m, tile_n) of group `group`. `valid` is false for the
// padding slots of the Rank2K walk (see rank2k_visitor.h), which the CTA skips.
struct TileCoord {
  int32_t group;
  int32_t tile_m;
  int32_t tile_n;
  bool valid;
};

}  // namespace torch_grouped::sched
