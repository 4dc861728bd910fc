// Persistent fp64 kernels on the FP64 tensor cores (DMMA through mma.sync.m16n8k8.f64, sm_90):
// grouped GEMM for gemm's list API and every form of grouped_mm (seed 000's grouped problem
// visitor), and Rank2K for syr2k (its triangle walk), both through tile_walker.cuh as the WGMMA
// kernels walk; 128 x 64 tiles (a CTA of four warps, 2 x 2, each 64 x 32 of the tile: cuBLAS's
// dgemm shape) or 64 x 64 (warps of 32 x 32), chosen per call (sched/dmma_tile_choice.h), two
// CTAs an SM, K in blocks of 16 through a cp.async pipeline with double-buffered fragments, fp64
// accumulators, stores straight from the registers.
//
// Operands are read where they lie, through pointers and element strides (dmma_launch.h): 8-byte
// cp.async needs no more alignment than a double has, so transposed, strided and offset views
// need no copy. Each kernel is compiled for its operands' orientation (DmmaArgs::a_k_fast,
// b_k_fast): an operand with unit K stride lands in shared memory as [row][k], filled along K by
// consecutive threads, any other (the general loads) as [k][row], filled along rows; rows are
// padded so that the fragment reads hit distinct banks either way. Where every operand allows it
// (DmmaArgs::pairs: 16-byte aligned pairs along the contiguous axis), the copies take two
// elements at once. Orientation and copy width are template parameters so that the K loop holds
// no layout or loader branches: 128 accumulator and 96 fragment registers leave ~30 for
// everything else at this tile.
//
// A list whose operands are all K-contiguous and addressable by TMA (DmmaArgs::tma) instead has
// one thread load each K block as TMA boxes (per-group maps, 128-byte swizzled, unpadded stages,
// full barriers with transaction counts): no thread spends instructions on copies (TmaBlocks).
#pragma once
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <cute/arch/cluster_sm90.hpp>
#include <cute/arch/copy_sm90_desc.hpp>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/cutlass.h>

#include <algorithm>
#include <atomic>
#include <type_traits>

#include "dmma_launch.h"
#include "dynamic_smem.h"
#include "tile_walker.cuh"

namespace torch_grouped::kernels {

// One operand block (rows x bk) in shared memory: [row][k] in rows of bk + 4 elements, or [k][row]
// in rows of `rows` + 4 (see OperandLayout); room for the larger.
constexpr int dmma_block_elems(int rows, int bk) { return rows * (bk + 4) > bk * (rows + 4) ? rows * (bk + 4) : bk * (rows + 4); }

// A tile shape of the kernel: BM x BN tiles, a CTA of WarpsM x WarpsN warps (each WarpM x WarpN
// of the tile), K in blocks of 16 through `Stages` cp.async stages, CtasPerSm resident (the
// register bound of __launch_bounds__).
template <int BM_, int BN_, int WarpsM, int WarpsN, int Stages_, int CtasPerSm_>
struct DmmaShape {
  static constexpr int BM = BM_, BN = BN_, BK = 16, Stages = Stages_, CtasPerSm = CtasPerSm_;
  static constexpr int Threads = 32 * WarpsM * WarpsN, WarpCols = WarpsN;
  static constexpr int WarpM = BM / WarpsM, WarpN = BN / WarpsN;
  static_assert(WarpM % 16 == 0 && WarpN % 8 == 0, "whole 16 x 8 DMMA steps per warp");
  static_assert(BM * BK % Threads == 0 && BN * BK % Threads == 0 && Threads % BK == 0, "even copy shares");
  static constexpr int ABlockElems = dmma_block_elems(BM, BK), StageElems = ABlockElems + dmma_block_elems(BN, BK);
  static constexpr int SmemBytes = Stages * StageElems * 8;
  // The TMA kernels' stages (TmaBlocks): BM then BN rows of BK doubles, unpadded (a row is one
  // 128-byte line, swizzled), four of them (the wide tile's 24 KB stages: 96 KB a CTA, where its
  // padded copies fit three of 30 KB); 1 KB of slack to align them to the swizzle's 1024-byte
  // period, and one full barrier each.
  static constexpr int TmaStages = 4, TmaStageElems = (BM + BN) * BK;
  static constexpr int TmaSmemBytes = 1024 + TmaStages * TmaStageElems * 8 + 8 * TmaStages;
};
// The kernel's shapes, both four warps and two CTAs an SM: 128 x 64 tiles of 64 x 32 warps (three
// stages of 30 KB: 255 registers, a few loader reloads a K block), and 64 x 64 of 32 x 32 warps
// (four stages of 20 KB: 184-194 registers, no spills; 228-250 before session 39). Session 21 measured only the square one fast (4 x 4096^3: 14.3 ms against
// cuBLAS's 10.0), because the wide one spilled in the K loop with a runtime-layout loader;
// session 39 made the orientation a template parameter and the loader lean (a few reloads a K
// block remain) and keeps both, chosen per call (benchmarks/NOTES.md has the A/B).
using DmmaWideShape = DmmaShape<kDmmaWideTileM, kDmmaTileN, 2, 2, 3, 2>;
using DmmaSquareShape = DmmaShape<kDmmaSquareTileM, kDmmaTileN, 2, 2, 4, 2>;

// For TileWalker: GEMM tiles (gemm, grouped_mm), or the triangle walk (Rank2K: syr2k); no clusters.
template <class Shape, bool Rank2K_>
struct DmmaConfig : Shape {
  static constexpr bool Rank2K = Rank2K_;
  using Tiles = std::conditional_t<Rank2K, sched::SymmetricTiles, sched::GemmTiles>;
  static constexpr int ClusterM = 1;
  static constexpr bool RememberGroup = false;  // (tile_walker.cuh: its registers are the fragments')
};

// Where element (row, k) of an operand block lies in shared memory: row·Row + k·K. An operand
// with K contiguous in memory (KFast: k_stride 1) lands as [row][k] (consecutive threads along k),
// any other as [k][row]. Either way the lanes of a half-warp, which read rows r and K columns c
// with r, c < 4 for one fragment, hit double-words 4r + c or 4c + r modulo 16 (rows of BK + 4 =
// 20, or of Rows + 4 with Rows a multiple of 16): sixteen different pairs of banks.
template <int Rows, bool KFast>
struct OperandLayout {
  static_assert(Rows % 16 == 0, "rows of Rows + 4 double-words start 4 banks apart");
  static constexpr int Row = KFast ? 16 + 4 : 1, K = KFast ? 1 : Rows + 4;
};

// Vec doubles (8 or 16 bytes) global -> shared, of which the first `count` are read and the rest
// zeroed (count 0: nothing is read, so `src` may lie anywhere). 16-byte copies bypass L1 (.cg):
// each CTA reads its operands once.
template <int Vec>
__device__ __forceinline__ void cp_async(double* dst, const double* src, int count) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (Vec == 1) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(s), "l"(src), "r"(8 * count) : "memory");
  } else {
    static_assert(Vec == 2, "8- or 16-byte copies");
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(src), "r"(8 * count) : "memory");
  }
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

