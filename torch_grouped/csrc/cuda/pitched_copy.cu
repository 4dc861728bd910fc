// The pitched copies of cuda/pitched_copy.h. Each thread fills 16-byte chunks of destination
// rows (8 elements, zeros past the row's end) from 2-byte loads of the source (its rows start
// anywhere), all loads of a thread in flight before its stores: a warp-per-row version with one
// 2-byte access per lane and step ran the 90 MB copies of the strong-scaling shapes at a fraction
// of the bandwidth (session 5, run 2). Blocks are dealt to the jobs by their chunk counts.
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

__global__ void __launch_bounds__(kThreads) pitched_copy_kernel(const __grid_constant__ Batch jobs) {
  // The matmul kernel after the copies may launch now and run its prologue; it waits for them.
  kernels::allow_dependent_launch();
  const PitchedCopyJob& job = job_of_block(jobs);
  const int64_t per_row = job.pitch / 8, total = chunks_of(job);
  const int64_t first = (int64_t(blockIdx.x) - job.first_block) * kChunksPerBlock + threadIdx.x;
  uint4 chunk[kChunksPerThread];
  uint16_t* dst[kChunksPerThread] = {};
#pragma unroll
  for (int u = 0; u < kChunksPerThread; ++u) {
    const int64_t q = first + u * kThreads;
    if (q >= total) break;
    const int64_t row = q / per_row, col = (q - row * per_row) * 8;
    const int64_t b = row / job.outer, o = row - b * job.outer;
    const uint16_t* __restrict__ src = job.src + b * job.stride[0] + o * job.stride[1];
    uint16_t v[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = col + e < job.inner ? src[(col + e) * job.stride[2]] : uint16_t{0};
    chunk[u] = make_uint4(v[0] | uint32_t(v[1]) << 16, v[2] | uint32_t(v[3]) << 16, v[4] | uint32_t(v[5]) << 16,
                          v[6] | uint32_t(v[7]) << 16);
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
