// The batch axes of the 2-D permutation kernels (tile2d, small_axis_copy), filled in one place.
#pragma once
#include "../common/permute_plan.h"
#include "../kernels/permute.cuh"

namespace torch_grouped {

// Makes every axis of `s` but the kernel's own (bit d of `own` set for axis d) a batch axis of
// `axes`, outermost first, and multiplies `units` (the kernel's work items per batch position) by
// their sizes. False where a batch stride is not a multiple of `multiple` elements on either side
// (the kernels' vectors would straddle it) or the work items pass 2^31 - 1 (32-bit indices).
inline bool fill_batch_axes(const PermuteShape& s, uint32_t own, int64_t multiple, int64_t& units,
                            kernels::BatchAxes& axes) {
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  axes.batch = 0;
  for (int d = 0; d < s.rank; ++d) {
    if (own >> d & 1u) continue;
    if (s.in_stride[d] % multiple || s.out_stride[d] % multiple) return false;
    units *= s.size[d];
    if (units > kMax) return false;
    axes.batch_size[axes.batch] = kernels::FastDivmod(static_cast<uint32_t>(s.size[d]));
    axes.batch_in[axes.batch] = s.in_stride[d];
    axes.batch_out[axes.batch] = s.out_stride[d];
    ++axes.batch;
  }
  return true;
}

}  // namespace torch_grouped
