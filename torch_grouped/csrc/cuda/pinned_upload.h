// Host-to-device uploads of per-call tables (problem lists, per-CTA schedules) through one pinned
// staging block and one cudaMemcpyAsync, straight from the caching allocators (through at::empty,
// narrow and copy_, the dispatcher and a TensorIterator cost tens of microseconds of host per
// call). Safe under CUDA graph capture: a block a captured copy reads is kept for the process.
#pragma once
#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>

#include <cstddef>

namespace torch_grouped {

// A pinned block of `bytes` from torch's caching host allocator, for the caller to fill.
at::DataPtr pinned_block(size_t bytes);

// Copies the first `bytes` of `host` (from pinned_block) to device memory `dst` on `stream`; the
// block returns to the allocator's cache once the copy has run (or never, when captured).
void upload_pinned(at::DataPtr host, void* dst, size_t bytes, const c10::cuda::CUDAStream& stream);

}  // namespace torch_grouped
