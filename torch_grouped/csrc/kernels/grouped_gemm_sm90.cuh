// Persistent, warp-specialized grouped GEMM for Hopper (sm_90a): seed 000's grouped scheduler on
// seed 002's producer/consumer split.
//
//   warpgroup 0, warp 0   producer: walks the CTA's tiles, and for each K block waits for a free
//                         stage, then issues the TMA loads of the A and B tiles into it
//   warpgroups 1..BM/64   consumers: each owns 64 rows of the BM x BN tile, waits for a full
//                         stage, runs WGMMA on it (fp32 accumulators in registers), releases it,
//                         and after the last K block converts and stores its rows
//
// Every warp walks the same tile sequence (CTA b takes linear tiles b, b + grid, ...) through the
// shared scheduler of csrc/sched/: the warp-parallel visitor for sizes that live on the device, or
// the host-precomputed per-CTA list. Stages are handed over with CUTLASS's PipelineTmaAsync
// (mbarriers with transaction counts); WGMMA operands and shared-memory layouts come from CuTe.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <c10/cuda/CUDAException.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <utility>

#include <cute/arch/copy_sm90_desc.hpp>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/tensor.hpp>
#include <cutlass/numeric_types.h>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/pipeline/sm90_pipeline.hpp>

#include "dependent_launch.cuh"
#include "dynamic_smem.h"
#include "float_convert.cuh"
#include "grouped_gemm_args.h"
#include "row_copy.cuh"
#include "streamk_fixup.cuh"
#include "tile_walker.cuh"
#include "unit_timeline.cuh"

namespace torch_grouped::kernels {

// What one kernel instantiation computes:
//   Grouped  gemm / grouped_mm: the tiles of all groups, each over its whole K
//   Rank2K   syr2k: the K loop runs twice, over A Bᵀ then B Aᵀ, so both operands come from the
//            same two maps in swapped roles (square tiles, B K-major); triangle tiles only
//   StreamK  streamk_mm: one matmul cut into work units (a tile and a range of its K blocks) by
//            sched::StreamKPlan; partial tiles meet in a workspace (streamk_fixup.cuh)
//   Rank2KStreamK  syr2k of one problem whose triangle has too few tiles to fill the GPU evenly:
//            the Rank2K tiles and epilogue, the plan's work units over the triangle's tiles
//            (linear tile t is the Rank2K walk's tile t; both passes are the tile's iterations)
enum class KernelMode { Grouped, Rank2K, StreamK, Rank2KStreamK };

template <class T, int BM_, int BN_, bool BKMajor_, KernelMode Mode_ = KernelMode::Grouped, int ClusterM_ = 1,
          bool TmaStore_ = false, bool AKMajor_ = true, bool RowCopies_ = false>
struct GroupedGemmConfig {
  using Element = T;
  // BK: one 128-byte swizzled line of K per row (64 half-precision or 32 TF32 elements).
  static constexpr int BM = BM_, BN = BN_, BK = 128 / int(sizeof(T));
  // ClusterM = 2: CTAs run in 2 x 1 clusters whose two CTAs take vertically adjacent tiles of one
  // group (the scheduler deals 2·BM x BN pair tiles, one per cluster), so they need the same B
  // tile: each loads half of it and multicasts it to both, which halves B's L2 reads (the big
  // shapes are bound by L2 traffic; session 8, run 1).
  // Rank2K in clusters: the triangle walk deals 2·BM x BN pair tiles (Rank2KTiles with macro
  // tiles), the two CTAs take the pair's 128 x 128 halves and share its B-role operand; a half
  // above the triangle (a pair that straddles the diagonal) loads and multiplies for its peer and
  // stores nothing. syr2k's 128 x 128 tiles read 32 KB per K block against 48 KB for 128 x 256
  // tiles' twice the MACs: the multicast cuts that to 24 KB.
  static constexpr int ClusterM = ClusterM_;
  // Stream-K in clusters: the plan's units are pair tiles (its tile_m is 2·BM), dealt to the
  // clusters as to CTAs; both CTAs of a cluster run the same units (so the same K blocks, which
  // the multicast needs) on their own halves, and the fixup sees a pair tile as a tile of
  // 2·Consumers warpgroups (each with its own partials and counter).
  static_assert(ClusterM == 1 || (ClusterM == 2 && BN % 128 == 0),
                "clusters of two, B tiles that halve into whole TMA boxes");
  using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::_1, cute::_1>;
  static constexpr bool Rank2K = Mode_ == KernelMode::Rank2K || Mode_ == KernelMode::Rank2KStreamK;
  // Rows of an A box and of a K-major B box: the tile's (B: this CTA's share of it in clusters),
  // except in Rank2K, whose two maps serve both roles (A Bᵀ, then B Aᵀ) and so share one box: the
  // smaller of the two roles' row counts (B's half tile in clusters, A's 128 rows in 128 x 256
  // tiles), the larger role's rows then coming in several boxes.
  static constexpr int ABoxRows = Rank2K ? (BM < BN / ClusterM ? BM : BN / ClusterM) : BM;
  static constexpr int BBoxRows = Rank2K ? ABoxRows : BN / ClusterM;
  static constexpr bool StreamK = Mode_ == KernelMode::StreamK || Mode_ == KernelMode::Rank2KStreamK;
  // Rank2K tiles: square, or 128 x 256 (the walk's macro tiles are then 256 x 256, two tiles each:
  // sched::Rank2KTiles), operands K-major.
  static_assert(!Rank2K || ((BN == BM || (BN == 2 * BM && ClusterM_ == 1)) && BKMajor_),
                "Rank2K needs square or 128 x 256 tiles (no clusters) and K-major operands");
  using Tiles = cute::conditional_t<Rank2K, sched::SymmetricTiles, sched::GemmTiles>;
  static constexpr bool BKMajor = BKMajor_;  // B[g] ([K, N]) has unit stride along K
  // A M-major (A[g] ([M, K]) with unit stride along M): the transposed activations of an MoE weight
  // gradient (the K-grouped form, GroupedForm::RaggedK), gemm's A_iᵀ (the list form on the same
  // kernels) and streamk_mm's Aᵀ (their own backward's dB = Aᵀ·dY), read in 64-row boxes where they
  // lie rather than transposed into a staging buffer first; B N-major with it.
  static constexpr bool AKMajor = AKMajor_;
  // (Its TMA-store variant, one [G, M, N] map batched by group, went in session 24: 4-33% slower
  // than the threads' stores on every weight gradient once their interior path was compact; H100.)
  static_assert(AKMajor || ((Mode_ == KernelMode::Grouped || (Mode_ == KernelMode::StreamK && ClusterM_ == 1)) &&
                             !BKMajor_ && !TmaStore_ && !RowCopies_),
                "A M-major: the grouped walk (K-grouped form, lists) or the Stream-K walk without clusters, B N-major, "
                "stores by the threads");
  // The consumers share each tile, 64 rows each. (A ping-pong form, two warpgroups taking 64 x 256
  // tiles in turn so that one's epilogue ran beside the other's WGMMAs, was 20-72% slower on the
  // MoE weight gradients: 67% more operand traffic per FLOP; H100, session 11.)
  static constexpr int Consumers = BM / 64;  // consumer warpgroups
  static constexpr int Threads = 128 * (Consumers + 1);
  // One consumer warpgroup: two CTAs share an SM, so that one's epilogue overlaps the other's
  // WGMMAs (the poor man's ping-pong). Registers: the producer gives its share to the consumers.
  static constexpr int CtasPerSm = Consumers == 1 ? 2 : 1;
  // The first of the tile's rows that consumer warpgroup `warpgroup` holds.
  static __device__ __forceinline__ int first_row(int warpgroup) { return 64 * warpgroup; }
  // Row copies (row_copy.cuh): operands TMA cannot address (args.a_rows / b_rows) are copied row
  // by row into the stages by the whole producer warpgroup (cp.async), which then needs registers
  // of its own (the 128 x 128 tiles' 64 accumulators per consumer thread leave them; the 64 x 64
  // tiles' 32, two CTAs an SM). Stream-K walk, no clusters, TMA for the other operand. The
  // 128 x 256 tiles' consumers hold 128 accumulators each: their producer makes do with 56
  // registers (ProducerRegs; ptxas: 16-68 bytes of spill, none in a K loop), for a tile that reads 3/4 of the
  // 128 x 128 tile's operand bytes per MAC (the copies bound the row-copy kernel's K loop: 497 x
  // 212 x 47612 77.9 -> 66.2 µs, H200, session 52; StreamKModels::rows_wide).
  static constexpr bool RowCopies = RowCopies_;
  static_assert(!RowCopies || (Mode_ == KernelMode::StreamK && ClusterM_ == 1 && !TmaStore_ && AKMajor_ &&
                               ((BM_ == 128 && (BN_ == 128 || BN_ == 256)) || (BM_ == 64 && BN_ == 64))),
                "row copies: the Stream-K kernel's 128 x 128, 128 x 256 or 64 x 64 tiles, no clusters, stores by the threads");
  static constexpr bool WideRowCopies = RowCopies && BN_ == 256;
  // The grouped walk keeps the problem of its last group (TileWalker's RememberGroup), and with 40
  // registers ptxas spilled it inside the producer's K loop (the K-grouped 128 x 256 kernel: 120
  // bytes, the 64 x 128 one 112; none at 56, whose consumers fit in 224 or 200). Square Rank2K
  // tiles (64 accumulators a thread) take 56 as well (their producer spilled 56 bytes at 40); the
  // Stream-K walks and the 128 x 256 Rank2K tiles, whose epilogue spills more at 224, keep 40.
  static constexpr bool RememberGroup = Mode_ == KernelMode::Grouped;
  static constexpr bool WideProducer = !RowCopies && (Mode_ == KernelMode::Grouped || (Mode_ == KernelMode::Rank2K && BN_ == BM_));
  static constexpr int ProducerRegs = WideRowCopies ? 56 : RowCopies ? 104 : (WideProducer ? 56 : 40);
  // Three consumers (the Stream-K kernel's 192 x 128 tiles, 64 accumulators a thread): 4 x 128
  // launch registers leave them 3 x 152 beside the producer's 40 (ptxas: 100 bytes of spill, none
  // in the K loop; session 43).
  static constexpr int ConsumerRegs = WideRowCopies ? 224
                                      : RowCopies ? (CtasPerSm == 2 ? 152 : 200)
                                      : Consumers == 3 ? 152
                                      : (CtasPerSm == 2 ? (WideProducer ? 200 : 216) : (WideProducer ? 224 : 232));
  // setmaxnreg only moves registers within the CTA's launch allocation: the per-thread cap of
  // __launch_bounds__ (a multiple of 8), which ptxas takes whole in these kernels (168 with three
  // warpgroups, 128 with two CTAs of two). A consumer allocation beyond what the producer's release
  // frees waits forever (a 64 + 2 x 224 split of 3 x 168 hung every launch; session 30).
  static constexpr int LaunchRegs = (65536 / (Threads * CtasPerSm)) / 8 * 8;
  static_assert(128 * ProducerRegs + 128 * Consumers * ConsumerRegs <= Threads * LaunchRegs,
                "setmaxnreg beyond the CTA's registers");
  // 128-byte swizzle: a K-major row of BK elements is exactly one 128 B line, which is what TMA's
  // SWIZZLE_128B writes and WGMMA's SW128 layouts read. TF32 WGMMA reads both operands K-major only.
  static_assert(BK * sizeof(T) == 128, "one swizzled line per row");
  static_assert(sizeof(T) == 2 || (AKMajor && BKMajor && !RowCopies_ && !TmaStore_ && ClusterM_ == 1),
                "TF32 (4-byte elements): K-major operands, no row copies, TMA stores or clusters");
  static constexpr int StageBytes = (BM + BN) * BK * int(sizeof(T));
  // TF32: WGMMA's fp32 accumulation rounds toward zero, so its error grows with the length of one
  // accumulation chain (3xTF32 syr2k, 300 x 300 x 712 in one chain: 1.2e-5 relative, against
  // 4e-7 for fp32 cuBLAS; H100, session 17). Every PromoteBlocks K blocks the chain's sum goes
  // into fp32 registers with round-to-nearest adds and the chain restarts from zero (0: one chain).
  static constexpr int PromoteBlocks = sizeof(T) == 4 ? 4 : 0;
  // The epilogue stages 64 rows x one 128-byte line of output per consumer warpgroup in shared
  // memory (store_tile), sized for the widest output type (fp32: 32 columns + 8 of padding).
  // With TMA stores (store_tile_tma; a variant of its own, so that the other kernels' register
  // allocation stays as it was: in one kernel with both epilogues ptxas spilled 4-30x more) two
  // such chunks per warpgroup, 1024-byte aligned and unpadded (TMA's 128-byte swizzle), so that
  // one is filled while the TMA engine still reads the other.
  // Rank2K kernels with TMA stores take them where the host set args.c_map_set (one problem whose
  // output TMA can address), for the tiles and mirrors the diagonal does not cross; the others
  // (diagonal tiles, lists, unaligned outputs) go through store_tile and the same buffers.
  static constexpr bool TmaStore = TmaStore_;
  static_assert(!TmaStore || Consumers == 2, "TMA stores: 128-row tiles");
  static constexpr int EpilogueChunkBytes = 64 * 128;
  static constexpr int EpilogueBuffers = TmaStore ? 2 : 0;
  static constexpr int EpilogueWarpgroupBytes = TmaStore ? EpilogueBuffers * EpilogueChunkBytes : 64 * (32 + 8) * 4;
  static constexpr int EpilogueBytes = Consumers * EpilogueWarpgroupBytes;
  // store_tile's loops over a chunk's 16-byte pieces (4 or 5 per thread) left rolled: in the Rank2K
  // kernels, whose epilogue stores every tile twice (itself and its mirror). Unrolled, each copy
  // with the edge pieces' partial stores inlined, they made the consumers' code 206 KB for
  // 128 x 256 tiles, whose epilogue then ran from instruction-cache misses (~15 µs per tile
  // against ~2 for 128 x 128 tiles, whose code was 119 KB; H100, session 15).
  static constexpr bool RolledEpilogueStores = Rank2K;
  // As many stages as the CTA's share of the 227 KB of shared memory holds (at most 8).
  static constexpr int StageBudget = (227 * 1024) / CtasPerSm - 2048 - EpilogueBytes;
  static constexpr int Stages = StageBudget / StageBytes < 8 ? StageBudget / StageBytes : 8;
  // The grouped walks read the ragged forms' offsets from a copy in shared memory, made once per
  // CTA, for calls of up to this many groups (1 KB of the 2048 bytes above), not from global
  // memory under the operands' traffic: grouped_mm DSv3 up 6.5% faster, DSv3 down 1.5%, the
  // others as before (H100, session 29; the ~2 µs walk between the tiles of the 64 small and 128
  // tiny experts was its instructions — GemmTiles's 64-bit divisions — not these reads).
  static constexpr int SharedOffsets = Mode_ == KernelMode::Grouped ? 256 : 0;