// One thread's share of an operand's blocks in one tile: Rows x BK elements per K block, in copies
// of Vec elements along the operand's contiguous axis, dealt so that consecutive threads take
// consecutive copies along that axis. KFast: the thread keeps K columns k0..k0 + Vec - 1 and takes
// rows r, r + kRowStep, ...; otherwise it keeps rows r..r + Vec - 1 and takes K columns k0,
// k0 + kKStep, .... Its copies u < `limit` are inside the operand (the rest zero-filled), and in
// either walk those are a prefix: the rows inside are fixed per tile, the K columns inside shrink
// only in the last block. Copies of two take operands whose extent along the contiguous axis is
// even (pairs_ok), so that a copy is wholly inside or wholly out: a size known only at run time
// would cost the hardware's zero-fill form five more instructions a copy (ptxas). Set up once per
// pass, so that a copy costs a compare, a select of its size and a 64-bit add, and holds what the
// K loop needs in 7 registers: beside 128 accumulator and 96 fragment registers (128 x 64 tiles)
// there are ~30 for everything else (the session-20 loader kept 64-bit bounds for both axes and
// spilled them at 168 registers; the runtime-layout one of session 21 spilled in the K loop at
// this tile: benchmarks/NOTES.md).
template <class Shape, int Rows, bool KFast, int Vec>
struct BlockLoader {
  static constexpr int BK = Shape::BK, T = Shape::Threads;
  static constexpr int kAlong = (KFast ? BK : Rows) / Vec;  // threads along the contiguous axis
  static_assert(T % kAlong == 0 && Rows * BK % (T * Vec) == 0, "even copy shares");
  static constexpr int kPerThread = Rows * BK / (T * Vec);
  static constexpr int kRowStep = T / kAlong;  // KFast: rows from one of its copies to the next
  static constexpr int kKStep = T / kAlong;    // otherwise: K columns from one to the next
  static_assert(KFast || BK % kKStep == 0, "whole copy steps per K block");
  using Layout = OperandLayout<Rows, KFast>;
  static constexpr int kDstStep = KFast ? kRowStep * Layout::Row : kKStep * Layout::K;
  const double* src;  // the thread's first element at K index 0 (or the base, when outside)
  int64_t src_step;   // elements from one of its copies to the next (a block on: BK, or BK / kKStep steps)
  int64_t k_rem;      // K columns from its first column of block 0 to the operand's end
  int fixed;          // KFast: its copies inside by rows; otherwise whether its rows are inside

