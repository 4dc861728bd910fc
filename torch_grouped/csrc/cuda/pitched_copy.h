// Copies of 2-byte [batch, outer, inner] operands with any strides into pitched dense layouts
// (each row padded to a multiple of 8 elements, so that every row starts at a 16-byte boundary):
// many copies in one launch.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace torch_grouped {

struct PitchedCopyJob {
  const uint16_t* src;
  uint16_t* dst;            // rows `pitch` elements apart, batches outer * pitch apart
  int64_t batch, outer, inner, pitch;
  int64_t stride[3];        // of src, elements (any, 0 included)
  int64_t first_block = 0;  // filled by launch_pitched_copies
};

constexpr int64_t pitched_row(int64_t inner) { return (inner + 7) / 8 * 8; }

// Runs every job on `stream`, as few launches as the kernel's parameter space allows.
void launch_pitched_copies(std::vector<PitchedCopyJob> jobs, cudaStream_t stream);

}  // namespace torch_grouped