  // An MN-major operand (B N-major, A M-major): the TMA box is 64 columns (rows) x BK, so the atoms
  // of one stage are stacked along K first (Step<_2, _1, _3>), which is the order the boxes land in.
  template <bool KMajor, int Rows>
  using SmemLayout = decltype(cute::tile_to_shape(
      cute::conditional_t<KMajor, cute::GMMA::Layout_K_SW128_Atom<T>, cute::GMMA::Layout_MN_SW128_Atom<T>>{},
      cute::Shape<cute::Int<Rows>, cute::Int<BK>, cute::Int<Stages>>{},
      cute::conditional_t<KMajor, cute::Step<cute::_1, cute::_2, cute::_3>, cute::Step<cute::_2, cute::_1, cute::_3>>{}));
  using SmemLayoutA = SmemLayout<AKMajor, BM>;
  using SmemLayoutB = SmemLayout<BKMajor, BN>;
  using MmaOp = decltype(cute::GMMA::ss_op_selector<T, T, float, cute::Shape<cute::_64, cute::Int<BN>, cute::Int<BK>>,
                                                    AKMajor ? cute::GMMA::Major::K : cute::GMMA::Major::MN,
                                                    BKMajor ? cute::GMMA::Major::K : cute::GMMA::Major::MN>());
  using TiledMma =
      decltype(cute::make_tiled_mma(MmaOp{}, cute::Layout<cute::Shape<cute::Int<Consumers>, cute::_1, cute::_1>>{}));
  using Pipeline = cutlass::PipelineTmaAsync<Stages>;

  struct alignas(1024) SharedStorage {
    alignas(1024) T a[Stages * BM * BK];
    alignas(1024) T b[Stages * BN * BK];
    alignas(1024) float epilogue[Consumers][EpilogueWarpgroupBytes / 4];
    typename Pipeline::SharedStorage pipeline;
    int fixup_last[Consumers];  // Stream-K: streamk_fixup.cuh
    int32_t offs[SharedOffsets > 0 ? SharedOffsets : 1];  // the walk's copy of args.offs (SharedOffsets)
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage)) + 1024;  // + alignment slack
  static_assert(SmemBytes * CtasPerSm <= 227 * 1024, "shared memory beyond an SM's 227 KB");
};

// One unit of a CTA's work: a tile and the range of its K blocks this CTA computes.
struct WorkUnit {
  sched::TileCoord tile;
  GroupProblem q;
  int32_t kb_begin, kb_end;  // K blocks [begin, end); Rank2K counts both passes
  int64_t linear_tile;       // Stream-K: the plan's tile index
  int64_t slot;              // Stream-K: workspace slot of the partial; -1: the whole tile
  int64_t segment;           // Stream-K: which segment of the tile (K order)
};

// The grouped and Rank2K walks: whole tiles, every K block, padding slots skipped.
template <class Cfg>
struct TileUnits {
  TileWalker<Cfg> walker;
  int64_t step = 0;
  __device__ TileUnits(const GroupedGemmArgs& p, const int32_t* shared_offsets) : walker(p, shared_offsets) {}
  __device__ __forceinline__ bool next(WorkUnit& u) {
    while (walker.next(step++, u.tile, u.q)) {
      if (!u.tile.valid) continue;  // a padding slot of the Rank2K walk
      // A pair tile's rows: this CTA's half. Where the half lies past the group's rows the CTA
      // still loads and multiplies (its half of B feeds its peer; A's rows there belong to the
      // next group or are TMA's zero fill) and its store writes nothing (store_tile's bounds).
      if constexpr (Cfg::ClusterM > 1) u.tile = sched::cluster_member_tile(u.tile, Cfg::ClusterM, int32_t(cute::block_rank_in_cluster()));
      u.kb_begin = 0;
      u.kb_end = int32_t(sched::ceil_div(u.q.k, Cfg::BK)) * (Cfg::Rank2K ? 2 : 1);
      return true;
    }
    return false;
  }
};

// The Stream-K walk of one matmul (the Batched form with one group, syr2k's one problem too):
// this CTA's units in the plan's order, tiles numbered m → n (Rank2K: in the triangle walk's
// order). In clusters the plan's walkers are the clusters and its tiles pair tiles, of which
// each CTA takes its rows (as TileUnits does).
template <class Cfg>
struct StreamKUnits {
  const sched::StreamKPlan& plan;
  const sched::SymmetricTiles& triangle;
  GroupProblem q;
  sched::StreamKCursor cursor;
  static __device__ __forceinline__ int64_t walker() { return blockIdx.x / Cfg::ClusterM; }
  __device__ StreamKUnits(const GroupedGemmArgs& p, const int32_t* /* no offsets */ = nullptr)
      : plan(p.streamk), triangle(p.triangle), q(batched_problem(p, 0)), cursor(p.streamk.begin(walker())) {}
  __device__ __forceinline__ bool next(WorkUnit& u) {
    sched::StreamKWorkUnit w;
    if (!plan.next(walker(), cursor, w)) return false;
    u.q = q;
    if constexpr (Cfg::Rank2K) {
      u.tile = triangle.coord(0, q.n, q.n, w.tile);
    } else {
      // (32-bit: an output that fits in a GPU's memory has fewer than 2^23 tiles; the 64-bit
      // division is a longer dependent chain on the way to a CTA's first load)
      const uint32_t tile = uint32_t(w.tile), tiles_n = uint32_t(plan.tiles_n), tile_m = tile / tiles_n;
      u.tile = sched::TileCoord{0, int32_t(tile_m), int32_t(tile - tile_m * tiles_n), true};
    }
    if constexpr (Cfg::ClusterM > 1) u.tile = sched::cluster_member_tile(u.tile, Cfg::ClusterM, int32_t(cute::block_rank_in_cluster()));
    u.kb_begin = int32_t(w.k_begin), u.kb_end = int32_t(w.k_end);
    u.linear_tile = w.tile, u.slot = w.slot, u.segment = w.segment;
    return true;
  }
};

