// Persistent grouped GEMM in fp64 on the FP64 tensor cores (sm_80+ DMMA through
// mma.sync.m8n8k4.f64), for gemm's list API and every form of grouped_mm: seed 000's grouped
// problem visitor (tile_walker.cuh, the same walk as the WGMMA kernels) over 64 x 64 tiles, a
// CTA of four warps (2 x 2, each 32 x 32 of the tile), K in blocks of 16 through a three-stage
// cp.async pipeline, fp64 accumulators, stores straight from the registers.
//
// Operands are read where they lie, through pointers and element strides (dmma_launch.h): 8-byte
// cp.async needs no more alignment than a double has, so transposed, strided and offset views
// need no copy. Each operand block lands in shared memory in the orientation its global layout
// fills with consecutive threads (coalesced reads, unconflicted writes), and rows are padded so
// that the fragment reads hit distinct banks either way.
#pragma once
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <atomic>

#include "dmma_launch.h"
#include "dynamic_smem.h"
#include "tile_walker.cuh"

namespace torch_grouped::kernels {

// One operand block (rows x bk) in shared memory: [row][k] in rows of bk + 4 elements, or [k][row]
// in rows of `rows` + 4 (see OperandLayout); room for the larger.
constexpr int dmma_block_elems(int rows, int bk) { return rows * (bk + 4) > bk * (rows + 4) ? rows * (bk + 4) : bk * (rows + 4); }

struct DmmaConfig {
  static constexpr int BM = kDmmaTileM, BN = kDmmaTileN, BK = 16, Stages = 3;
  static constexpr int Threads = 128;  // 2 x 2 warps of 32 x 32
  static constexpr int WarpM = 32, WarpN = 32;
  static_assert(BM == 2 * WarpM && BN == 2 * WarpN, "a 2 x 2 grid of warps");
  static constexpr int ABlockElems = dmma_block_elems(BM, BK), StageElems = ABlockElems + dmma_block_elems(BN, BK);
  static constexpr int SmemBytes = Stages * StageElems * 8;
  // For TileWalker: GEMM tiles, no clusters.
  using Tiles = sched::GemmTiles;
  static constexpr int ClusterM = 1;
  static constexpr bool Rank2K = false;
};

// Where element (row, k) of an operand block lies in shared memory: row·row + k·k. K contiguous
// in memory: [row][k] (consecutive threads along k); otherwise [k][row]. Either way the lanes of a
// half-warp, which read rows r and K columns c with r, c < 4 for one fragment, hit double-words
// 4r + c or 4c + r modulo 16: sixteen different pairs of banks.
struct OperandLayout {
  int row, k;
};
template <int Rows>
__device__ __forceinline__ OperandLayout operand_layout(const DmmaOperand& v) {
  return v.k_stride == 1 ? OperandLayout{DmmaConfig::BK + 4, 1} : OperandLayout{1, Rows + 4};
}

// 8 bytes global -> shared, zeros where `in` is false (src-size 0: nothing is read).
__device__ __forceinline__ void cp_async_8(double* dst, const double* src, bool in) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(s), "l"(src), "r"(in ? 8 : 0) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

// Rows [row0, row0 + Rows) x K [k0, k0 + BK) of operand v (rows x k in all), zeros outside, into
// `dst` laid out as `at`. Consecutive threads take consecutive elements along the operand's
// contiguous axis (k when at.k == 1).
template <int Rows>
__device__ __forceinline__ void load_block(const DmmaOperand& v, int64_t rows, int64_t k, int64_t row0, int64_t k0,
                                           double* dst, OperandLayout at) {
  constexpr int BK = DmmaConfig::BK, kPerThread = Rows * BK / DmmaConfig::Threads;
  const bool k_fastest = at.k == 1;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const int e = threadIdx.x + u * DmmaConfig::Threads;
    const int r = k_fastest ? e / BK : e % Rows, c = k_fastest ? e % BK : e / Rows;
    const int64_t gr = row0 + r, gk = k0 + c;
    const bool in = gr < rows && gk < k;
    cp_async_8(dst + r * at.row + c * at.k, in ? v.base + gr * v.row_stride + gk * v.k_stride : v.base, in);
  }
}

// d += a·b for one 8 x 8 x 4 step: a is A(lane / 4, lane % 4), b is B(lane % 4, lane / 4), d holds
// D(lane / 4, 2·(lane % 4) + {0, 1}).
__device__ __forceinline__ void dmma_8x8x4(double (&d)[2], double a, double b) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
      : "+d"(d[0]), "+d"(d[1])
      : "d"(a), "d"(b));
}