  __device__ __forceinline__ static int first_row() { return KFast ? int(threadIdx.x) / kAlong : int(threadIdx.x) % kAlong * Vec; }
  __device__ __forceinline__ static int first_k() { return KFast ? int(threadIdx.x) % kAlong * Vec : int(threadIdx.x) / kAlong; }

  __device__ __forceinline__ BlockLoader(const DmmaOperand& v, int64_t rows, int64_t k, int64_t row0) {
    const int r = first_row(), k0 = first_k();
    k_rem = k - k0;
    const int64_t rows_left = rows - row0 - r;  // rows from its first to the operand's end
    const int64_t span = KFast ? int64_t(kPerThread) * kRowStep : Vec;  // rows its copies can reach
    const int rows_in = int(rows_left <= 0 ? 0 : rows_left >= span ? span : rows_left);
    fixed = KFast ? (rows_in + kRowStep - 1) / kRowStep : rows_in > 0;
    src = rows_left > 0 ? v.base + (row0 + r) * v.row_stride + k0 * v.k_stride : v.base;
    src_step = KFast ? kRowStep * v.row_stride : kKStep * v.k_stride;
  }

  // K block kb of the operand into `block`, zeros outside.
  __device__ __forceinline__ void load(double* block, int32_t kb) const {
    const int64_t k_left = k_rem - int64_t(kb) * BK;  // K columns from its first in this block on
    const int k_in = int(k_left <= 0 ? 0 : k_left >= BK ? BK : k_left);
    const int limit = KFast ? (k_in > 0 ? fixed : 0) : fixed * ((k_in + kKStep - 1) / kKStep);
    // a block further along K: BK elements (KFast) or BK / kKStep of its copy steps
    const double* s = src + int64_t(kb) * (KFast ? int64_t(BK) : (BK / kKStep) * src_step);
    double* d = block + first_row() * Layout::Row + first_k() * Layout::K;
    // (the source stepped copy by copy: products u·src_step for every u, hoisted out of the K
    // loop, would hold two registers each; src-size 0 reads nothing, so the source needs no clamp)
#pragma unroll
    for (int u = 0; u < kPerThread; ++u, s += src_step) cp_async<Vec>(d + u * kDstStep, s, u < limit ? Vec : 0);
  }
};

// d += a·b for one 16 x 8 x 8 step (DMMA.16x8x8): with g = lane / 4 and t = lane % 4, a[i] is
// A(g + 8·(i % 2), t + 4·(i / 2)), b[i] is B(t + 4·i, g) and d[i] is D(g + 8·(i / 2), 2t + i % 2)
// (CuTe's SM90_16x8x8_F64F64F64F64_TN layouts). Two per K block of 16 (K columns 0-7, then 8-15) rather
// than one 16 x 8 x 16, so that the second half's fragment reads can overlap the first half's
// DMMAs (cuBLAS's H100 dgemm kernel names its instruction tensor16x8x8 too; ncu, session 21).
__device__ __forceinline__ void dmma_16x8x8(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
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

// f(row, col, value) for each of the thread's accumulator elements, rows and columns from the
// warp's corner (row0, col0) by the fragment layout: d[v] of DMMA (i, j) is element
// (16i + g + 8·(v / 2), 8j + 2t + v % 2).
template <class Acc, class F>
__device__ __forceinline__ void for_each_element(const Acc& acc, int64_t row0, int64_t col0, F f) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  constexpr int kRowSteps = sizeof(acc) / sizeof(acc[0]), kColSteps = sizeof(acc[0]) / sizeof(acc[0][0]);
#pragma unroll
  for (int i = 0; i < kRowSteps; ++i)
#pragma unroll
    for (int j = 0; j < kColSteps; ++j)
#pragma unroll
      for (int v = 0; v < 4; ++v) f(row0 + 16 * i + g + 8 * (v / 2), col0 + 8 * j + 2 * t + v % 2, acc[i][j][v]);
}

// The GEMM epilogue: the tile's elements inside the problem, as they are.
template <class Acc>
__device__ __forceinline__ void store_gemm_tile(const Acc& acc, const GroupProblem& q, int64_t row0, int64_t col0) {
  double* c = reinterpret_cast<double*>(q.c);
  for_each_element(acc, row0, col0, [&](int64_t row, int64_t col, double v) {
    if (row < q.m && col < q.n) c[row * q.ldc + col] = v;
  });
}