template <class Cfg>
using WorkUnits = cute::conditional_t<Cfg::StreamK, StreamKUnits<Cfg>, TileUnits<Cfg>>;

// The call's form; a constant in the Stream-K kernels (their one problem is Batched, which
// launch_grouped_gemm checks), so that they carry no code of the other forms.
template <class Cfg>
__device__ __forceinline__ GroupedForm form_of(const GroupedGemmArgs& p) {
  return Cfg::StreamK ? GroupedForm::Batched : p.form;
}

constexpr uint64_t kEvictNormal = 0x1000000000000000ull;  // TMA::CacheHintSm90::EVICT_NORMAL

// The A tile of one K block (rows row .. row + BM of `map`, K index k0) into stage `a`: one box,
// or BM / ABoxRows boxes (Rank2K clusters), K-major.
template <class Cfg>
__device__ __forceinline__ void load_a_k_major(const CUtensorMap* map, int32_t batch, uint64_t* bar,
                                               typename Cfg::Element* a, int32_t k0, int32_t row) {
#pragma unroll
  for (int j = 0; j < Cfg::BM / Cfg::ABoxRows; ++j)
    cute::SM90_TMA_LOAD_3D::copy(map, bar, kEvictNormal, a + j * Cfg::ABoxRows * Cfg::BK, k0, row + Cfg::ABoxRows * j,
                                 batch);
}

// The B tile of one K block (K index k0, the tile's first column col, from `map`: the problem's B,
// or in Rank2K's second pass its A) into stage `b`: one box (K-major) or 64-column boxes
// (N-major), or with clusters this CTA's share, multicast to both.
template <class Cfg>
__device__ __forceinline__ void load_b(const CUtensorMap* map, int32_t batch, uint64_t* bar,
                                       typename Cfg::Element* b, int32_t k0, int32_t col) {
  if constexpr (Cfg::ClusterM > 1) {
    // This CTA's share of the B tile, written into the same stage of both CTAs (the stage
    // indices agree: the two walk the same pair tiles, so the same K blocks). The full
    // barrier of each counts the whole stage, half of B arriving from the peer.
    constexpr uint16_t kBoth = (1u << Cfg::ClusterM) - 1;
    constexpr int kRows = Cfg::BN / Cfg::ClusterM;  // K-major: B rows (one box); N-major: columns
    static_assert(!Cfg::BKMajor || Cfg::BBoxRows == kRows, "a clustered CTA's K-major share is one box");
    const int32_t first = int32_t(cute::block_rank_in_cluster()) * kRows;
    if constexpr (Cfg::BKMajor) {
      cute::SM90_TMA_LOAD_MULTICAST_3D::copy(map, bar, kBoth, kEvictNormal, b + first * Cfg::BK, k0, col + first,
                                              batch);
    } else {
#pragma unroll
      for (int j = 0; j < kRows / 64; ++j)
        cute::SM90_TMA_LOAD_MULTICAST_3D::copy(map, bar, kBoth, kEvictNormal, b + (first + 64 * j) * Cfg::BK,
                                                col + first + 64 * j, k0, batch);
    }
  } else if constexpr (Cfg::BKMajor) {
#pragma unroll
    for (int j = 0; j < Cfg::BN / Cfg::BBoxRows; ++j)
      cute::SM90_TMA_LOAD_3D::copy(map, bar, kEvictNormal, b + j * Cfg::BBoxRows * Cfg::BK, k0,
                                   col + Cfg::BBoxRows * j, batch);
  } else {
#pragma unroll
    for (int j = 0; j < Cfg::BN / 64; ++j)
      cute::SM90_TMA_LOAD_3D::copy(map, bar, kEvictNormal, b + j * 64 * Cfg::BK, col + 64 * j, k0, batch);
  }
}

// Where the TMA producer stands: its pipeline state and the list group whose tensor maps it
// acquired (-1: none).
template <class Cfg>
struct LoadState {
  typename Cfg::Pipeline::PipelineState stage = cutlass::make_producer_start_state<typename Cfg::Pipeline>();
  int32_t acquired = -1;
};

// Before the first load of unit `u`: per-group maps were patched by a kernel through the generic
// proxy (csrc/cuda/list_maps.cu, k_grouped_maps.cu), so the producer acquires them once per group.
template <class Cfg>
__device__ __forceinline__ void acquire_unit_maps(const GroupedGemmArgs& p, const WorkUnit& u, LoadState<Cfg>& s) {
  const GroupedForm form = form_of<Cfg>(p);
  const bool group_maps = form == GroupedForm::List || (!Cfg::AKMajor && form == GroupedForm::RaggedK);
  if (group_maps && u.tile.group != s.acquired && u.q.k > 0) {
    cute::tma_descriptor_fence_acquire(u.q.a);
    cute::tma_descriptor_fence_acquire(u.q.b);
    s.acquired = u.tile.group;
  }
}

// K block `kb` of unit `u` (the pipeline's transaction leader only): waits for a free stage and
// issues the TMA loads of its A and B tiles.
template <class Cfg>
__device__ __forceinline__ void load_k_block(const GroupedGemmArgs& p, typename Cfg::Pipeline& pipeline,
                                             typename Cfg::SharedStorage& smem, LoadState<Cfg>& s, const WorkUnit& u,
                                             int32_t kb) {
  using T = typename Cfg::Element;
  const GroupProblem& q = u.q;
  const int32_t kblocks = int32_t(sched::ceil_div(q.k, Cfg::BK));  // of one pass
  const int32_t row = q.a_row + u.tile.tile_m * Cfg::BM, col = q.b_col + u.tile.tile_n * Cfg::BN;
  pipeline.producer_acquire(s.stage);
  uint64_t* bar = pipeline.producer_get_barrier(s.stage);
  T* a = smem.a + s.stage.index() * Cfg::BM * Cfg::BK;
  T* b = smem.b + s.stage.index() * Cfg::BN * Cfg::BK;
  ++s.stage;
  if constexpr (Cfg::Rank2K) {
    // First pass A_i B_jᵀ, second pass B_i A_jᵀ: the same maps with their roles swapped.
    const bool second = kb >= kblocks;
    int32_t k_in_a = (second ? kb - kblocks : kb) * Cfg::BK, k_in_b = k_in_a;
    if constexpr (sizeof(T) == 4) {
      if (p.tf32_split) split_k_coords(second ? kb - kblocks : kb, kblocks / 3, Cfg::BK, k_in_a, k_in_b);
    }
    load_a_k_major<Cfg>(second ? q.b : q.a, 0, bar, a, second ? k_in_b : k_in_a, row);
    load_b<Cfg>(second ? q.a : q.b, 0, bar, b, second ? k_in_a : k_in_b, col);
  } else if constexpr (Cfg::AKMajor) {
    int32_t k_in_a = kb * Cfg::BK, k_in_b = k_in_a;
    if constexpr (sizeof(T) == 4) {  // 3xTF32 (gemm, streamk_mm): a's parts hi, hi, lo against b's hi, lo, hi
      if (p.tf32_split) split_k_coords(kb, kblocks / 3, Cfg::BK, k_in_a, k_in_b);
    }
    load_a_k_major<Cfg>(q.a, q.a_batch, bar, a, k_in_a, row);
    load_b<Cfg>(q.b, q.b_batch, bar, b, k_in_b, col);
  } else {
    // A M-major in 64-row boxes, B N-major: the K-grouped form (its group's own maps; the group's
    // K starts at k_origin) or one Stream-K problem (k_origin 0).
    const int32_t k0 = q.k_origin + kb * Cfg::BK;
#pragma unroll
    for (int j = 0; j < Cfg::BM / 64; ++j)
      cute::SM90_TMA_LOAD_3D::copy(q.a, bar, kEvictNormal, a + j * 64 * Cfg::BK, row + 64 * j, k0, q.a_batch);
    load_b<Cfg>(q.b, q.b_batch, bar, b, k0, col);
  }
}

// Whether the kernel copies args.offs into shared memory (Cfg::SharedOffsets): the same answer in
// every thread of the grid.
template <class Cfg>
__device__ __forceinline__ bool copies_offsets(const GroupedGemmArgs& p) {
  return Cfg::SharedOffsets > 0 && p.offs != nullptr && p.groups <= Cfg::SharedOffsets;
}

// The walk's offsets: the CTA's copy, or null where it has none (the walk reads global memory).
template <class Cfg>
__device__ __forceinline__ const int32_t* shared_offsets(const GroupedGemmArgs& p, typename Cfg::SharedStorage& smem) {
  return copies_offsets<Cfg>(p) ? smem.offs : nullptr;
}

// The TMA producer (warp 0; thread 0 issues): the loads of every K block of the CTA's units.
template <class Cfg>
__device__ __forceinline__ void produce(const GroupedGemmArgs& p, typename Cfg::Pipeline& pipeline,
                                        typename Cfg::SharedStorage& smem) {
  const bool leader = threadIdx.x == 0;  // the pipeline's transaction leader
  WorkUnits<Cfg> units(p, shared_offsets<Cfg>(p, smem));
  WorkUnit u;
  LoadState<Cfg> s;
  while (units.next(u)) {
    if (leader) {
      acquire_unit_maps<Cfg>(p, u, s);
#pragma unroll 1  // (unrolled, it grew the producer's code 7-fold for nothing: it waits on stages)
      for (int32_t kb = u.kb_begin; kb < u.kb_end; ++kb) load_k_block<Cfg>(p, pipeline, smem, s, u, kb);
    }
    __syncwarp();
  }
  // With clusters the peer's consumers release this CTA's stages and its multicasts land here:
  // the CTA may exit only once every stage it filled has been released by both.
  if constexpr (Cfg::ClusterM > 1) {
    if (leader) pipeline.producer_tail(s.stage);
  }
}