// Group g's operands as rows x K from their origin (the problem's row 0, column 0, K index 0).
__device__ __forceinline__ void problem_operands(const DmmaArgs& p, int32_t g, const GroupProblem& q, DmmaOperand& a,
                                                 DmmaOperand& b) {
  if (p.shape.form == GroupedForm::List) {
    const DmmaListOperands ops = p.list_operands[g];
    a = ops.a, b = ops.b;
    return;
  }
  a = p.a, b = p.b;
  a.base += int64_t(q.a_batch) * a.batch_stride + int64_t(q.a_row) * a.row_stride + int64_t(q.k_origin) * a.k_stride;
  b.base += int64_t(q.b_batch) * b.batch_stride + int64_t(q.b_col) * b.row_stride + int64_t(q.k_origin) * b.k_stride;
}

__global__ void __launch_bounds__(DmmaConfig::Threads) dmma_grouped_kernel(const __grid_constant__ DmmaArgs p) {
  using Cfg = DmmaConfig;
  extern __shared__ __align__(16) double smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warp_row = (warp / 2) * Cfg::WarpM + lane / 4, warp_col = (warp % 2) * Cfg::WarpN + lane / 4;
  TileWalker<Cfg> walker(p.shape);
  sched::TileCoord tile;
  GroupProblem q;
  for (int64_t step = 0; walker.next(step, tile, q); ++step) {
    if (!tile.valid) continue;
    DmmaOperand a, b;
    problem_operands(p, tile.group, q, a, b);
    const OperandLayout a_at = operand_layout<Cfg::BM>(a), b_at = operand_layout<Cfg::BN>(b);
    const int64_t row0 = int64_t(tile.tile_m) * Cfg::BM, col0 = int64_t(tile.tile_n) * Cfg::BN;
    const int32_t kblocks = int32_t(sched::ceil_div(q.k, Cfg::BK));  // 0: a tile of zeros
    auto a_block = [&](int s) { return smem + s * Cfg::StageElems; };
    auto b_block = [&](int s) { return smem + s * Cfg::StageElems + Cfg::ABlockElems; };
    auto load = [&](int32_t kb) {
      const int s = kb % Cfg::Stages;
      load_block<Cfg::BM>(a, q.m, q.k, row0, int64_t(kb) * Cfg::BK, a_block(s), a_at);
      load_block<Cfg::BN>(b, q.n, q.k, col0, int64_t(kb) * Cfg::BK, b_block(s), b_at);
    };

    double acc[Cfg::WarpM / 8][Cfg::WarpN / 8][2] = {};
    // Every iteration commits one group (empty past the last block), so that waiting for all but
    // the newest Stages - 2 groups always means: block kb has landed.
#pragma unroll
    for (int s = 0; s < Cfg::Stages - 1; ++s) {
      if (s < kblocks) load(s);
      cp_async_commit();
    }
    for (int32_t kb = 0; kb < kblocks; ++kb) {
      cp_async_wait<Cfg::Stages - 2>();
      __syncthreads();  // block kb is visible to all; every warp is done with block kb - 1's stage
      if (kb + Cfg::Stages - 1 < kblocks) load(kb + Cfg::Stages - 1);  // into block kb - 1's stage
      cp_async_commit();
      const double* as = a_block(kb % Cfg::Stages);
      const double* bs = b_block(kb % Cfg::Stages);
#pragma unroll
      for (int k4 = 0; k4 < Cfg::BK; k4 += 4) {
        const int k = k4 + lane % 4;
        double af[Cfg::WarpM / 8], bf[Cfg::WarpN / 8];
#pragma unroll
        for (int i = 0; i < Cfg::WarpM / 8; ++i) af[i] = as[(warp_row + 8 * i) * a_at.row + k * a_at.k];
#pragma unroll
        for (int j = 0; j < Cfg::WarpN / 8; ++j) bf[j] = bs[(warp_col + 8 * j) * b_at.row + k * b_at.k];
#pragma unroll
        for (int i = 0; i < Cfg::WarpM / 8; ++i)
#pragma unroll
          for (int j = 0; j < Cfg::WarpN / 8; ++j) dmma_8x8x4(acc[i][j], af[i], bf[j]);
      }
    }
    cp_async_wait<0>();
    __syncthreads();  // the next tile's loads refill the stages

    double* c = reinterpret_cast<double*>(q.c);
#pragma unroll
    for (int i = 0; i < Cfg::WarpM / 8; ++i) {
      const int64_t row = row0 + warp_row + 8 * i;
      if (row >= q.m) continue;
#pragma unroll
      for (int j = 0; j < Cfg::WarpN / 8; ++j) {
        const int64_t col = col0 + (warp % 2) * Cfg::WarpN + 8 * j + 2 * (lane % 4);
        if (col < q.n) c[row * q.ldc + col] = acc[i][j][0];
        if (col + 1 < q.n) c[row * q.ldc + col + 1] = acc[i][j][1];
      }
    }
  }
}

inline void prepare_dmma_grouped(int device) {
  static std::atomic<uint64_t> done{0};
  allow_dynamic_smem(dmma_grouped_kernel, DmmaConfig::SmemBytes, device, done);
}

}  // namespace torch_grouped::kernels
