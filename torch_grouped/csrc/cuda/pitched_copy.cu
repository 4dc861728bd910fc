// The pitched copies of cuda/pitched_copy.h: one warp per row, lanes along the row (coalesced
// 2-byte accesses on both sides when the source has unit inner stride), blocks dealt to the jobs
// by their row counts.
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "pitched_copy.h"

namespace torch_grouped {
namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kJobsPerLaunch = 32;  // 32 jobs of 80 bytes: within the 4 KB of kernel parameters

struct JobBatch {
  PitchedCopyJob job[kJobsPerLaunch];
  int count;
};

__global__ void __launch_bounds__(kThreads) pitched_copy_kernel(const __grid_constant__ JobBatch jobs) {
  int j = 0;
  while (j + 1 < jobs.count && int64_t(blockIdx.x) >= jobs.job[j + 1].first_block) ++j;
  const PitchedCopyJob& job = jobs.job[j];
  const int lane = threadIdx.x & 31;
  const int64_t row = (int64_t(blockIdx.x) - job.first_block) * kWarps + (threadIdx.x >> 5);
  if (row >= job.batch * job.outer) return;
  const int64_t b = row / job.outer, o = row - b * job.outer;
  const uint16_t* __restrict__ src = job.src + b * job.stride[0] + o * job.stride[1];
  uint16_t* __restrict__ dst = job.dst + row * job.pitch;
  const int64_t step = job.stride[2];
#pragma unroll 4
  for (int64_t c = lane; c < job.inner; c += 32) dst[c] = src[c * step];
}

}  // namespace

void launch_pitched_copies(std::vector<PitchedCopyJob> jobs, cudaStream_t stream) {
  for (size_t first = 0; first < jobs.size(); first += kJobsPerLaunch) {
    JobBatch batch{};
    batch.count = static_cast<int>(std::min<size_t>(kJobsPerLaunch, jobs.size() - first));
    int64_t blocks = 0;
    for (int i = 0; i < batch.count; ++i) {
      batch.job[i] = jobs[first + i];
      batch.job[i].first_block = blocks;
      blocks += (batch.job[i].batch * batch.job[i].outer + kWarps - 1) / kWarps;
    }
    if (blocks == 0) continue;
    pitched_copy_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(batch);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

}  // namespace torch_grouped