// The K blocks of a CTA's work units, one after the other (units with an empty range skipped), as
// the row-copy producer walks them.
template <class Cfg>
struct BlockStream {
  WorkUnits<Cfg> units;
  WorkUnit u;
  int32_t kb = 0;
  bool live = false;
  __device__ explicit BlockStream(const GroupedGemmArgs& p) : units(p) { live = next_unit(); }
  __device__ __forceinline__ bool next_unit() {
    while (units.next(u))
      if (u.kb_begin < u.kb_end) {
        kb = u.kb_begin;
        return true;
      }
    return false;
  }
  __device__ __forceinline__ void advance() {
    if (++kb >= u.kb_end) live = next_unit();
  }
  // The current block's lines of A and B, as the stage holds them (row_copy::StageRows).
  __device__ __forceinline__ row_copy::StageRows a_rows() const {
    return {u.q.a_row + int64_t(u.tile.tile_m) * Cfg::BM, int64_t(kb) * Cfg::BK};
  }
  __device__ __forceinline__ row_copy::StageRows b_rows() const {  // (N-major: in column boxes)
    const int64_t col = u.q.b_col + int64_t(u.tile.tile_n) * Cfg::BN, k0 = int64_t(kb) * Cfg::BK;
    return Cfg::BKMajor ? row_copy::StageRows{col, k0} : row_copy::StageRows{k0, col};
  }
};

// The producer of the row-copy kernels: the whole warpgroup (thread 0..127). Per K block all wait
// for the stage to be free; thread 0 announces the TMA bytes of an operand that has a map and
// issues its loads; all copy the rows of the operands that have none straight into the stage
// (row_copy::copy_lines) and arrive on the stage's full barrier once their copies have landed
// (the barrier expects the 128 arrivals, and the TMA bytes).
template <class Cfg>
__device__ __forceinline__ void produce_row_copies(const GroupedGemmArgs& p, typename Cfg::Pipeline& pipeline,
                                                   typename Cfg::SharedStorage& smem, int thread) {
  using T = typename Cfg::Element;
  const bool rows_a = p.a_rows.base != nullptr, rows_b = p.b_rows.base != nullptr;
  const int32_t tma_bytes = (rows_a ? 0 : Cfg::BM * Cfg::BK * int32_t(sizeof(T))) +
                            (rows_b ? 0 : Cfg::BN * Cfg::BK * int32_t(sizeof(T)));
  const uint32_t a_base = uint32_t(__cvta_generic_to_shared(smem.a)), b_base = uint32_t(__cvta_generic_to_shared(smem.b));
  BlockStream<Cfg> fill(p);
  auto state = cutlass::make_producer_start_state<typename Cfg::Pipeline>();
  while (fill.live) {
    smem.pipeline.empty_barrier_[state.index()].wait(state.phase());
    uint64_t* full = pipeline.producer_get_barrier(state);
    const uint32_t a = a_base + uint32_t(state.index() * Cfg::BM * Cfg::BK * int(sizeof(T)));
    const uint32_t b = b_base + uint32_t(state.index() * Cfg::BN * Cfg::BK * int(sizeof(T)));
    if (thread == 0 && tma_bytes > 0) {
      // (before thread 0's own arrival below, so the phase cannot complete without the bytes)
      cutlass::arch::ClusterTransactionBarrier::expect_transaction(full, uint32_t(tma_bytes));
      const GroupProblem& q = fill.u.q;
      const int32_t k0 = fill.kb * Cfg::BK;
      T* stage_a = smem.a + state.index() * Cfg::BM * Cfg::BK;
      T* stage_b = smem.b + state.index() * Cfg::BN * Cfg::BK;
      if (!rows_a) load_a_k_major<Cfg>(q.a, q.a_batch, full, stage_a, k0, int32_t(fill.a_rows().row0));
      if (!rows_b) load_b<Cfg>(q.b, q.b_batch, full, stage_b, k0, int32_t(q.b_col + int64_t(fill.u.tile.tile_n) * Cfg::BN));
    }
    if (rows_a) row_copy::copy_lines<false, Cfg::BM>(p.a_rows, fill.a_rows(), a, thread);
    if (rows_b) row_copy::copy_lines<!Cfg::BKMajor, Cfg::BN>(p.b_rows, fill.b_rows(), b, thread);
    row_copy::arrive_when_copied(full);
    fill.advance();
    ++state;
  }
}

__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(float x) { return x; }

// The output type of the Rank2K kernels (syr2k's output has its inputs' dtype): bf16, fp16, or
// fp32 for TF32 inputs (fp32 tensors read through TF32 WGMMA).
template <class Element>
using Rank2KOut = cute::conditional_t<std::is_same_v<Element, cutlass::bfloat16_t>, __nv_bfloat16,
                                      cute::conditional_t<std::is_same_v<Element, cutlass::half_t>, __half, float>>;

// Two adjacent accumulators as two output elements, in one 32-bit (fp32: 64-bit) store.
template <class Out>
__device__ __forceinline__ void store_pair(Out* dst, float x, float y) {
  if constexpr (std::is_same_v<Out, float>) {
    *reinterpret_cast<float2*>(dst) = make_float2(x, y);
  } else if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(x, y);
  } else {
    *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(x, y);
  }
}

// One 16-byte global store. Written out because NVVM split the plain uint4 store of the Rank2K
// epilogue into four 32-bit stores (it lost the pointer's alignment).
__device__ __forceinline__ void store_global_16(void* dst, uint4 v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(dst)), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

// Which elements of a tile a store writes: all those inside the problem, or (a diagonal tile of
// syr2k) only those on one side of the diagonal, in output coordinates.
enum class Keep { All, Lower, Upper };

// Elements [first, last) of a 16-byte piece `x` to the 16-byte aligned `piece` in global memory,
// with few aligned stores (whole 8-byte halves, then whole words, then 2-byte halves: at most three
// for the prefix or suffix a tile's edge leaves). A piece the output's edge cuts shares its sector with
// another tile's CTA: each store is one partial-sector write that the L2 merges, so fewer is
// faster than one store per element.
template <class Out>
__device__ __forceinline__ void store_global_part(Out* piece, const uint4& x, int first, int last) {
  const int from = first * int(sizeof(Out)), to = last * int(sizeof(Out));  // bytes of the piece
  const uint32_t w[4] = {x.x, x.y, x.z, x.w};  // (indexed by constants only: registers)
  char* dst = reinterpret_cast<char*>(piece);
  bool done8[2], done4[4];
  CUTE_UNROLL
  for (int h = 0; h < 2; ++h) {  // whole 8-byte halves
    done8[h] = from <= 8 * h && 8 * h + 8 <= to;
    if (done8[h]) {
      asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(__cvta_generic_to_global(dst + 8 * h)), "r"(w[2 * h]),
                   "r"(w[2 * h + 1]) : "memory");
    }
  }
  CUTE_UNROLL
  for (int q = 0; q < 4; ++q) {  // whole words outside them
    done4[q] = done8[q / 2] || (from <= 4 * q && 4 * q + 4 <= to);
    if (!done8[q / 2] && done4[q]) {
      asm volatile("st.global.b32 [%0], %1;" ::"l"(__cvta_generic_to_global(dst + 4 * q)), "r"(w[q]) : "memory");
    }
  }
  CUTE_UNROLL
  for (int e = 0; e < 8; ++e) {  // 2-byte halves of the rest
    if (!done4[e / 2] && from <= 2 * e && 2 * e + 2 <= to) {
      const uint16_t v = uint16_t(w[e / 2] >> (16 * (e % 2)));
      asm volatile("st.global.b16 [%0], %1;" ::"l"(__cvta_generic_to_global(dst + 2 * e)), "h"(v) : "memory");
    }
  }
}

// The elements [first, last) of V consecutive output elements starting at column `col` of row `row`
// that a store writes: those before `cols`, and for a diagonal tile of syr2k those on `keep`'s side.
template <int V>
__device__ __forceinline__ void kept_range(int64_t row, int64_t col, int64_t cols, Keep keep, int& first, int& last) {
  int64_t lo = 0, hi = cute::min(int64_t(V), cols - col);
  if (keep == Keep::Lower) hi = cute::min(hi, row - col + 1);  // col + e <= row
  if (keep == Keep::Upper) lo = cute::max(lo, row - col);      // col + e >= row
  first = int(cute::max(lo, int64_t(0))), last = int(cute::max(hi, int64_t(first)));
}

