// The copies of cuda/tf32_operands.h: each thread reads 4 consecutive source elements of a row
// (one 16-byte load where the row allows) and writes their hi and lo parts (16-byte stores: both
// parts start on 16-byte boundaries), its loads in flight before its stores; blocks are
// dealt to the jobs by their element counts (the scheme of pitched_copy.cu). (A first version read
// each source element once per part: 327 µs for both operands of n = 4096, k = 4096; H100.)
// A job whose rows are the source's columns (a B operand N-major, staged as Bᵀ's rows: unit
// stride along the rows, not along k) goes through 32 x 32 tiles in shared memory instead, read
// along the source's contiguous axis: read element by element along k, every 4-byte load would
// take a 32-byte sector of its own.
#include <ATen/Context.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "../common/kernel_switch.h"
#include "../kernels/dependent_launch.cuh"
#include "job_batches.cuh"
#include "tf32_operands.h"

namespace torch_grouped {
namespace {

constexpr int kThreads = 256, kQuadsPerThread = 2, kQuadsPerBlock = kThreads * kQuadsPerThread;
constexpr int kJobsPerLaunch = 40;  // 40 jobs of 72 bytes: within the 4 KB of kernel parameters
// Transposed jobs: 32 x 32 tiles (rows x k), two per block, a thread's quad of each.
constexpr int kTile = 32, kQuadsPerTile = kTile * kTile / 4, kTilesPerBlock = kQuadsPerBlock / kQuadsPerTile;
static_assert(kQuadsPerTile == kThreads, "one quad of a tile per thread");

using Batch = JobBatch<Tf32Job, kJobsPerLaunch>;

__host__ __device__ bool transposed(const Tf32Job& job) { return job.src_row_stride == 1 && job.src_col_stride != 1; }
__host__ __device__ int64_t row_tiles(const Tf32Job& job) { return (job.rows + kTile - 1) / kTile; }

// Units of work: groups of 4 source elements (the last of a row may be short), or for a transposed
// job its tiles' quads.
__host__ __device__ int64_t quads_of(const Tf32Job& job) {
  if (transposed(job)) return row_tiles(job) * ((job.k + kTile - 1) / kTile) * kQuadsPerTile;
  return job.rows * ((job.k + 3) / 4);
}

// x rounded to TF32 (10 mantissa bits), to nearest with ties away from zero, as the hardware's
// own conversion does it; infinities and NaN unchanged.
__device__ __forceinline__ float to_tf32(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
#else
  const uint32_t b = __float_as_uint(x);
  if ((b & 0x7f800000u) == 0x7f800000u) return x;
  return __uint_as_float((b + 0x1000u) & 0xffffe000u);
#endif
}

// Writes source elements v[0..3] of a row at column col of its staged row: as they are, or their
// hi parts there and their lo parts at lo_at + col (16-byte stores: col, lo_at and the pitch are
// multiples of 4).
__device__ __forceinline__ void store_quad(const Tf32Job& job, float* dst, int64_t col, const float (&v)[4]) {
  if (job.lo_at == 0) {
    *reinterpret_cast<float4*>(dst + col) = make_float4(v[0], v[1], v[2], v[3]);
    return;
  }
  float hi[4], lo[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    hi[e] = to_tf32(v[e]);
    lo[e] = to_tf32(v[e] - hi[e]);
  }
  *reinterpret_cast<float4*>(dst + col) = make_float4(hi[0], hi[1], hi[2], hi[3]);
  *reinterpret_cast<float4*>(dst + job.lo_at + col) = make_float4(lo[0], lo[1], lo[2], lo[3]);
}

// A transposed job's tiles `first_tile`, `first_tile` + 1: a warp loads 32 consecutive source
// elements (32 rows, one column k) per instruction, 4 columns per warp, into tile[k][row] (33
// columns: the reads below hit 32 banks); then thread t writes row t / 8, columns 4·(t % 8)..+3.
// Elements past k load as zeros, so every tile writes its whole 32 columns: together they fill
// hi's padding up to lo_at and lo's up to the pitch (split), or the row up to the pitch (as is).
// The branch is the block's (one job per block), so the barriers are reached by every thread.
__device__ __forceinline__ void stage_transposed_tiles(const Tf32Job& job, int64_t first_tile) {
  __shared__ float tile[kTile][kTile + 1];
  const int64_t tiles = quads_of(job) / kQuadsPerTile, per_column = row_tiles(job);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int u = 0; u < kTilesPerBlock; ++u) {
    const int64_t t = first_tile + u;
    if (t >= tiles) break;
    const int64_t row0 = (t % per_column) * kTile, col0 = (t / per_column) * kTile;
    float x[4];  // (all four loads in flight before the shared-memory stores)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t row = row0 + lane, col = col0 + 4 * warp + e;
      x[e] = row < job.rows && col < job.k ? job.src[row + col * job.src_col_stride] : 0.0f;
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) tile[4 * warp + e][lane] = x[e];
    __syncthreads();
    const int r = threadIdx.x / 8, c = 4 * (threadIdx.x % 8);
    const int64_t row = row0 + r, col = col0 + c;
    const float v[4] = {tile[c][r], tile[c + 1][r], tile[c + 2][r], tile[c + 3][r]};
    if (row < job.rows && (job.lo_at > 0 || col < job.pitch)) store_quad(job, job.dst + row * job.pitch, col, v);
    __syncthreads();  // (the next tile reuses the buffer)
  }
}

