// The grouped GEMM kernels that exist, as plain functions the host code can call without seeing
// CuTe: one per configuration, each defined in its own csrc/instantiations/*.cu (an sm90
// instantiation costs a minute of nvcc, so they compile in parallel).
#pragma once
#include <cuda_runtime.h>

#include "grouped_gemm_args.h"

namespace torch_grouped::kernels {

using GroupedGemmLauncher = void (*)(const GroupedGemmArgs&, int grid, cudaStream_t);

// TF32: fp32 tensors read through TF32 WGMMA (the Rank2K kernels; the grouped and Stream-K
// kernels' 128 x 128 tiles with B K-major).
enum class InputKind : int32_t { BFloat16 = 0, Half = 1, TF32 = 2 };

struct GroupedGemmKernel {
  GroupedGemmLauncher launch;
  int tile_m, tile_n;  // of one CTA
  // CTAs per cluster along M (1: no clusters). The scheduler deals cluster_m·tile_m x tile_n pair
  // tiles, one per cluster, and the grid is a multiple of cluster_m.
  int cluster_m;
  int (*resident)(int device);  // CTAs resident at once on `device`: the persistent grid
  bool tma_store;  // the epilogue through TMA stores: args.c_map / c_maps must be set
  // Rows of an A box; 0: tile_m. (The Rank2K kernel in clusters reads each of its two maps in both
  // roles, so A's box is B's half tile too: GroupedGemmConfig::ABoxRows.)
  int a_box_rows = 0;
  int a_box_m() const { return a_box_rows > 0 ? a_box_rows : tile_m; }
  // Rows of a K-major B box (N-major boxes are 64 columns whatever the tile); 0: a CTA's share of
  // the B tile (all of it without clusters). (The 128 x 256 Rank2K kernel's maps, each read in
  // both roles, have 128-row boxes: GroupedGemmConfig::BBoxRows.)
  int b_box_rows = 0;
  int b_box_n() const { return b_box_rows > 0 ? b_box_rows : tile_n / cluster_m; }
  // The 128 x 256 Rank2K kernels: TMA stores through args.c_map where the host sets
  // args.c_map_set (one problem whose output TMA can address), the threads' stores otherwise.
  bool optional_c_map = false;
};

// The kernel for inputs of `input` with tile_m x tile_n tiles (128x128, 128x256 or 64x128; with
// cluster_m = 2 or tma_store, not both, only 128x256) and B K-major or N-major (TF32: 128x128, B K-major).
GroupedGemmKernel grouped_gemm_kernel(InputKind input, int tile_m, int tile_n, bool b_k_major, int cluster_m = 1,
                                      bool tma_store = false);

// The kernel of grouped_mm's K-grouped form (GroupedForm::RaggedK), which also runs gemm's lists
// whose A's lie M-major (GroupedForm::List: the form is the call's): 128x128 or 128x256 tiles,
// A M-major, B N-major, stores by the threads; cluster_m = 2 (128x256 only): in 2 x 1 clusters
// that multicast B.
GroupedGemmKernel k_grouped_kernel(InputKind input, int tile_m, int tile_n, int cluster_m);

// The Rank2K (syr2k) kernel: 128 x tile_n tiles (128 or 256), operands K-major; `streamk`: over
// the work units of args.streamk (one problem), partial tiles in args.workspace; else (128 x 128
// only) `cluster_m` = 2: in 2 x 1 clusters over 256 x 128 pair tiles of the triangle
// (args.triangle's tile), the B role multicast. TF32 inputs: 128 x 128 tiles without clusters only.
GroupedGemmKernel rank2k_kernel(InputKind input, bool streamk, int cluster_m = 1, int tile_n = 128);

// The Stream-K kernel (streamk_mm): 128 x tile_n tiles (256, or 128 for narrow outputs) with two
// consumer warpgroups, or 192 x 128 tiles with three (tile_m = 192: neither variant below, no
// clusters), B K-major or N-major, one CTA per SM; or 64 x 64 tiles with one (tile_m = 64, the
// small problems' tile: two CTAs an SM, row copies or none, no TMA stores or clusters).
// (syr2k's Stream-K kernel: 128-row tiles.)
constexpr int kStreamKTileM = 128, kStreamKConsumers = 2, kStreamKSmallTile = 64;
// `tma_store` (tile_n 256 only): the variant whose epilogue stores through TMA (args.c_map);
// `row_copies` (128 x 128, 128 x 256 and 64 x 64 tiles): the variant that reads operands TMA cannot address in place
// (args.a_rows / b_rows, kernels/row_copy.cuh). TF32 inputs: 128 x 128 tiles, B K-major, neither variant.
// `cluster_m` = 2 (where streamk_cluster_kernel_exists: bf16, fp16; neither variant): in 2 x 1 clusters whose
// CTAs take the halves of the plan's 256 x tile_n pair tiles (its walkers are the clusters: the
// grid is twice the plan's), B multicast (a K-major B's map in boxes of tile_n / 2 rows, each
// CTA's share); its workspace slots hold pair tiles, and its counters are four per tile
// (kStreamKConsumers per CTA).
bool streamk_cluster_kernel_exists(InputKind input, int tile_n);  // (either B layout)
int streamk_cluster_resident(InputKind input, bool b_k_major, int tile_n, int device);  // CTAs, whole clusters
GroupedGemmLauncher streamk_kernel(InputKind input, bool b_k_major, int tile_m, int tile_n, bool tma_store = false,
                                   bool row_copies = false, int cluster_m = 1);

// The Stream-K kernel that reads A M-major where it lies (streamk_mm's Aᵀ: its own backward's
// dB = Aᵀ·dY) in 64-row boxes: bf16 or fp16, 128 x tile_n tiles (128 or 256), B N-major, stores by
// the threads, no clusters or row copies.
GroupedGemmLauncher streamk_a_m_major_kernel(InputKind input, int tile_n);

}  // namespace torch_grouped::kernels