// Calls f(std::integral_constant<int, 0>{}) ... f(std::integral_constant<int, N - 1>{}) in place.
// (cute::for_each is not forced inline: once store_tile's chunk body grew, nvcc made it a call and
// passed the accumulators through 880 bytes of local memory.)
template <class F, int... I>
__device__ __forceinline__ void for_each_index_impl(F& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ __forceinline__ void for_each_index(F&& f) {
  for_each_index_impl(f, std::make_integer_sequence<int, N>{});
}

// Stores the tile through shared memory, one 128-byte line of output columns at a time per
// consumer warpgroup (32 fp32 or 64 half-precision columns). Each thread converts its
// accumulators (pairs of adjacent columns) into the warpgroup's staging buffer; the warpgroup then
// reads it back by rows, 16 bytes per thread, and writes whole 128-byte row segments with 16-byte
// stores (element by element where the output's alignment, the problem's edge or `keep` forbids).
// Rows are padded by 8 elements: the pair writes of a warp (8 rows x 4 pairs, or for fp32 4 rows
// x 8 pairs per half-warp phase) then fall in distinct banks, rows stay 16-byte aligned, and a row
// that is not 16-byte aligned in the output has room to be staged shifted (by up to V - 1).
// Transposed (syr2k's mirror): the tile is stored at (column, row). A chunk of 64 tile columns x
// the warpgroup's 64 rows is staged transposed, so the buffer has the same shape and the output
// rows are still written 128 bytes at a time (2-byte outputs only).
// Aligned: the output's rows are 16-byte aligned; Interior (aligned only): the whole tile lies
// inside the problem and is stored whole (no diagonal), so every piece leaves with one 16-byte
// store and no bounds checks. store_tile decides once per tile. Each path is its own
// instantiation so that the hot one runs as contiguous code: with the shifted path beside the
// aligned one in each of a tile's chunks, and the edge pieces' partial stores inlined beside
// every whole one, the hot path jumped over cold code all along, and the epilogue ran from
// instruction-cache misses (12.7% of the weight gradient's stall samples; H100, session 22).
template <class Out, class Cfg, bool Transposed, bool Aligned, bool Interior, class Acc, class Coords>
__device__ __forceinline__ void store_tile_path(const Acc& acc, const Coords& coords, const GroupProblem& q,
                                                int64_t row0, int64_t col0, float* stage_raw, int warpgroup,
                                                int thread, Keep keep) {
  constexpr int W = 128 / int(sizeof(Out)), V = 16 / int(sizeof(Out));
  // The staged chunk: 64 rows x W columns, or Transposed W rows (tile columns) x 64 columns (the
  // warpgroup's tile rows), each row padded. fp32 mirrors (32 x 64) pad by 4: a warp's transposed
  // writes (columns 2·(lane % 4) + {0, 1}, rows lane / 4) then fall in 32 distinct banks.
  constexpr int SR = Transposed ? W : 64, SC = Transposed ? 64 : W;
  constexpr int P = SC + (Transposed && sizeof(Out) == 4 ? 4 : 8);
  static_assert(SR * P * int(sizeof(Out)) <= Cfg::EpilogueWarpgroupBytes, "the staged chunk fits the buffer");
  Out* stage = reinterpret_cast<Out*>(stage_raw);
  Out* c = reinterpret_cast<Out*>(q.c);
  constexpr bool vector = Aligned;
  const int64_t rows = Transposed ? q.n : q.m, cols = Transposed ? q.m : q.n;  // of this store's output
  const int barrier = 1 + warpgroup;  // named barrier of this warpgroup (0 is __syncthreads)
  const int lane_in_wg = thread % 128;
  // The chunk index must be a compile-time constant: it selects accumulator registers.
  for_each_index<Cfg::BN / W>([&](auto chunk_c) __attribute__((always_inline)) {
    constexpr int chunk = decltype(chunk_c)::value;
    if (chunk > 0) cutlass::arch::NamedBarrier::sync(128, barrier);  // the previous chunk is read
    // The chunk's first output element of staged row 0, and how far (in elements) staged row rr's
    // output starts past a 16-byte boundary: rows that are not 16-byte aligned (an odd N) are
    // staged shifted by that much, so that the staged rows lie on the 16-byte grid of the output
    // and go out in the same 16-byte pieces as aligned rows (plus the partial pieces at each end).
    const int64_t base_row = Transposed ? col0 + chunk * W : row0 + Cfg::first_row(warpgroup);
    const int64_t base_col = Transposed ? row0 + Cfg::first_row(warpgroup) : col0 + chunk * W;
    const int base_offset = int(reinterpret_cast<uintptr_t>(c + base_row * q.ldc + base_col) % 16);
    const int row_offset = int((q.ldc * int64_t(sizeof(Out))) % 16);  // what each further row adds
    auto shift = [&](int rr) { return ((base_offset + rr * row_offset) % 16) / int(sizeof(Out)); };  // (unaligned rows)
    // WGMMA accumulators of a 64 x N warpgroup tile are ((2, 2, N/8)): values 4j .. 4j+3 hold
    // columns 8j .. 8j+7, so a W-column chunk is exactly W/2 consecutive values. The aligned and
    // the shifted staging are separate loops: in one loop the shift's arithmetic, selected away
    // per element, cost syr2k bf16 n8192 k1024 432 µs against 349 split, 4096 x 4095 x 1024 75 µs
    // against 67 (H100, session 12).
    if constexpr (vector) {
      CUTE_UNROLL
      for (int i = chunk * W / 2; i < (chunk + 1) * W / 2; i += 2) {
        const int r = int(cute::get<0>(coords(i))) - Cfg::first_row(warpgroup), col = int(cute::get<1>(coords(i))) - chunk * W;
        if constexpr (Transposed) {
          stage[col * P + r] = from_float<Out>(acc(i));
          stage[(col + 1) * P + r] = from_float<Out>(acc(i + 1));
        } else {
          store_pair(stage + r * P + col, acc(i), acc(i + 1));
        }
      }
    } else {
      CUTE_UNROLL
      for (int i = chunk * W / 2; i < (chunk + 1) * W / 2; i += 2) {
        const int r = int(cute::get<0>(coords(i))) - Cfg::first_row(warpgroup), col = int(cute::get<1>(coords(i))) - chunk * W;
        if constexpr (Transposed) {
          stage[col * P + r + shift(col)] = from_float<Out>(acc(i));
          stage[(col + 1) * P + r + shift(col + 1)] = from_float<Out>(acc(i + 1));
        } else {  // a shifted pair may straddle a word: element by element
          const int at = r * P + col + shift(r);
          stage[at] = from_float<Out>(acc(i));
          stage[at + 1] = from_float<Out>(acc(i + 1));
        }
      }
    }
    // A shifted row's last 16-byte piece reaches into the next chunk: its first columns (one group
    // of 8, as many as fit the piece) are staged too, so that the piece leaves whole and the next
    // chunk skips it. Only a tile's outer edges then write partial 16-byte pieces, whose sectors
    // the L2 must merge (4096 x 4095 x 1024: 88 µs with two partial pieces per 128-byte row
    // segment, 78 with them only at the tile's edges, 53 at N = 4096; H100, session 11).
    constexpr bool Carry = !Transposed;  // (a mirrored row continues in the other warpgroup)
    constexpr int Last = Cfg::BN / W - 1;
    if constexpr (Carry && chunk < Last && !vector) {
      for_each_index<2>([&](auto pair_c) __attribute__((always_inline)) {  // (compile-time indices)
        constexpr int i = (chunk + 1) * W / 2 + 2 * decltype(pair_c)::value;
        const int r = int(cute::get<0>(coords(i))) - Cfg::first_row(warpgroup), col = int(cute::get<1>(coords(i))) - chunk * W;
        const int at = col + shift(r);  // W .. W + 7 + shift: in the piece when below W + V
        if (at < W + V) stage[r * P + at] = from_float<Out>(acc(i));
        if (at + 1 < W + V) stage[r * P + at + 1] = from_float<Out>(acc(i + 1));
      });
    }
    cutlass::arch::NamedBarrier::sync(128, barrier);
    if constexpr (!vector) {
      // Staged row rr holds its output row's W elements from element shift(rr) on, in W / V + 1
      // pieces of 16 bytes that match aligned 16-byte pieces of the output: the whole ones leave
      // with one 16-byte store each, the partial ones at the tile's edges (and those the output's
      // edge or `keep` cuts) element by element. (Element stores throughout, and later a gather of
      // each piece from unshifted rows, issued twice the kernel's instructions: 4096 x 4095 x
      // 1024 took 86 µs against 53 at N = 4096, 704 x 830 x 144 13.7 against 7.1; H100, session 11.)
      constexpr int Pieces = SC / V + 1;
      auto store_piece = [&](int v) __attribute__((always_inline)) {
        const int rr = v / Pieces, piece = v % Pieces, sh = shift(rr);
        const int e0 = piece * V - sh;  // the chunk column of the piece's first element
        const int64_t row = base_row + rr;
        // the chunk columns staged for this store: into the next chunk's where a piece reaches it
        const int hi = Carry && chunk < Last && sh > 0 ? W + V - sh : SC;
        if (row >= rows || e0 >= hi) return;  // (e0 >= hi: the last piece of a row with no shift)
        if (Carry && chunk > 0 && sh > 0 && piece == 0) return;  // left with the previous chunk
        Out* dst = c + row * q.ldc + base_col + e0;  // 16-byte aligned
        const uint4 x = *reinterpret_cast<const uint4*>(stage + rr * P + piece * V);
        if (e0 >= 0 && e0 + V <= hi && base_col + e0 + V <= cols && keep == Keep::All) {
          store_global_16(dst, x);
          return;
        }
        int first, last;
        kept_range<V>(row, base_col + e0, cols, keep, first, last);
        store_global_part(dst, x, cute::max(first, -e0), cute::min(last, hi - e0));
      };
      if constexpr (Cfg::RolledEpilogueStores) {
#pragma unroll 1
        for (int v = lane_in_wg; v < SR * Pieces; v += 128) store_piece(v);
      } else {  // (as the compiler unrolls it)
        for (int v = lane_in_wg; v < SR * Pieces; v += 128) store_piece(v);
      }
      return;
    }
    auto store_piece = [&](int v) __attribute__((always_inline)) {
      const int r = v / (SC / V), cv = (v % (SC / V)) * V;
      const int64_t tile_row = Cfg::first_row(warpgroup) + r, tile_col = chunk * W + cv;  // of the staged layout
      const int64_t row = Transposed ? col0 + chunk * W + r : row0 + tile_row;
      const int64_t col = Transposed ? row0 + Cfg::first_row(warpgroup) + cv : col0 + tile_col;
      if (!Interior && (row >= rows || col >= cols)) return;
      const uint4 x = *reinterpret_cast<const uint4*>(stage + r * P + cv);
      Out* dst = c + row * q.ldc + col;
      if (Interior || (col + V <= cols && keep == Keep::All)) {  // (rows are 16-byte aligned here)
        store_global_16(dst, x);
      } else {
        int first, last;
        kept_range<V>(row, col, cols, keep, first, last);
        store_global_part(dst, x, first, last);
      }
    };
    if constexpr (Cfg::RolledEpilogueStores) {
#pragma unroll 1
      for (int v = lane_in_wg; v < SR * SC / V; v += 128) store_piece(v);
    } else {
      CUTE_UNROLL
      for (int v = lane_in_wg; v < SR * SC / V; v += 128) store_piece(v);
    }
  });
  cutlass::arch::NamedBarrier::sync(128, barrier);  // the buffer is free for the next tile
}

template <class Out, class Cfg, bool Transposed = false, class Acc, class Coords>
__device__ __forceinline__ void store_tile(const Acc& acc, const Coords& coords, const GroupProblem& q,
                                           int64_t row0, int64_t col0, float* stage, int warpgroup, int thread,
                                           Keep keep = Keep::All) {
  constexpr int V = 16 / int(sizeof(Out));
  // (the tile's rows and columns bound the stored ones either way round: Transposed stores them swapped)
  const bool interior = keep == Keep::All && row0 + Cfg::BM <= q.m && col0 + Cfg::BN <= q.n;
  if ((reinterpret_cast<uintptr_t>(q.c) % 16) == 0 && q.ldc % V == 0) {
    if (interior) {
      store_tile_path<Out, Cfg, Transposed, true, true>(acc, coords, q, row0, col0, stage, warpgroup, thread, keep);
    } else {
      store_tile_path<Out, Cfg, Transposed, true, false>(acc, coords, q, row0, col0, stage, warpgroup, thread, keep);
    }
  } else {
    store_tile_path<Out, Cfg, Transposed, false, false>(acc, coords, q, row0, col0, stage, warpgroup, thread, keep);
  }
}

// The tile through TMA stores, one 128-byte line of output columns x the warpgroup's 64 rows per
// store: each thread converts its accumulators (pairs of adjacent columns) into one of the
// warpgroup's two chunk buffers, laid out as TMA's 128-byte swizzle expects (16-byte unit j of
// row r at unit j ^ (r % 8): a warp's pair writes, 8 rows x 4 pairs, fall in 32 distinct banks),
// or Transposed (syr2k's mirror, 2-byte outputs: a chunk of 64 tile columns x 64 rows is a box of
// 64 output rows x one 128-byte line, stored at (column, row); element by element, a warp's
// writes then fall in four 16-byte units of four rows, 64 bytes without conflicts),
// and one thread hands the chunk to the TMA engine, which clips it at the output's edges. The
// warpgroup goes on to the next chunk, and after the last to the next tile's WGMMAs, while the
// engine writes the chunk out: the stores drain during the next tile instead of stalling the
// threads that issue them (16384² x 256: 379 µs, the output's 537 MB at 1.4 TB/s). A buffer is
// refilled only once the engine has read it: before each chunk, at most EpilogueBuffers - 1 of the
// chunks issued before may still be unread (wait_group.read), so the oldest, this buffer's, is read.
// `map`: the output map; (row0, col0, batch): the tile's first element in its coordinates.
template <class Out, class Cfg, bool Transposed = false, class Acc, class Coords>
__device__ __forceinline__ void store_tile_tma(const Acc& acc, const Coords& coords, const CUtensorMap* map,
                                               int32_t batch, int64_t row0, int64_t col0, float* buffers_raw,
                                               int warpgroup, int thread) {
  constexpr int W = 128 / int(sizeof(Out));  // columns of one 128-byte line
  static_assert(!Transposed || W == 64, "a transposed chunk is square only for 2-byte outputs");
  constexpr int kBuffers = Cfg::EpilogueBuffers;
  static_assert((Cfg::BN / W) % kBuffers == 0, "chunk c of every tile takes buffer c % kBuffers");
  uint8_t* buffers = reinterpret_cast<uint8_t*>(buffers_raw);
  const int barrier = 1 + warpgroup;
  const bool issuer = thread % 128 == 0;
  cute::for_each(cute::make_int_sequence<Cfg::BN / W>{}, [&](auto chunk_c) {
    constexpr int chunk = decltype(chunk_c)::value;
    uint8_t* buffer = buffers + (chunk % kBuffers) * Cfg::EpilogueChunkBytes;
    if (issuer) cute::tma_store_wait<kBuffers - 1>();  // the engine has read this buffer's previous chunk
    cutlass::arch::NamedBarrier::sync(128, barrier);
    CUTE_UNROLL
    for (int i = chunk * W / 2; i < (chunk + 1) * W / 2; i += 2) {
      const int r = int(cute::get<0>(coords(i))) - Cfg::first_row(warpgroup), col = int(cute::get<1>(coords(i))) - chunk * W;
      if constexpr (Transposed) {  // buffer row: the tile column; within it, the tile row's element
        const int byte = r * int(sizeof(Out));
        *reinterpret_cast<Out*>(buffer + col * 128 + (((byte / 16) ^ (col % 8)) * 16) + byte % 16) = from_float<Out>(acc(i));
        *reinterpret_cast<Out*>(buffer + (col + 1) * 128 + (((byte / 16) ^ ((col + 1) % 8)) * 16) + byte % 16) =
            from_float<Out>(acc(i + 1));
      } else {
        const int byte = col * int(sizeof(Out));
        store_pair(reinterpret_cast<Out*>(buffer + r * 128 + (((byte / 16) ^ (r % 8)) * 16) + byte % 16), acc(i),
                   acc(i + 1));
      }
    }
    cute::tma_store_fence();  // the generic-proxy writes, visible to the TMA engine
    cutlass::arch::NamedBarrier::sync(128, barrier);
    if (issuer) {
      const int32_t tile_cols = int32_t(col0 + chunk * W), tile_rows = int32_t(row0 + Cfg::first_row(warpgroup));
      if constexpr (Transposed) {
        cute::SM90_TMA_STORE_3D::copy(map, buffer, tile_rows, tile_cols, batch);
      } else {
        cute::SM90_TMA_STORE_3D::copy(map, buffer, tile_cols, tile_rows, batch);
      }
      cute::tma_store_arrive();
    }
  });
}

// syr2k's values, in place: acc = alpha·acc + beta·c, c read from its `uplo` triangle (at the
// element's mirror where the element lies outside it).
template <class Out, class Acc, class Coords>
__device__ __forceinline__ void scale_rank2k(Acc& acc, const Coords& coords, const GroupProblem& q, int64_t row0,
                                             int64_t col0, const GroupedGemmArgs& p) {
  const Out* c_in = reinterpret_cast<const Out*>(q.c_in);
  if (c_in == nullptr) {  // alpha only: a short loop of its own (the other one, per element, is long code)
    if (p.alpha != 1.0f) {
      cute::for_each(cute::make_int_sequence<decltype(cute::size(acc))::value>{},
                     [&](auto i_c) {
                       constexpr int i = decltype(i_c)::value;
                       acc(i) *= p.alpha;
                     });
    }
    return;
  }
  const bool lower = p.triangle.triangle.uplo == sched::Uplo::Lower;
  // The index must be a compile-time constant: it selects accumulator registers (a loop that the
  // compiler leaves rolled indexes the accumulator dynamically, which puts it in local memory).
  cute::for_each(cute::make_int_sequence<decltype(cute::size(acc))::value>{}, [&](auto i_c) {
    constexpr int i = decltype(i_c)::value;
    float v = p.alpha * acc(i);
    const int64_t r = row0 + cute::get<0>(coords(i)), col = col0 + cute::get<1>(coords(i));
    if (r < q.n && col < q.n) {
      const bool in_triangle = lower ? r >= col : r <= col;
      v += p.beta * to_float(in_triangle ? c_in[r * q.ldc_in + col] : c_in[col * q.ldc_in + r]);
    }
    acc(i) = v;
  });
}

// The Rank2K epilogue: the tile at (r, c) and, from the same values, its mirror at (c, r), so that
// both halves hold the same bits. A diagonal tile stores only its `uplo` triangle both ways (its
// (r, c) and (c, r) sums differ in rounding). With the GEMM walk (all_tiles) each tile stores only
// itself.
template <class Cfg, class Acc, class Coords>
__device__ __forceinline__ void store_rank2k_tile(Acc& acc, const Coords& coords, const GroupProblem& q,
                                                  const sched::TileCoord& tile, const GroupedGemmArgs& p, float* stage,
                                                  int warpgroup, int thread) {
  using Out = Rank2KOut<typename Cfg::Element>;
  const bool mirror = !p.triangle.all_tiles, lower = p.triangle.triangle.uplo == sched::Uplo::Lower;
  // A cluster's half tile on the other side of the diagonal: its peer's loads needed it, the output does not.
  if (mirror && !sched::tile_meets_triangle(sched::TileShape{Cfg::BM, Cfg::BN}, p.triangle.triangle.uplo, tile.tile_m,
                                            tile.tile_n))
    return;
  const int64_t row0 = int64_t(tile.tile_m) * Cfg::BM, col0 = int64_t(tile.tile_n) * Cfg::BN;
  scale_rank2k<Out>(acc, coords, q, row0, col0, p);
  // A tile the diagonal crosses (or, 128 x 256, that reaches past it) stores only its `uplo` part.
  const bool diagonal = mirror && !sched::tile_inside_triangle(sched::TileShape{Cfg::BM, Cfg::BN},
                                                               p.triangle.triangle.uplo, tile.tile_m, tile.tile_n);
  if constexpr (Cfg::TmaStore) {
    // The tile and its mirror leave through the TMA engine, which clips them at the output's edges
    // and writes them out while the warpgroup goes on to its next tile.
    if (p.c_map_set && !diagonal) {
      store_tile_tma<Out, Cfg>(acc, coords, &p.c_map, 0, row0, col0, stage, warpgroup, thread);
      if (mirror) store_tile_tma<Out, Cfg, true>(acc, coords, &p.c_map, 0, row0, col0, stage, warpgroup, thread);
      return;
    }
    // The threads store this tile through the same buffers: the engine must have read them.
    if (thread % 128 == 0) cute::tma_store_wait<0>();
    cutlass::arch::NamedBarrier::sync(128, 1 + warpgroup);
  }
  store_tile<Out, Cfg>(acc, coords, q, row0, col0, stage, warpgroup, thread,
                       diagonal ? (lower ? Keep::Lower : Keep::Upper) : Keep::All);
  if (mirror)
    store_tile<Out, Cfg, true>(acc, coords, q, row0, col0, stage, warpgroup, thread,
                               diagonal ? (lower ? Keep::Upper : Keep::Lower) : Keep::All);
}

// Frees a stage for the producers that fill it. With clusters both CTAs' producers write into it
// (B's multicast halves), so each consumer warpgroup arrives once on each CTA's empty barrier,
// lane r of the warpgroup on CTA r's: computed from the thread index here, where CUTLASS's
// consumer_release keeps the target and predicate per thread in the pipeline object, which ptxas
// spilled to local memory inside the K loop (two LDL per K block at 168 registers).
template <class Cfg>
__device__ __forceinline__ void release_stage(typename Cfg::Pipeline& pipeline, typename Cfg::SharedStorage& smem,
                                              const typename Cfg::Pipeline::PipelineState& state, int thread) {
  if constexpr (Cfg::ClusterM > 1) {
    const uint32_t lane = uint32_t(thread) % 128;
    if (lane < Cfg::ClusterM) smem.pipeline.empty_barrier_[state.index()].arrive(lane);
  } else {
    pipeline.consumer_release(state);
  }
}

template <class Cfg>
__device__ __forceinline__ void consume(const GroupedGemmArgs& p, typename Cfg::Pipeline& pipeline,
                                        typename Cfg::SharedStorage& smem, int thread) {
  using namespace cute;
  typename Cfg::TiledMma mma;
  auto thr = mma.get_thread_slice(thread);
  Tensor sA = make_tensor(make_smem_ptr(smem.a), typename Cfg::SmemLayoutA{});
  Tensor sB = make_tensor(make_smem_ptr(smem.b), typename Cfg::SmemLayoutB{});
  Tensor tCrA = thr.make_fragment_A(thr.partition_A(sA));  // WGMMA descriptors per (k, stage)
  Tensor tCrB = thr.make_fragment_B(thr.partition_B(sB));
  Tensor acc = partition_fragment_C(mma, Shape<Int<Cfg::BM>, Int<Cfg::BN>>{});
  Tensor coords = thr.partition_C(make_identity_tensor(Shape<Int<Cfg::BM>, Int<Cfg::BN>>{}));

  // (TF32: the promoted sum of the accumulation chains, Cfg::PromoteBlocks; unused otherwise)
  Tensor total = make_fragment_like(acc);
  auto promote = [&](bool first) __attribute__((always_inline)) {
    CUTE_UNROLL
    for (int i = 0; i < size(acc); ++i) total(i) = first ? acc(i) : total(i) + acc(i);
  };

  WorkUnits<Cfg> units(p, shared_offsets<Cfg>(p, smem));
  typename Cfg::Pipeline::PipelineState state;
  WorkUnit u;
  const int warpgroup = thread / 128;
  int32_t c_acquired = -1;  // TMA-store kernels, list form: the group whose output map this warpgroup acquired
  UnitTimeline timeline;     // (a development probe: empty unless built with TORCH_GROUPED_TIMELINE)
  timeline.stamp(TimelineEvent::Start);
  while (units.next(u)) {
    timeline.stamp(TimelineEvent::Walked);
    const GroupProblem& q = u.q;
    const int32_t kblocks = u.kb_end - u.kb_begin;
    mma.accumulate_ = GMMA::ScaleOut::Zero;
    auto previous = state;
    for (int32_t kb = 0; kb < kblocks; ++kb) {
      pipeline.consumer_wait(state);
      timeline.first_block(kb);
      // Row copies land through the generic proxy; WGMMA reads through the async one.
      if constexpr (Cfg::RowCopies) cutlass::arch::fence_view_async_shared();
      warpgroup_fence_operand(acc);
      warpgroup_arrive();
      CUTE_UNROLL
      for (int k = 0; k < size<2>(tCrA); ++k) {
        cute::gemm(mma, tCrA(_, _, k, state.index()), tCrB(_, _, k, state.index()), acc);
        mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      // Keep one batch of WGMMAs in flight: the previous one is done, so its stage is free.
      warpgroup_wait<1>();
      warpgroup_fence_operand(acc);
      if (kb > 0) release_stage<Cfg>(pipeline, smem, previous, thread);
      previous = state;
      ++state;
      if constexpr (Cfg::PromoteBlocks > 0) {
        if ((kb + 1) % Cfg::PromoteBlocks == 0 && kb + 1 < kblocks) {  // the chain ends here
          warpgroup_wait<0>();
          warpgroup_fence_operand(acc);
          promote(kb + 1 == Cfg::PromoteBlocks);
          mma.accumulate_ = GMMA::ScaleOut::Zero;
        }
      }
    }
    warpgroup_wait<0>();
    // An empty unit (K = 0) stores zeros. The clear sits here, after the last wait and outside the
    // WGMMA pipeline stage: before the K loop, a branch around it made ptxas serialize every WGMMA
    // (C7515, 6-15% slower on long K), and predicated it cost 128 FSELs a tile (H100, session 23).
    if (kblocks > 0) {
      release_stage<Cfg>(pipeline, smem, previous, thread);
    } else {
      clear(acc);
      __syncwarp();  // keeps the clear a branch (not predicated per register)
    }
    if constexpr (Cfg::PromoteBlocks > 0) {
      if (kblocks > Cfg::PromoteBlocks) {  // the last chain onto the promoted sum: acc holds the total
        warpgroup_fence_operand(acc);
        CUTE_UNROLL
        for (int i = 0; i < size(acc); ++i) acc(i) = total(i) + acc(i);
      }
    }
    timeline.stamp(TimelineEvent::KLoop, Cfg::StreamK ? u.linear_tile : -1, kblocks);

    if constexpr (Cfg::StreamK) {
      if (u.slot >= 0) {  // a segment of a cut tile: published; the last to arrive (or a separate kernel) sums
        // In clusters the plan's tile is the pair tile: this CTA's warpgroups come after its
        // lower-ranked peers' in its slots and counters (a pair tile's rank r holds rows r·BM on).
        const int rank = Cfg::ClusterM > 1 ? int(cute::block_rank_in_cluster()) : 0;
        const StreamKFixup fixup{p.workspace, p.counters, Cfg::ClusterM * Cfg::BM * Cfg::BN, Cfg::ClusterM * Cfg::Consumers,
                                 rank * Cfg::Consumers + warpgroup, 1 + warpgroup, &smem.fixup_last[warpgroup]};
        if constexpr (!Cfg::Rank2K) {  // streamk_mm: the separate kernel sums (sched::SeparateFixup)
          if (p.streamk.separate_fixup) {
            fixup.store(acc, u.slot, thread % 128);  // (no counter: the reduction runs after this kernel)
            continue;
          }
        }
        const bool last = fixup.combine(acc, p.streamk, u.linear_tile, u.segment, u.slot, thread % 128);
        timeline.stamp(last ? TimelineEvent::LastFixup : TimelineEvent::Fixup, u.linear_tile);
        if (!last) continue;
      }
    }
    if constexpr (Cfg::Rank2K) {
      store_rank2k_tile<Cfg>(acc, coords, q, u.tile, p, smem.epilogue[warpgroup], warpgroup, thread);
      timeline.stamp(TimelineEvent::Store, Cfg::StreamK ? u.linear_tile : -1);
      continue;
    }
    const int64_t row0 = int64_t(u.tile.tile_m) * Cfg::BM, col0 = int64_t(u.tile.tile_n) * Cfg::BN;
    float* stage = smem.epilogue[warpgroup];
    if constexpr (Cfg::TmaStore) {
      // One map per problem (streamk_mm, Batched, List) clips exactly; RaggedM's map spans every
      // group's rows, so a warpgroup's 64 rows go through TMA only when they lie inside the group.
      // (RaggedN, whose column groups a box would cross, never runs this variant.)
      const GroupedForm form = form_of<Cfg>(p);
      const bool exact = form == GroupedForm::Batched || form == GroupedForm::List;
      if (exact || (form == GroupedForm::RaggedM && row0 + Cfg::first_row(warpgroup) + 64 <= q.m)) {
        // The problem's place in its output map (derived here rather than carried by every
        // GroupProblem, which would cost the other kernels registers): a list group has its own
        // map, a batch its coordinate, a row group its first row.
        const bool list = form == GroupedForm::List;
        const CUtensorMap* map = list ? p.c_maps + u.tile.group : &p.c_map;
        const int32_t batch = form == GroupedForm::Batched ? q.a_batch : 0;
        const int64_t row = (form == GroupedForm::RaggedM ? q.a_row : 0) + row0;
        if (list && thread % 128 == 0 && u.tile.group != c_acquired) {
          cute::tma_descriptor_fence_acquire(map);  // patched by a kernel through the generic proxy
          c_acquired = u.tile.group;
        }
        switch (p.out_kind) {
          case OutKind::Float: store_tile_tma<float, Cfg>(acc, coords, map, batch, row, col0, stage, warpgroup, thread); break;
          case OutKind::BFloat16: store_tile_tma<__nv_bfloat16, Cfg>(acc, coords, map, batch, row, col0, stage, warpgroup, thread); break;
          default: store_tile_tma<__half, Cfg>(acc, coords, map, batch, row, col0, stage, warpgroup, thread); break;
        }
        continue;
      }
      // The threads store this block through the same buffers: the engine must have read them.
      if (thread % 128 == 0) cute::tma_store_wait<0>();
      cutlass::arch::NamedBarrier::sync(128, 1 + warpgroup);
    }
    switch (p.out_kind) {
      case OutKind::Float: store_tile<float, Cfg>(acc, coords, q, row0, col0, stage, warpgroup, thread); break;
      case OutKind::BFloat16: store_tile<__nv_bfloat16, Cfg>(acc, coords, q, row0, col0, stage, warpgroup, thread); break;
      default: store_tile<__half, Cfg>(acc, coords, q, row0, col0, stage, warpgroup, thread); break;
    }
    timeline.stamp(TimelineEvent::Store, Cfg::StreamK ? u.linear_tile : -1);
  }
  timeline.print(warpgroup, thread);
  // The engine must have read the last chunks before the CTA's shared memory goes away.
  if constexpr (Cfg::TmaStore) {
    if (thread % 128 == 0) cute::tma_store_wait<0>();
  }
}

// The operand maps that are kernel parameters into the TMA unit's descriptor cache: both, except
// for the forms whose maps are per group in device memory (List, RaggedK), and for the row
// copies the operand that has one.
template <class Cfg>
__device__ __forceinline__ void prefetch_operand_maps(const GroupedGemmArgs& p) {
  const GroupedForm form = form_of<Cfg>(p);
  if (form == GroupedForm::List || form == GroupedForm::RaggedK) return;
  if (!Cfg::RowCopies || p.a_rows.base == nullptr) cute::prefetch_tma_descriptor(&p.a_map);
  if (!Cfg::RowCopies || p.b_rows.base == nullptr) cute::prefetch_tma_descriptor(&p.b_map);
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::Threads, Cfg::CtasPerSm) grouped_gemm_sm90_kernel(const __grid_constant__ GroupedGemmArgs p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ char smem_raw[];
  // Aligned by offsetting the shared array itself (not through an integer), so that the compiler
  // still knows every access is to shared memory: LDS/STS, not generic loads and stores.
  const uint32_t misalign = uint32_t(__cvta_generic_to_shared(smem_raw)) % 1024;
  auto& smem = *reinterpret_cast<typename Cfg::SharedStorage*>(smem_raw + (misalign ? 1024 - misalign : 0));
  const int warpgroup = threadIdx.x / 128;

  typename Cfg::Pipeline::Params params;
  params.transaction_bytes = Cfg::StageBytes;
  params.num_consumers = 128 * Cfg::Consumers;  // the threads that release each stage
  params.role = warpgroup == 0 ? Cfg::Pipeline::ThreadCategory::Producer : Cfg::Pipeline::ThreadCategory::Consumer;
  params.is_leader = threadIdx.x == 0;
  params.num_producers = Cfg::RowCopies ? 128 : 1;  // arrivals per full stage: the row copies' threads, or the TMA leader
  typename Cfg::Pipeline pipeline(smem.pipeline, params, typename Cfg::ClusterShape{});
  // Barriers initialised before anyone waits on them (or, in a cluster, signals them remotely).
  if constexpr (Cfg::ClusterM > 1) {
    cute::cluster_arrive_relaxed();
    cute::cluster_wait();
  } else {
    __syncthreads();
  }
  // The operands' maps (kernel parameters, whatever the previous kernel writes) on their way into
  // the TMA unit's descriptor cache.
  if (threadIdx.x == 0) prefetch_operand_maps<Cfg>(p);
  // Launched as a programmatic dependent (launch_grouped_gemm): everything above overlapped the
  // previous kernel's tail; its writes (operand copies, device-built tensor maps, the output's
  // producer) are visible after the wait. The next kernel may then start its own prologue.
  wait_for_prior_grid();
  allow_dependent_launch();
  if (copies_offsets<Cfg>(p)) {  // (after the wait: the previous kernel may write them)
    for (int i = threadIdx.x; i < p.groups; i += Cfg::Threads) smem.offs[i] = __ldg(p.offs + i);
    __syncthreads();
  }

  if (warpgroup == 0) {
    cutlass::arch::warpgroup_reg_dealloc<Cfg::ProducerRegs>();
    if constexpr (Cfg::RowCopies) {
      produce_row_copies<Cfg>(p, pipeline, smem, threadIdx.x);
    } else if (threadIdx.x < 32) {
      produce<Cfg>(p, pipeline, smem);
    }
  } else {
    cutlass::arch::warpgroup_reg_alloc<Cfg::ConsumerRegs>();
    consume<Cfg>(p, pipeline, smem, threadIdx.x - 128);
  }
#endif
}

// Host side of one configuration: the shared-memory attribute, set once per device (it is per
// device), before a launch or an occupancy query.
template <class Cfg>
void prepare_grouped_gemm(int device) {
  static std::atomic<uint64_t> done{0};
  allow_dynamic_smem(grouped_gemm_sm90_kernel<Cfg>, Cfg::SmemBytes, device, done);
}

// The launch configuration of `grid` CTAs on `stream`: clusters where the configuration has them,
// and the programmatic-dependent attribute when `dependent` (`attrs` holds the attributes).
template <class Cfg>
cudaLaunchConfig_t grouped_gemm_launch_config(int grid, cudaStream_t stream, bool dependent, cudaLaunchAttribute (&attrs)[2]) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid), config.blockDim = dim3(Cfg::Threads);
  config.dynamicSmemBytes = Cfg::SmemBytes, config.stream = stream;
  config.attrs = attrs, config.numAttrs = 0;
  if constexpr (Cfg::ClusterM > 1) {
    cudaLaunchAttribute& cluster = attrs[config.numAttrs++];
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = Cfg::ClusterM, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 1;
  }
  if (dependent) attrs[config.numAttrs++] = dependent_launch_attribute();
  return config;
}