__global__ void __launch_bounds__(kThreads) tf32_operand_kernel(const __grid_constant__ Batch jobs) {
  kernels::allow_dependent_launch();  // the matmul kernel after the copies may start its prologue
  const Tf32Job& job = job_of_block(jobs);
  if (transposed(job)) {
    stage_transposed_tiles(job, (int64_t(blockIdx.x) - job.first_block) * kTilesPerBlock);
    return;
  }
  const int64_t per_row = (job.k + 3) / 4, total = quads_of(job);
  const int64_t first = (int64_t(blockIdx.x) - job.first_block) * kQuadsPerBlock + threadIdx.x;
  // 16-byte loads: unit column stride, k and the row stride multiples of 4, an aligned base
  const bool vector_in = job.src_col_stride == 1 && job.k % 4 == 0 && job.src_row_stride % 4 == 0 &&
                         reinterpret_cast<uintptr_t>(job.src) % 16 == 0;
  float4 x[kQuadsPerThread];
  int64_t row[kQuadsPerThread], col[kQuadsPerThread];
#pragma unroll
  for (int u = 0; u < kQuadsPerThread; ++u) {
    const int64_t q = first + u * kThreads;
    row[u] = -1;
    if (q >= total) break;
    row[u] = q / per_row, col[u] = (q - row[u] * per_row) * 4;
    const float* __restrict__ src = job.src + row[u] * job.src_row_stride;
    if (vector_in) {
      x[u] = *reinterpret_cast<const float4*>(src + col[u]);
    } else {
      float v[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) v[e] = col[u] + e < job.k ? src[(col[u] + e) * job.src_col_stride] : 0.0f;
      x[u] = make_float4(v[0], v[1], v[2], v[3]);
    }
  }
#pragma unroll
  for (int u = 0; u < kQuadsPerThread; ++u) {
    if (row[u] < 0) break;
    const float v[4] = {x[u].x, x[u].y, x[u].z, x[u].w};
    float* dst = job.dst + row[u] * job.pitch;
    // (a quad's elements past k were loaded as zeros: its 16 bytes fit below lo_at and the pitch)
    store_quad(job, dst, col[u], v);
    // zeros between hi's last quad and lo_at, and after lo's up to the pitch (under 32 elements),
    // by the row's first quad
    if (job.lo_at > 0 && col[u] == 0) {
      const int64_t quads_end = (job.k + 3) / 4 * 4;
      for (int64_t c = quads_end; c < job.lo_at; ++c) dst[c] = 0.0f;
      for (int64_t c = job.lo_at + quads_end; c < job.pitch; ++c) dst[c] = 0.0f;
    }
  }
}

void launch_tf32_jobs(const std::vector<Tf32Job>& jobs, cudaStream_t stream) {
  launch_job_batches<kJobsPerLaunch>(jobs, quads_of, kQuadsPerBlock, tf32_operand_kernel, kThreads, stream);
}

}  // namespace

Tf32Mode tf32_mode() { return at::globalContext().allowTF32CuBLAS() ? Tf32Mode::AsIs : Tf32Mode::Split; }

namespace {

KernelSwitch fp32_kernels_setting() { return kernel_switch("TORCH_GROUPED_FP32_KERNELS"); }

}  // namespace

// Measured on the H100 (session 19): in one TF32 pass cuBLAS's own TF32 kernels beat ours on every
// streamk_mm shape (0.57 vs 0.37 ms on 4096³), so allow_tf32 keeps cuBLAS. 3xTF32 against fp32
// cuBLAS: the staging reads and writes about 20·(m + n)·k bytes, the matmul costs three TF32
// passes, cuBLAS runs fp32 at ~50 TFLOP/s; ours wins once the harmonic mean of m and n passes
// ~1000 (1000 x 3000 x 5000: 1.24x, 1408² x 8192: 1.37x; 512 x 1024 x 32768: 0.74x,
// 128 x 128 x 65536: 0.43x).
bool fp32_streamk_on_kernel(int64_t m, int64_t n) {
  const bool rule = tf32_mode() == Tf32Mode::Split && 2 * m * n >= 1024 * (m + n);
  return on_our_kernel(fp32_kernels_setting(), rule);
}