// The Rank2K epilogue (syr2k): v = alpha·acc + beta·c, c read from its `uplo` triangle (at the
// element's mirror where the element lies outside it). The triangle walk stores each element of
// the triangle at (r, c) and at its mirror (c, r), the same bits both ways, so the output is
// exactly symmetric and a diagonal tile's other half comes from the mirrors (its own (c, r)
// sums differ in rounding); the GEMM walk (all_tiles, the comparison the benchmark makes) stores
// every tile itself.
template <class Acc>
__device__ __forceinline__ void store_rank2k_tile(const Acc& acc, const GroupProblem& q, int64_t row0, int64_t col0,
                                                  const DmmaArgs& p) {
  double* c = reinterpret_cast<double*>(q.c);
  const double* c_in = static_cast<const double*>(q.c_in);
  const bool mirror = !p.shape.triangle.all_tiles, lower = p.shape.triangle.triangle.uplo == sched::Uplo::Lower;
  for_each_element(acc, row0, col0, [&](int64_t row, int64_t col, double v) {
    if (row >= q.n || col >= q.n) return;
    const bool in_triangle = lower ? row >= col : row <= col;
    if (mirror && !in_triangle) return;  // its mirror's tile writes it
    v *= p.alpha;
    if (c_in != nullptr) v += p.beta * (in_triangle ? c_in[row * q.ldc_in + col] : c_in[col * q.ldc_in + row]);
    c[row * q.ldc + col] = v;
    if (mirror && row != col) c[col * q.ldc + row] = v;
  });
}

// One half of a K block's fragments (K columns 8·half + 0..7 of the block, in the order the
// stage's layout gives them) for a warp's DMMA.16x8x8s.
template <class Cfg>
struct DmmaFragments {
  static constexpr int kRowSteps = Cfg::WarpM / 16, kColSteps = Cfg::WarpN / 8;  // DMMAs per warp and K step
  double a[kRowSteps][4], b[kColSteps][2];
};

template <class Cfg, class Acc>
__device__ __forceinline__ void multiply(Acc& acc, const DmmaFragments<Cfg>& f) {
#pragma unroll
  for (int i = 0; i < DmmaFragments<Cfg>::kRowSteps; ++i)
#pragma unroll
    for (int j = 0; j < DmmaFragments<Cfg>::kColSteps; ++j) dmma_16x8x8(acc[i][j], f.a[i], f.b[j]);
}

// The warp's corner in the tile.
template <class Cfg>
__device__ __forceinline__ int warp_row_in_tile() { return int(threadIdx.x) / 32 / Cfg::WarpCols * Cfg::WarpM; }
template <class Cfg>
__device__ __forceinline__ int warp_col_in_tile() { return int(threadIdx.x) / 32 % Cfg::WarpCols * Cfg::WarpN; }

// A pass's K blocks copied by every thread (cp.async) into padded stages (OperandLayout). Every
// issue point commits one group (empty where there is no block), so that at block kb's second
// half Stages - 1 + kb groups are committed, and waiting for all but the newest Stages - 3 means
// block kb + 1 has landed.
template <class Cfg, bool AKFast, bool BKFast, int Vec>
struct CopiedBlocks {
  static constexpr int kStages = Cfg::Stages;
  using ALayout = OperandLayout<Cfg::BM, AKFast>;
  using BLayout = OperandLayout<Cfg::BN, BKFast>;
  double* smem;
  BlockLoader<Cfg, Cfg::BM, AKFast, Vec> a_loader;
  BlockLoader<Cfg, Cfg::BN, BKFast, Vec> b_loader;
  int a_lane, b_lane;  // the lane's first fragment element in a stage's blocks