// How many CTAs of this configuration can be resident at once on `device`: the persistent grid.
// Without clusters CtasPerSm per SM; with them, whole clusters that fit into the GPCs (a GPC with
// an odd number of free SMs leaves one idle), as the occupancy API counts them. Cached per device.
template <class Cfg>
int resident_grouped_gemm_ctas(int device) {
  static std::atomic<int> cache[64];
  return once_per_device(cache, device, [&] {
    int sms = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    if constexpr (Cfg::ClusterM > 1) {
      prepare_grouped_gemm<Cfg>(device);
      cudaLaunchAttribute attrs[2];
      const cudaLaunchConfig_t config = grouped_gemm_launch_config<Cfg>(sms * Cfg::ClusterM, nullptr, false, attrs);
      int clusters = 0;
      C10_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, grouped_gemm_sm90_kernel<Cfg>, &config));
      TORCH_CHECK(clusters > 0, "torch_grouped: no cluster of ", Cfg::ClusterM, " CTAs fits on device ", device);
      return clusters * Cfg::ClusterM;
    }
    return sms * Cfg::CtasPerSm;
  });
}

// The launch on `stream`: `grid` CTAs (a multiple of ClusterM).
template <class Cfg>
void launch_grouped_gemm(const GroupedGemmArgs& args, int grid, cudaStream_t stream) {
  int device = 0;
  C10_CUDA_CHECK(cudaGetDevice(&device));
  prepare_grouped_gemm<Cfg>(device);
  TORCH_INTERNAL_ASSERT(grid % Cfg::ClusterM == 0, "a clustered grid of ", grid, " CTAs");
  TORCH_INTERNAL_ASSERT(!Cfg::StreamK || args.form == GroupedForm::Batched, "a Stream-K kernel runs one Batched problem");
  cudaLaunchAttribute attrs[2];
  const cudaLaunchConfig_t config = grouped_gemm_launch_config<Cfg>(grid, stream, dependent_launch_enabled(), attrs);
  C10_CUDA_CHECK(cudaLaunchKernelEx(&config, grouped_gemm_sm90_kernel<Cfg>, args));
}