// gemm's peer is a loop of cuBLAS calls, a launch each: 3xTF32 on the grouped kernel beat the loop
// of fp32 mm on every case (64 x 128 x 1024 x 1024: 1.28x, 4 x 4096³: 1.67x); in one TF32 pass
// ours wins where groups are small (64 x 128 x 1024 x 1024: 2.4x) and loses on big ones
// (4 x 4096³: 0.79x): cuBLAS's TF32 rate is ~1.5x ours, which a launch (~5 µs) outweighs below a
// few GFLOP per group.
bool fp32_gemm_on_kernel(int64_t groups, double flops) {
  const bool rule = tf32_mode() == Tf32Mode::Split || flops < 4e9 * static_cast<double>(groups);
  return on_our_kernel(fp32_kernels_setting(), rule);
}

// grouped_mm's other path is a loop of cuBLAS calls that reads offs on the host (a
// synchronisation, no CUDA graph capture): the kernel unless told otherwise, in both modes.
// Measured (H100, session 20, against torch._grouped_mm, K-major weights): 3xTF32 1.03-1.12x on
// 32 experts of 256 x 4096 x 2048 and 1.85-2.11x on 64 of 128 x 1024 x 1024; one TF32 pass
// 1.28x and 8.5-10.4x. N-major weights (copied transposed per call) lose on the big experts
// (0.92x, 0.65x in one TF32 pass) and still win on the small ones (1.68x, 3.18x).
bool fp32_grouped_mm_on_kernel() { return fp32_kernels_setting() != KernelSwitch::Never; }

int Tf32Operands::add(const at::Tensor& t) {
  TORCH_INTERNAL_ASSERT((t.dim() == 2 || t.dim() == 3) && t.scalar_type() == at::kFloat);
  const bool batched = t.dim() == 3;
  const int64_t batches = batched ? t.size(0) : 1, rows = t.size(-2), k = t.size(-1);
  const int64_t sizes[3] = {batches, rows, k}, strides[3] = {batched ? t.stride(0) : t.numel(), t.stride(-2), t.stride(-1)};
  operands_.push_back(split() ? std::nullopt : tma_operand(t.data_ptr(), at::kFloat, sizes, strides));
  batches_.push_back(batches);
  // Split rows are 2·lo_at long (lo's part zero-padded as hi's is): the list form's maps, patched
  // on the device from the problem table, take the kernel's k (3·lo_at) as their extent, and the
  // kernel reads a row only below 2·lo_at (kernels::split_k_coords), so every read stays in its row.
  const int64_t lo = split() ? lo_at(k) : 0, pitch = split() ? 2 * lo : (k + 3) / 4 * 4;
  constexpr int64_t k31 = int64_t{1} << 31;
  const bool fits = batches > 0 && rows > 0 && k > 0 && batches < k31 && rows < k31 && kernel_k(k) < k31 &&
                    batches * rows * pitch * 4 < (int64_t{1} << 40);
  if (!operands_.back() && fits) {
    bytes_ = (bytes_ + 127) / 128 * 128;
    // One job per batch, their rows one after the other (a [batches, rows, pitch] buffer); dst
    // holds the byte offset until copy() has the buffer.
    for (int64_t i = 0; i < batches; ++i) {
      jobs_.push_back(Tf32Job{t.const_data_ptr<float>() + i * strides[0], reinterpret_cast<float*>(bytes_ + i * rows * pitch * 4),
                              rows, k, t.stride(-2), t.stride(-1), pitch, lo});
      job_operand_.push_back(static_cast<int>(operands_.size()) - 1);
    }
    bytes_ += batches * rows * pitch * 4;
  }
  return static_cast<int>(operands_.size()) - 1;
}

void Tf32Operands::copy(const at::Device& device, cudaStream_t stream, std::vector<at::Tensor>& keep) {
  if (jobs_.empty()) return;
  keep.push_back(at::empty({bytes_}, at::TensorOptions().dtype(at::kByte).device(device)));
  auto* base = keep.back().data_ptr<uint8_t>();
  for (size_t j = 0; j < jobs_.size(); ++j) {
    Tf32Job& job = jobs_[j];
    job.dst = reinterpret_cast<float*>(base + reinterpret_cast<uintptr_t>(job.dst));
    std::optional<TmaOperand>& operand = operands_[job_operand_[j]];
    if (j > 0 && job_operand_[j - 1] == job_operand_[j]) continue;  // the map is its first batch's
    const int64_t sizes[3] = {batches_[job_operand_[j]], job.rows, job.lo_at > 0 ? job.pitch : job.k};
    const int64_t strides[3] = {job.rows * job.pitch, job.pitch, 1};
    operand = tma_operand(job.dst, at::kFloat, sizes, strides);
  }
  launch_tf32_jobs(jobs_, stream);
  jobs_.clear();
  job_operand_.clear();
  bytes_ = 0;
}

}  // namespace torch_grouped