  __device__ __forceinline__ CopiedBlocks(double* stages, const DmmaOperand& a, const DmmaOperand& b, int64_t a_rows,
                                          int64_t b_rows, int64_t k, int64_t row0, int64_t col0)
      : smem(stages), a_loader(a, a_rows, k, row0), b_loader(b, b_rows, k, col0) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    a_lane = (warp_row_in_tile<Cfg>() + g) * ALayout::Row + t * ALayout::K;
    b_lane = (warp_col_in_tile<Cfg>() + g) * BLayout::Row + t * BLayout::K;
  }
  __device__ __forceinline__ double* a_block(int32_t kb) const { return smem + (kb % kStages) * Cfg::StageElems; }
  __device__ __forceinline__ double* b_block(int32_t kb) const { return a_block(kb) + Cfg::ABlockElems; }

  __device__ __forceinline__ void issue(int32_t kb, bool real) const {
    if (real) a_loader.load(a_block(kb), kb), b_loader.load(b_block(kb), kb);
    cp_async_commit();
  }
  __device__ __forceinline__ void wait_first() const { cp_async_wait<kStages - 2>(); }
  __device__ __forceinline__ void wait_ahead(int32_t /*kb*/, int32_t /*blocks*/) const { cp_async_wait<kStages - 3>(); }
  __device__ __forceinline__ void finish() const { cp_async_wait<0>(); }

  // The fragments of block kb's K columns 8·half + 0..7, from the lane's first element at
  // constant offsets.
  __device__ __forceinline__ void read(DmmaFragments<Cfg>& f, int32_t kb, int half) const {
    const double* as = a_block(kb) + a_lane + 8 * half * ALayout::K;
    const double* bs = b_block(kb) + b_lane + 8 * half * BLayout::K;
#pragma unroll
    for (int j = 0; j < DmmaFragments<Cfg>::kColSteps; ++j)
#pragma unroll
      for (int v = 0; v < 2; ++v) f.b[j][v] = bs[8 * j * BLayout::Row + 4 * v * BLayout::K];
#pragma unroll
    for (int i = 0; i < DmmaFragments<Cfg>::kRowSteps; ++i)
#pragma unroll
      for (int v = 0; v < 4; ++v) f.a[i][v] = as[(16 * i + 8 * (v % 2)) * ALayout::Row + 4 * (v / 2) * ALayout::K];
  }
};

// A pass's K blocks as TMA boxes (K-contiguous operands, per-group maps of 64-row boxes of BK = 16
// doubles: one 128-byte line a row, 128-byte swizzled), issued by one lane of warp 0 into unpadded
// stages; every thread waits on the stage's full barrier (its phase kept in `phases`, bit s for
// stage s), and the pass's barrier between blocks tells the issue that a stage is free again.
//
// The swizzle puts 16-byte chunk c of row r at chunk c ^ (r % 8). A DMMA's lanes read rows g
// (and g + 8) at K columns t (and t + 4), g = lane / 4, t = lane % 4: in plain K order a
// half-warp's 16 reads would fall in 4 chunks of its rows, two lanes a bank. So the kernel reads
// K in another order, the same for A and B (a sum over K does not care): logical column
// 8·half + 4·q + t of a block is physical column 8·(t / 2) + 4·half + 2·q + t % 2, in chunk
// 4·(t / 2) + 2·half + q, which with the rows' g spreads a half-warp over 8 chunks (16 bank
// pairs). The boxes' zero fill past the operand's rows and K makes the reordered tail harmless.
template <class Cfg>
struct TmaBlocks {
  static constexpr int kStages = Cfg::TmaStages, BK = Cfg::BK;
  static_assert(BK * 8 == 128, "a stage row is one swizzled 128-byte line");
  static_assert(Cfg::BM % 64 == 0 && Cfg::BN == 64, "A in 64-row boxes, B one");
  double* smem;
  uint64_t* full;
  uint32_t& phases;
  const CUtensorMap* a_map;
  const CUtensorMap* b_map;
  int32_t row0, col0;
  int a_lane, b_lane;  // the lane's first row in a stage's blocks (element offsets)
  int lane_double;     // 2·(its chunk) + t % 2 for q = 0 and half 0, XOR 2·(2·half + q) for the others