// Defines the launcher `NAME` of one configuration (csrc/instantiations/, one per file), and
// `NAME_resident` (resident_grouped_gemm_ctas). MODE is Grouped, Rank2K, StreamK or Rank2KStreamK;
// the _CLUSTER form runs Grouped tiles in CLUSTER_M x 1 clusters, the _TMA_STORE form stores
// through store_tile_tma (args.c_map), AKMAJOR false reads A M-major.
#define TORCH_GROUPED_DEFINE_GROUPED_GEMM_KERNEL(NAME, T, BM, BN, BKMAJOR, MODE, CLUSTER_M, TMA_STORE, AKMAJOR, ROW_COPIES) \
  namespace torch_grouped::kernels {                                                                          \
  using NAME##_config = GroupedGemmConfig<T, BM, BN, BKMAJOR, KernelMode::MODE, CLUSTER_M, TMA_STORE, AKMAJOR, ROW_COPIES>; \
  void NAME(const GroupedGemmArgs& args, int grid, cudaStream_t stream) {                                     \
    launch_grouped_gemm<NAME##_config>(args, grid, stream);                                                   \
  }                                                                                                           \
  int NAME##_resident(int device) { return resident_grouped_gemm_ctas<NAME##_config>(device); }              \
  }
#define TORCH_GROUPED_DEFINE_GROUPED_GEMM(NAME, T, BM, BN, BKMAJOR, MODE) \
  TORCH_GROUPED_DEFINE_GROUPED_GEMM_KERNEL(NAME, T, BM, BN, BKMAJOR, MODE, 1, false, true, false)
