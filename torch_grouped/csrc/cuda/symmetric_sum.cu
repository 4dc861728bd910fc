// H = G + Gᵀ through shared-memory tiles. ATen's g + g.mT() reads Gᵀ a row apart per thread, so
// each 32-byte sector it fetches serves one 2-byte element (4096² bf16: 512 MB of L2 traffic for
// 32 MB of data; 131.5 µs against clone's 20.8 on an H200, session 47). Here one block takes a tile
// pair of the lower triangle (sched::triangle_row_col, the Rank2K walk's closed form): tiles (i, j)
// and (j, i) of G, both read coalesced along their rows, give H's tiles (i, j) and (j, i), both
// written coalesced; G is read once and H written once. The groups of a call ride in the launch's
// parameters (job_batches.cuh).
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "../cpu/portable.h"
#include "../kernels/float_convert.cuh"
#include "../sched/rank2k_visitor.h"
#include "job_batches.cuh"
#include "symmetric_sum.h"

namespace torch_grouped {
namespace {

// A warp reads and writes a tile row of 32 pieces of Width elements (Width 2: bf16 or fp16 pairs, one
// 4-byte access each, where every order is even; else single elements), so tiles are 32·Width wide.
constexpr int kWarps = 8;  // each warp takes every 8th row of a tile
constexpr int kMaxJobs = 64;

struct SymmetricSumJob {
  const void* g;
  void* h;
  int64_t n;
  int64_t first_block;
};

// a + b as ATen adds them: in fp32 for 16-bit elements, rounded once.
template <typename T>
__device__ __forceinline__ T add(T a, T b) {
  if constexpr (sizeof(T) == 2) {
    return kernels::from_float<T>(kernels::to_float(a) + kernels::to_float(b));
  } else {
    return a + b;
  }
}

template <typename T, int Width>
struct alignas(Width * sizeof(T)) Piece {
  T v[Width];
};

template <typename T, int Width>
__global__ void __launch_bounds__(32 * kWarps) symmetric_sum_kernel(const JobBatch<SymmetricSumJob, kMaxJobs> jobs) {
  constexpr int kSide = 32 * Width;
  // +1: lane l's transposed reads (rows Width·l .. Width·l + Width - 1) fall in distinct banks
  __shared__ T lower[kSide][kSide + 1], upper[kSide][kSide + 1];
  using P = Piece<T, Width>;
  const SymmetricSumJob& job = job_of_block(jobs);
  const T* g = static_cast<const T*>(job.g);
  T* h = static_cast<T*>(job.h);
  const int64_t n = job.n;  // (Width 2: even, so a piece is inside the matrix or outside it whole)
  int64_t ti, tj;  // tile (ti, tj) of the lower triangle, ti >= tj
  sched::triangle_row_col(int64_t(blockIdx.x) - job.first_block, ti, tj);
  const int64_t r0 = ti * kSide, c0 = tj * kSide;
  const int x = Width * (threadIdx.x % 32), first_y = threadIdx.x / 32;
  for (int y = first_y; y < kSide; y += kWarps) {
    if (r0 + y < n && c0 + x < n) {  // G(i, j)
      const P p = *reinterpret_cast<const P*>(g + (r0 + y) * n + c0 + x);
      for (int e = 0; e < Width; ++e) lower[y][x + e] = p.v[e];
    }
    if (c0 + y < n && r0 + x < n) {  // G(j, i)
      const P p = *reinterpret_cast<const P*>(g + (c0 + y) * n + r0 + x);
      for (int e = 0; e < Width; ++e) upper[y][x + e] = p.v[e];
    }
  }
  __syncthreads();
  for (int y = first_y; y < kSide; y += kWarps) {
    // H(i, j)[y][x] = G(i, j)[y][x] + G(j, i)[x][y], and H(j, i) likewise (the same sums: symmetric)
    if (r0 + y < n && c0 + x < n) {
      P p;
      for (int e = 0; e < Width; ++e) p.v[e] = add(lower[y][x + e], upper[x + e][y]);
      *reinterpret_cast<P*>(h + (r0 + y) * n + c0 + x) = p;
    }
    if (ti != tj && c0 + y < n && r0 + x < n) {
      P p;
      for (int e = 0; e < Width; ++e) p.v[e] = add(lower[x + e][y], upper[y][x + e]);
      *reinterpret_cast<P*>(h + (c0 + y) * n + r0 + x) = p;
    }
  }
}

template <typename T, int Width>
void launch(const std::vector<SymmetricSumJob>& jobs, cudaStream_t stream) {
  const auto blocks = [](const SymmetricSumJob& j) {
    const int64_t tiles = (j.n + 32 * Width - 1) / (32 * Width);
    return tiles * (tiles + 1) / 2;
  };
  launch_job_batches<kMaxJobs>(jobs, blocks, 1, symmetric_sum_kernel<T, Width>, 32 * kWarps, stream);
}

// 16-bit elements in pairs where every job allows it: even orders, 4-byte aligned matrices.
template <typename T>
void launch_16_bit(const std::vector<SymmetricSumJob>& jobs, cudaStream_t stream) {
  const bool pairs = std::all_of(jobs.begin(), jobs.end(), [](const SymmetricSumJob& j) {
    return j.n % 2 == 0 && reinterpret_cast<uintptr_t>(j.g) % 4 == 0 && reinterpret_cast<uintptr_t>(j.h) % 4 == 0;
  });
  if (pairs) {
    launch<T, 2>(jobs, stream);
  } else {
    launch<T, 1>(jobs, stream);
  }
}

bool kernel_serves(const at::Tensor& t) {
  const at::ScalarType s = t.scalar_type();
  return t.is_cuda() && t.dim() == 2 && t.size(0) == t.size(1) && t.is_contiguous() && t.numel() > 0 &&
         (s == at::kBFloat16 || s == at::kHalf || s == at::kFloat || s == at::kDouble);
}

}  // namespace

std::vector<at::Tensor> symmetric_sum_cuda(at::TensorList g) {
  std::vector<at::Tensor> h(g.size());
  std::vector<SymmetricSumJob> jobs;
  const at::Tensor* first = nullptr;  // the first served: the launch's dtype and device
  for (size_t i = 0; i < g.size(); ++i) {
    // (one dtype and device per launch: a group of another goes through ATen)
    if (kernel_serves(g[i]) && (first == nullptr || (g[i].scalar_type() == first->scalar_type() &&
                                                     g[i].get_device() == first->get_device()))) {
      TORCH_CHECK((g[i].size(0) + 31) / 32 < (int64_t{1} << 16), "_symmetric_sum: order too large");
      first = first == nullptr ? &g[i] : first;
      h[i] = at::empty_like(g[i]);
      jobs.push_back({g[i].data_ptr(), h[i].data_ptr(), g[i].size(0), 0});
    } else {
      h[i] = symmetric_sum_aten(g[i]);  // (its checks: a square matrix)
    }
  }
  if (jobs.empty()) return h;
  const c10::cuda::CUDAGuard guard(first->device());
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(first->get_device()).stream();
  switch (first->scalar_type()) {
    case at::kBFloat16: launch_16_bit<__nv_bfloat16>(jobs, stream); break;
    case at::kHalf: launch_16_bit<__half>(jobs, stream); break;
    case at::kFloat: launch<float, 1>(jobs, stream); break;
    default: launch<double, 1>(jobs, stream); break;
  }
  return h;
}

}  // namespace torch_grouped