  __device__ __forceinline__ TmaBlocks(double* stages, uint64_t* full_barriers, uint32_t& stage_phases,
                                       const CUtensorMap* a, const CUtensorMap* b, int64_t a_row0, int64_t b_row0)
      : smem(stages), full(full_barriers), phases(stage_phases), a_map(a), b_map(b), row0(int32_t(a_row0)),
        col0(int32_t(b_row0)) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    a_lane = (warp_row_in_tile<Cfg>() + g) * BK;
    b_lane = (warp_col_in_tile<Cfg>() + g) * BK;
    lane_double = (2 * ((4 * (t / 2)) ^ g)) | (t & 1);
  }
  __device__ __forceinline__ double* a_block(int32_t kb) const { return smem + (kb % kStages) * Cfg::TmaStageElems; }
  __device__ __forceinline__ double* b_block(int32_t kb) const { return a_block(kb) + Cfg::BM * BK; }

  // Block kb's boxes, from one lane of warp 0 (a branch the other warps skip whole: the warp
  // index made uniform, CUTLASS's way; a per-thread test would have every warp issue the TMA
  // code under predicates).
  __device__ __forceinline__ void issue(int32_t kb, bool real) const {
    if (!real || cutlass::canonical_warp_idx_sync() != 0 || !cute::elect_one_sync()) return;
    uint64_t* bar = full + kb % kStages;
    constexpr uint64_t kEvictNormal = uint64_t(cute::TMA::CacheHintSm90::EVICT_NORMAL);
    cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(bar, Cfg::TmaStageElems * 8);
#pragma unroll
    for (int j = 0; j < Cfg::BM / 64; ++j)
      cute::SM90_TMA_LOAD_3D::copy(a_map, bar, kEvictNormal, a_block(kb) + 64 * j * BK, kb * BK, row0 + 64 * j, 0);
    cute::SM90_TMA_LOAD_3D::copy(b_map, bar, kEvictNormal, b_block(kb), kb * BK, col0, 0);
  }
  __device__ __forceinline__ void wait(int32_t kb) const {
    const int s = kb % kStages;
    cutlass::arch::ClusterBarrier::wait(full + s, (phases >> s) & 1u);
    phases ^= 1u << s;
  }
  __device__ __forceinline__ void wait_first() const { wait(0); }
  __device__ __forceinline__ void wait_ahead(int32_t kb, int32_t blocks) const {
    if (kb < blocks) wait(kb);
  }
  __device__ __forceinline__ void finish() const {}

  __device__ __forceinline__ void read(DmmaFragments<Cfg>& f, int32_t kb, int half) const {
    const int q0 = lane_double ^ (4 * half), q1 = lane_double ^ (4 * half + 2);  // the lane's doubles of a row
    const double* as = a_block(kb) + a_lane;
    const double* bs = b_block(kb) + b_lane;
#pragma unroll
    for (int j = 0; j < DmmaFragments<Cfg>::kColSteps; ++j)
#pragma unroll
      for (int v = 0; v < 2; ++v) f.b[j][v] = bs[8 * j * BK + (v ? q1 : q0)];
#pragma unroll
    for (int i = 0; i < DmmaFragments<Cfg>::kRowSteps; ++i)
#pragma unroll
      for (int v = 0; v < 4; ++v) f.a[i][v] = as[(16 * i + 8 * (v % 2)) * BK + (v / 2 ? q1 : q0)];
  }
};

// One pass of a tile's K loop (CUTLASS's multistage mainloop) over `blocks` K blocks of `src`
// (CopiedBlocks or TmaBlocks): acc += (the A slot's rows)·(the B slot's rows)ᵀ. Stages - 1 blocks
// in flight ahead; fragments in two register sets, so that the DMMAs of one half run while the
// next half's reads are on their way, across the barrier too: the wait for block kb + 1 sits
// between block kb's halves (its second half's fragments already in registers), not before a
// block's first reads. The barrier also tells the issue that every warp is past block kb - 1's
// stage, which block kb + Stages - 1 then refills. Ends with every block landed and every warp
// past its reads (the stages free for the next pass or tile).
template <class Cfg, class Blocks, class Acc>
__device__ __forceinline__ void dmma_pass(Acc& acc, const Blocks& src, int32_t blocks) {
  constexpr int kStages = Blocks::kStages;
  static_assert(kStages >= 3, "a block in flight while one is read");
  static_assert(Cfg::BK == 16, "two DMMA.16x8x8 steps per K block");
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) src.issue(s, s < blocks);
  DmmaFragments<Cfg> f0, f1;
  if (blocks > 0) {
    src.wait_first();
    __syncthreads();  // block 0 is visible to all
    src.read(f0, 0, 0);
  }
  for (int32_t kb = 0; kb < blocks; ++kb) {
    src.read(f1, kb, 1);
    multiply<Cfg>(acc, f0);
    src.wait_ahead(kb + 1, blocks);
    __syncthreads();  // block kb + 1 is visible; every warp has read block kb - 1's stage (and kb's)
    src.issue(kb + kStages - 1, kb + kStages - 1 < blocks);  // into block kb - 1's stage
    if (kb + 1 < blocks) src.read(f0, kb + 1, 0);
    multiply<Cfg>(acc, f1);
  }
  src.finish();
  __syncthreads();  // the next pass's or tile's loads refill the stages
}