#define TORCH_GROUPED_DEFINE_GROUPED_GEMM_CONFIG(NAME, T, BM, BN, BKMAJOR, MODE, CLUSTER_M, TMA_STORE) \
  TORCH_GROUPED_DEFINE_GROUPED_GEMM_KERNEL(NAME, T, BM, BN, BKMAJOR, MODE, CLUSTER_M, TMA_STORE, true, false)
#define TORCH_GROUPED_DEFINE_GROUPED_GEMM_CLUSTER(NAME, T, BM, BN, BKMAJOR, MODE, CLUSTER_M) \
  TORCH_GROUPED_DEFINE_GROUPED_GEMM_KERNEL(NAME, T, BM, BN, BKMAJOR, MODE, CLUSTER_M, false, true, false)
#define TORCH_GROUPED_DEFINE_GROUPED_GEMM_TMA_STORE(NAME, T, BM, BN, BKMAJOR, MODE) \
  TORCH_GROUPED_DEFINE_GROUPED_GEMM_KERNEL(NAME, T, BM, BN, BKMAJOR, MODE, 1, true, true, false)
// The K-grouped form's kernels: A M-major, B N-major (GroupedForm::RaggedK), stores by the
// threads, in CLUSTER_M x 1 clusters that multicast B.
#define TORCH_GROUPED_DEFINE_K_GROUPED_GEMM(NAME, T, BM, BN, CLUSTER_M) \
  TORCH_GROUPED_DEFINE_GROUPED_GEMM_KERNEL(NAME, T, BM, BN, false, Grouped, CLUSTER_M, false, false, false)
// Stream-K with A M-major (streamk_mm's Aᵀ read in place): 128 x BN tiles, B N-major, stores by the
// threads, no clusters.
#define TORCH_GROUPED_DEFINE_STREAMK_A_M_MAJOR(NAME, T, BN) \
  TORCH_GROUPED_DEFINE_GROUPED_GEMM_KERNEL(NAME, T, 128, BN, false, StreamK, 1, false, false, false)
// Stream-K with row copies (row_copy.cuh): BM x BN tiles (128 x 128, 128 x 256 or 64 x 64), operands TMA
// cannot address read where they lie (args.a_rows / b_rows).
#define TORCH_GROUPED_DEFINE_ROW_COPY_GEMM(NAME, T, BM, BN, BKMAJOR) \
  TORCH_GROUPED_DEFINE_GROUPED_GEMM_KERNEL(NAME, T, BM, BN, BKMAJOR, StreamK, 1, false, true, true)

}  // namespace torch_grouped::kernels
