// Persistent grouped GEMM in fp64 on the FP64 tensor cores (DMMA through mma.sync.m16n8k16.f64,
// sm_90), for gemm's list API and every form of grouped_mm: seed 000's grouped
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
  // Three CTAs per SM (12 warps to hide the DMMA and shared-memory latencies): at most 168
  // registers a thread (ptxas: 196 unbounded) and 3 x 60 KB of shared memory.
  static constexpr int CtasPerSm = 3;
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

// One thread's share of an operand's blocks in one tile: Rows x BK elements per K block, dealt so
// that consecutive threads take consecutive elements along the operand's contiguous axis (k when
// K is contiguous: a thread keeps its column and steps 128 / BK rows; otherwise its row, stepping
// 128 / Rows columns). Set up once per tile, so that a K block's copies cost an add and two
// compares each (recomputing the element's row, column and address per copy made the address
// arithmetic outnumber the DMMAs 50 to 1).
template <int Rows>
struct BlockLoader {
  static constexpr int kPerThread = Rows * DmmaConfig::BK / DmmaConfig::Threads;
  const double* src;  // the thread's first element at K index 0 (or the base, when it has none)
  int64_t src_step;   // elements from one of its copies to the next
  int64_t k_stride;
  int64_t rows_left;  // rows from its first element's to the operand's last, exclusive
  int k0;             // its K column within a block
  int row_step, k_step;  // (128 / BK, 0) or (0, 128 / Rows)
  int dst, dst_step;     // shared-memory offsets within a block

  __device__ __forceinline__ BlockLoader(const DmmaOperand& v, int64_t rows, int64_t row0, OperandLayout at) {
    constexpr int BK = DmmaConfig::BK, T = DmmaConfig::Threads;
    const bool k_fastest = at.k == 1;
    const int r = k_fastest ? int(threadIdx.x) / BK : int(threadIdx.x) % Rows;
    k0 = k_fastest ? int(threadIdx.x) % BK : int(threadIdx.x) / Rows;
    row_step = k_fastest ? T / BK : 0, k_step = k_fastest ? 0 : T / Rows;
    rows_left = rows - row0 - r;
    src = rows_left > 0 ? v.base + (row0 + r) * v.row_stride + k0 * v.k_stride : v.base;
    src_step = row_step * v.row_stride + k_step * v.k_stride;
    k_stride = v.k_stride;
    dst = r * at.row + k0 * at.k, dst_step = row_step * at.row + k_step * at.k;
  }

  // K block [kb·BK, kb·BK + BK) of an operand with k columns into `block`, zeros outside.
  __device__ __forceinline__ void load(double* block, int64_t k, int32_t kb) const {
    const int64_t block_k = int64_t(kb) * DmmaConfig::BK, k_left = k - block_k - k0;
    const double* s = src + block_k * k_stride;  // (src is at the thread's K column k0 already)
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const bool in = u * row_step < rows_left && u * k_step < k_left;
      cp_async_8(block + dst + u * dst_step, in ? s + u * src_step : src, in);
    }
  }
};

// d += a·b for one 16 x 8 x 16 step, Hopper's widest DMMA (DMMA.16x8x16; the 8 x 8 x 4 form of
// sm_80 exists too): with g = lane / 4 and t = lane % 4, a[i] is A(g + 8·(i % 2), t + 4·(i / 2)),
// b[i] is B(t + 4·i, g) and d[i] is D(g + 8·(i / 2), 2t + i % 2) (CuTe's
// SM90_16x8x16_F64F64F64F64_TN layouts).
__device__ __forceinline__ void dmma_16x8x16(double (&d)[4], const double (&a)[8], const double (&b)[4]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, "
      "{%12, %13, %14, %15}, {%0, %1, %2, %3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]),
        "d"(b[2]), "d"(b[3]));
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

__global__ void __launch_bounds__(DmmaConfig::Threads, DmmaConfig::CtasPerSm) dmma_grouped_kernel(const __grid_constant__ DmmaArgs p) {
  using Cfg = DmmaConfig;
  extern __shared__ __align__(16) double smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int warp_row = (warp / 2) * Cfg::WarpM, warp_col = (warp % 2) * Cfg::WarpN;  // in the tile
  constexpr int kRowSteps = Cfg::WarpM / 16, kColSteps = Cfg::WarpN / 8;  // DMMAs per warp and K step
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
    const BlockLoader<Cfg::BM> a_loader(a, q.m, row0, a_at);
    const BlockLoader<Cfg::BN> b_loader(b, q.n, col0, b_at);
    auto load = [&](int32_t kb) {
      a_loader.load(a_block(kb % Cfg::Stages), q.k, kb);
      b_loader.load(b_block(kb % Cfg::Stages), q.k, kb);
    };

    double acc[kRowSteps][kColSteps][4] = {};
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
      static_assert(Cfg::BK == 16, "one DMMA.16x8x16 step per K block");
      double bf[kColSteps][4];
#pragma unroll
      for (int j = 0; j < kColSteps; ++j)
#pragma unroll
        for (int v = 0; v < 4; ++v) bf[j][v] = bs[(warp_col + 8 * j + g) * b_at.row + (t + 4 * v) * b_at.k];
#pragma unroll
      for (int i = 0; i < kRowSteps; ++i) {  // (A's fragments one row step at a time: registers)
        double af[8];
#pragma unroll
        for (int v = 0; v < 8; ++v) af[v] = as[(warp_row + 16 * i + g + 8 * (v % 2)) * a_at.row + (t + 4 * (v / 2)) * a_at.k];
#pragma unroll
        for (int j = 0; j < kColSteps; ++j) dmma_16x8x16(acc[i][j], af, bf[j]);
      }
    }
    cp_async_wait<0>();
    __syncthreads();  // the next tile's loads refill the stages

    double* c = reinterpret_cast<double*>(q.c);
#pragma unroll
    for (int i = 0; i < kRowSteps; ++i) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int64_t row = row0 + warp_row + 16 * i + g + 8 * half;
        if (row >= q.m) continue;
#pragma unroll
        for (int j = 0; j < kColSteps; ++j) {
          const int64_t col = col0 + warp_col + 8 * j + 2 * t;
          if (col < q.n) c[row * q.ldc + col] = acc[i][j][2 * half];
          if (col + 1 < q.n) c[row * q.ldc + col + 1] = acc[i][j][2 * half + 1];
        }
      }
    }
  }
}

inline void prepare_dmma_grouped(int device) {
  static std::atomic<uint64_t> done{0};
  allow_dynamic_smem(dmma_grouped_kernel, DmmaConfig::SmemBytes, device, done);
}

}  // namespace torch_grouped::kernels