// One CTA: the walk's tiles one after the other. GEMM: out = A·B over each tile's K blocks.
// Rank2K: A_i B_jᵀ + B_i A_jᵀ as two passes over the K blocks into one accumulator, the second
// with the operands' roles swapped (A_i, B_j are rows of a problem's a and b, [n, k] both).
// Tma: the List form's per-group maps (shape.a_maps, b_maps), K-contiguous operands.
template <class Shape, bool Rank2K, bool AKFast, bool BKFast, bool Pairs, bool Tma>
__global__ void __launch_bounds__(Shape::Threads, Shape::CtasPerSm) dmma_kernel(const __grid_constant__ DmmaArgs p) {
  static_assert(!Tma || (AKFast && BKFast && !Pairs), "TMA boxes of K-contiguous operands");
  using Cfg = DmmaConfig<Shape, Rank2K>;
  extern __shared__ __align__(16) double smem[];
  constexpr int kRowSteps = Cfg::WarpM / 16, kColSteps = Cfg::WarpN / 8;  // DMMAs per warp and K step
  constexpr int kVec = Pairs ? 2 : 1;  // doubles per copy
  // Tma: the stages from the first 1024-byte boundary (the swizzle's period), the barriers after
  // them (an offset from smem, so that the compiler still knows the pointers' state space)
  const uint32_t misalignment = static_cast<uint32_t>(__cvta_generic_to_shared(smem)) % 1024;
  double* const stages = Tma ? smem + (1024 - misalignment) % 1024 / 8 : smem;
  uint64_t* const full = reinterpret_cast<uint64_t*>(stages + Cfg::TmaStages * Cfg::TmaStageElems);
  uint32_t phases = 0;
  int32_t acquired = -1;  // (warp 0) the group whose maps it acquired
  if constexpr (Tma) {
    if (threadIdx.x == 0) {
      for (int s = 0; s < Cfg::TmaStages; ++s) cutlass::arch::ClusterBarrier::init(full + s, 1);
      cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
  }
  TileWalker<Cfg> walker(p.shape);
  sched::TileCoord tile;
  GroupProblem q;
  for (int64_t step = 0; walker.next(step, tile, q); ++step) {
    if (!tile.valid) continue;  // a padding slot of the triangle walk
    const int64_t row0 = int64_t(tile.tile_m) * Cfg::BM, col0 = int64_t(tile.tile_n) * Cfg::BN;
    double acc[kRowSteps][kColSteps][4] = {};
    if constexpr (Tma) {
      // The maps were patched by a kernel through the generic proxy (cuda/list_maps.cu): warp 0
      // (whichever lane issues) acquires a group's before its first load with them (none for K =
      // 0: never patched).
      const CUtensorMap* a_map = p.shape.a_maps + tile.group;
      const CUtensorMap* b_map = p.shape.b_maps + tile.group;
      if (threadIdx.x < 32 && tile.group != acquired && q.k > 0) {
        cute::tma_descriptor_fence_acquire(a_map);
        cute::tma_descriptor_fence_acquire(b_map);
        acquired = tile.group;
      }
      const int32_t blocks = int32_t(sched::ceil_div(q.k, Cfg::BK));
#pragma unroll 1  // (Rank2K: the passes swap the maps)
      for (int second = 0; second < (Rank2K ? 2 : 1); ++second) {
        const TmaBlocks<Cfg> src(stages, full, phases, second ? b_map : a_map, second ? a_map : b_map, row0, col0);
        dmma_pass<Cfg>(acc, src, blocks);
      }
    } else if constexpr (Rank2K) {  // the List form; each pass reads the group's operands where it starts
      static_assert(AKFast == BKFast, "a Rank2K kernel's passes swap the operands' slots: one orientation for both");
#pragma unroll 1  // (one K loop in the code: the second copy, unrolled, spilled accumulators)
      for (int second = 0; second < 2; ++second) {
        const DmmaListOperands ops = p.list_operands[tile.group];
        const ListGroup lg = p.shape.list[tile.group];
        const CopiedBlocks<Cfg, AKFast, BKFast, kVec> src(stages, second ? ops.b : ops.a, second ? ops.a : ops.b, lg.n,
                                                          lg.n, lg.k, row0, col0);
        dmma_pass<Cfg>(acc, src, int32_t(sched::ceil_div(lg.k, Cfg::BK)));
      }
    } else {
      DmmaOperand a, b;
      problem_operands(p, tile.group, q, a, b);
      const CopiedBlocks<Cfg, AKFast, BKFast, kVec> src(stages, a, b, q.m, q.n, q.k, row0, col0);
      dmma_pass<Cfg>(acc, src, int32_t(sched::ceil_div(q.k, Cfg::BK)));
    }

    // The problem read again for the epilogue rather than kept in registers through the K loop.
    const GroupProblem out = resolve_group(p.shape, tile.group, walker.read);
    const int64_t warp_row0 = row0 + warp_row_in_tile<Cfg>(), warp_col0 = col0 + warp_col_in_tile<Cfg>();
    if constexpr (Rank2K) {
      store_rank2k_tile(acc, out, warp_row0, warp_col0, p);
    } else {
      store_gemm_tile(acc, out, warp_row0, warp_col0);
    }
  }
}

// Host side, per walk: the shared-memory attribute (once per device and kernel), the launch of
// the kernel of the call's tile, operand orientations and loads, the persistent grid.
template <class Shape, bool Tma>
constexpr int dmma_smem_bytes() { return Tma ? Shape::TmaSmemBytes : Shape::SmemBytes; }

template <class Shape, bool Rank2K, bool AKFast, bool BKFast, bool Pairs, bool Tma>
void prepare_dmma(int device) {
  static std::atomic<uint64_t> done{0};
  allow_dynamic_smem(dmma_kernel<Shape, Rank2K, AKFast, BKFast, Pairs, Tma>, dmma_smem_bytes<Shape, Tma>(), device, done);
}

template <class Shape, bool Rank2K, bool AKFast, bool BKFast>
void launch_dmma_oriented(const DmmaArgs& args, int grid, int device, cudaStream_t stream) {
  auto launch = [&](auto pairs, auto tma) {
    constexpr bool kPairs = decltype(pairs)::value, kTma = decltype(tma)::value;
    prepare_dmma<Shape, Rank2K, AKFast, BKFast, kPairs, kTma>(device);
    dmma_kernel<Shape, Rank2K, AKFast, BKFast, kPairs, kTma>
        <<<grid, Shape::Threads, dmma_smem_bytes<Shape, kTma>(), stream>>>(args);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  };
  if constexpr (AKFast && BKFast) {
    if (args.tma) return launch(std::false_type{}, std::true_type{});
  }
  TORCH_INTERNAL_ASSERT(!args.tma, "fp64 DMMA: TMA loads need K-contiguous operands");
  if (args.pairs) return launch(std::true_type{}, std::false_type{});
  launch(std::false_type{}, std::false_type{});
}

template <class Shape, bool Rank2K>
void launch_dmma_shaped(const DmmaArgs& args, int grid, int device, cudaStream_t stream) {
  if constexpr (Rank2K) {  // the KFast kernel where both operands allow it, else the general one
    if (args.a_k_fast && args.b_k_fast) return launch_dmma_oriented<Shape, true, true, true>(args, grid, device, stream);
    launch_dmma_oriented<Shape, true, false, false>(args, grid, device, stream);
  } else {
    if (args.a_k_fast) {
      if (args.b_k_fast) return launch_dmma_oriented<Shape, false, true, true>(args, grid, device, stream);
      return launch_dmma_oriented<Shape, false, true, false>(args, grid, device, stream);
    }
    if (args.b_k_fast) return launch_dmma_oriented<Shape, false, false, true>(args, grid, device, stream);
    launch_dmma_oriented<Shape, false, false, false>(args, grid, device, stream);
  }
}

template <bool Rank2K>
void launch_dmma(const DmmaArgs& args, int grid, cudaStream_t stream) {
  int device = 0;
  C10_CUDA_CHECK(cudaGetDevice(&device));
  const sched::TileShape tile = Rank2K ? args.shape.triangle.triangle.tile : args.shape.tiles.tile;
  TORCH_CHECK(tile.n == kDmmaTileN && (tile.m == kDmmaWideTileM || tile.m == kDmmaSquareTileM),
              "torch_grouped: no fp64 DMMA kernel of ", tile.m, " x ", tile.n, " tiles");
  if (tile.m == kDmmaWideTileM) return launch_dmma_shaped<DmmaWideShape, Rank2K>(args, grid, device, stream);
  launch_dmma_shaped<DmmaSquareShape, Rank2K>(args, grid, device, stream);
}

// CTAs resident at once: the fewest of the two shapes' kernels, copying or TMA-loading (every
// orientation's and copy width's kernel has its shape's resources and bound,
// __launch_bounds__(128, 2), so the general one answers for the copying ones).
template <class Shape, bool Rank2K, bool Tma>
int resident_dmma_kernel(int device) {
  constexpr bool kFast = Tma;  // (the TMA kernel's orientation)
  prepare_dmma<Shape, Rank2K, kFast, kFast, false, Tma>(device);
  int per_sm = 0;
  C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, dmma_kernel<Shape, Rank2K, kFast, kFast, false, Tma>, Shape::Threads, dmma_smem_bytes<Shape, Tma>()));
  return per_sm;
}
template <class Shape, bool Rank2K>
int resident_dmma_shape(int device) {
  return std::min(resident_dmma_kernel<Shape, Rank2K, false>(device), resident_dmma_kernel<Shape, Rank2K, true>(device));
}
template <bool Rank2K>
int resident_dmma_ctas(int device) {
  static std::atomic<int> cache[64];
  return once_per_device(cache, device, [&] {
    const int per_sm =
        std::min(resident_dmma_shape<DmmaWideShape, Rank2K>(device), resident_dmma_shape<DmmaSquareShape, Rank2K>(device));
    int sms = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    TORCH_CHECK(per_sm > 0, "torch_grouped: the fp64 DMMA kernel does not fit on device ", device);
    return per_sm * sms;
  });
}

}  // namespace torch_grouped::kernels
