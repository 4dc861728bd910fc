// Many small copy jobs in few launches (cuda/pitched_copy.cu, cuda/tf32_operands.cu): the jobs ride
// in the kernel's parameters, as many per launch as its 4 KB hold, and the launch's blocks are
// dealt to them in order, each job as many as its work needs. A Job has a first_block field.
#pragma once
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace torch_grouped {

template <class Job, int MaxJobs>
struct JobBatch {
  static_assert(MaxJobs * sizeof(Job) + 16 <= 4096, "the jobs must fit the kernel's 4 KB of parameters");
  Job job[MaxJobs];
  int count;
};

// The job this block works on (blocks [first_block of job j, first_block of job j + 1)).
template <class Job, int MaxJobs>
__device__ __forceinline__ const Job& job_of_block(const JobBatch<Job, MaxJobs>& jobs) {
  int j = 0;
  while (j + 1 < jobs.count && int64_t(blockIdx.x) >= jobs.job[j + 1].first_block) ++j;
  return jobs.job[j];
}

// Launches kernel<<<blocks, threads>>> on `stream` for each batch of up to MaxJobs jobs, job i
// given ceil(units(job i) / units_per_block) blocks.
template <int MaxJobs, class Job, class Units>
void launch_job_batches(const std::vector<Job>& jobs, Units units, int64_t units_per_block,
                        void (*kernel)(JobBatch<Job, MaxJobs>), int threads, cudaStream_t stream) {
  for (size_t first = 0; first < jobs.size(); first += MaxJobs) {
    JobBatch<Job, MaxJobs> batch{};
    batch.count = static_cast<int>(std::min<size_t>(MaxJobs, jobs.size() - first));
    int64_t blocks = 0;
    for (int i = 0; i < batch.count; ++i) {
      batch.job[i] = jobs[first + i];
      batch.job[i].first_block = blocks;
      blocks += (units(batch.job[i]) + units_per_block - 1) / units_per_block;
    }
    if (blocks == 0) continue;
    kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(batch);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

}  // namespace torch_grouped
