// The pitched copies of cuda/pitched_copy.h. Each thread fills 16-byte chunks of destination
// rows (8 elements, zeros past the row's end), all loads of a thread in flight before its stores:
// a warp-per-row version with one 2-byte access per lane and step ran the 90 MB copies of the
// strong-scaling shapes at a fraction of the bandwidth (session 5, run 2). A chunk of a contiguous
// row (the operands of odd K or N, the common case) is read as 4-byte words from the 4-byte grid,
// joined by funnel shifts where the row starts off it; other chunks (a row's tail, strided rows)
// element by element. Blocks are dealt to the jobs by their chunk counts.
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "../kernels/dependent_launch.cuh"
#include "job_batches.cuh"
#include "pitched_copy.h"

namespace torch_grouped {
namespace {

constexpr int kThreads = 256, kChunksPerThread = 2, kChunksPerBlock = kThreads * kChunksPerThread;
constexpr int kJobsPerLaunch = 32;  // 32 jobs of 80 bytes: within the 4 KB of kernel parameters

using Batch = JobBatch<PitchedCopyJob, kJobsPerLaunch>;

__host__ __device__ int64_t chunks_of(const PitchedCopyJob& job) { return job.batch * job.outer * (job.pitch / 8); }

// Elements [0, 8) from `p`, which lies on the 2-byte grid: the aligned words that hold them, four
// where p is on the 4-byte grid, else five (one more element on each side, joined by funnel
// shifts). Whole 4-byte words are read, so the caller makes sure those lie inside the tensor.
// (Session 49, H200: the element-by-element loads ran these copies at ~3.0 TB/s of 4.8, with two
// 64-bit divisions and eight loads a chunk.)
__device__ __forceinline__ uint4 load_chunk(const uint16_t* p) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  const uint32_t* w = reinterpret_cast<const uint32_t*>(address & ~uintptr_t(3));
  if ((address & 2) == 0) return make_uint4(__ldg(w), __ldg(w + 1), __ldg(w + 2), __ldg(w + 3));
  uint32_t v[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) v[i] = __ldg(w + i);
  return make_uint4(__funnelshift_r(v[0], v[1], 16), __funnelshift_r(v[1], v[2], 16), __funnelshift_r(v[2], v[3], 16),
                    __funnelshift_r(v[3], v[4], 16));
}

__global__ void __launch_bounds__(kThreads) pitched_copy_kernel(const __grid_constant__ Batch jobs) {
  // The matmul kernel after the copies may launch now and run its prologue; it waits for them.
  kernels::allow_dependent_launch();
  const PitchedCopyJob& job = job_of_block(jobs);
  const int64_t per_row = job.pitch / 8, total = chunks_of(job);
  const int64_t first = (int64_t(blockIdx.x) - job.first_block) * kChunksPerBlock + threadIdx.x;
  // The tensor's first and last elements (strides are never negative): the words of a chunk read
  // whole must lie between them.
  const uint16_t* const lowest = job.src;
  const uint16_t* const highest =
      job.src + (job.batch - 1) * job.stride[0] + (job.outer - 1) * job.stride[1] + (job.inner - 1) * job.stride[2];
  const bool contiguous_rows = job.stride[2] == 1;
  uint4 chunk[kChunksPerThread];
  uint16_t* dst[kChunksPerThread] = {};
#pragma unroll
  for (int u = 0; u < kChunksPerThread; ++u) {
    const int64_t q = first + u * kThreads;
    if (q >= total) break;
    int64_t row, col;
    if (total <= INT32_MAX) {  // (a 32-bit division where it fits: a 64-bit one is a long subroutine)
      const uint32_t r = uint32_t(q) / uint32_t(per_row);
      row = r, col = (int64_t(q) - int64_t(r) * per_row) * 8;
    } else {
      row = q / per_row, col = (q - row * per_row) * 8;
    }
    int64_t b = 0, o = row;
    if (job.batch > 1) b = row / job.outer, o = row - b * job.outer;
    const uint16_t* __restrict__ src = job.src + b * job.stride[0] + o * job.stride[1];
    const uint16_t* const p = src + col;
    // five words reach one element past each end of the chunk where p is off the 4-byte grid
    const bool odd = (reinterpret_cast<uintptr_t>(p) & 2) != 0;
    if (contiguous_rows && col + 8 <= job.inner && (!odd || (p - 1 >= lowest && p + 8 <= highest))) {
      chunk[u] = load_chunk(p);
    } else {
      uint16_t v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] = col + e < job.inner ? src[(col + e) * job.stride[2]] : uint16_t{0};
      chunk[u] = make_uint4(v[0] | uint32_t(v[1]) << 16, v[2] | uint32_t(v[3]) << 16, v[4] | uint32_t(v[5]) << 16,
                            v[6] | uint32_t(v[7]) << 16);
    }
    dst[u] = job.dst + row * job.pitch + col;
  }
#pragma unroll
  for (int u = 0; u < kChunksPerThread; ++u) {
    if (dst[u] == nullptr) break;
    // (in PTX: NVVM split a plain uint4 store into four 4-byte ones)
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(dst[u]), "r"(chunk[u].x), "r"(chunk[u].y),
                 "r"(chunk[u].z), "r"(chunk[u].w) : "memory");
  }
}

}  // namespace

void launch_pitched_copies(std::vector<PitchedCopyJob> jobs, cudaStream_t stream) {
  launch_job_batches<kJobsPerLaunch>(jobs, chunks_of, kChunksPerBlock, pitched_copy_kernel, kThreads, stream);
}

}  // namespace torch_grouped
