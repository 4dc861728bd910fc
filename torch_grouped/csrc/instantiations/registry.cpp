// Which grouped GEMM configuration serves which inputs (the launchers are in this folder's .cu).
#include <c10/util/Exception.h>

#include "../kernels/grouped_gemm_launch.h"

namespace torch_grouped::kernels {

#define TG_DECLARE(NAME) \
  void NAME(const GroupedGemmArgs&, int, cudaStream_t); \
  int NAME##_resident(int);
TG_DECLARE(grouped_gemm_bf16_128x128_bkmajor)
TG_DECLARE(grouped_gemm_bf16_128x128_bnmajor)
TG_DECLARE(grouped_gemm_bf16_128x256_bkmajor)
TG_DECLARE(grouped_gemm_bf16_128x256_bnmajor)
TG_DECLARE(grouped_gemm_bf16_128x256c2_bkmajor)
TG_DECLARE(grouped_gemm_bf16_128x256c2_bnmajor)
TG_DECLARE(grouped_gemm_bf16_128x256t_bkmajor)
TG_DECLARE(grouped_gemm_bf16_128x256t_bnmajor)
TG_DECLARE(grouped_gemm_bf16_64x128_bkmajor)
TG_DECLARE(grouped_gemm_bf16_64x128_bnmajor)
TG_DECLARE(grouped_gemm_f16_128x128_bkmajor)
TG_DECLARE(grouped_gemm_f16_128x128_bnmajor)
TG_DECLARE(grouped_gemm_f16_128x256_bkmajor)
TG_DECLARE(grouped_gemm_f16_128x256_bnmajor)
TG_DECLARE(grouped_gemm_f16_128x256c2_bkmajor)
TG_DECLARE(grouped_gemm_f16_128x256c2_bnmajor)
TG_DECLARE(grouped_gemm_f16_128x256t_bkmajor)
TG_DECLARE(grouped_gemm_f16_128x256t_bnmajor)
TG_DECLARE(grouped_gemm_f16_64x128_bkmajor)
TG_DECLARE(grouped_gemm_f16_64x128_bnmajor)
TG_DECLARE(grouped_gemm_tf32_128x128_bkmajor)
TG_DECLARE(grouped_gemm_bf16_128x128_kgrouped)
TG_DECLARE(grouped_gemm_bf16_128x256_kgrouped)
TG_DECLARE(grouped_gemm_f16_128x128_kgrouped)
TG_DECLARE(grouped_gemm_f16_128x256_kgrouped)
TG_DECLARE(grouped_gemm_bf16_128x256c2_kgrouped)
TG_DECLARE(grouped_gemm_f16_128x256c2_kgrouped)
TG_DECLARE(rank2k_bf16_128x128)
TG_DECLARE(rank2k_f16_128x128)
TG_DECLARE(rank2k_bf16_128x128c2)
TG_DECLARE(rank2k_f16_128x128c2)
TG_DECLARE(rank2k_streamk_bf16_128x128)
TG_DECLARE(rank2k_streamk_f16_128x128)
TG_DECLARE(rank2k_bf16_128x256)
TG_DECLARE(rank2k_f16_128x256)
TG_DECLARE(rank2k_streamk_bf16_128x256)
TG_DECLARE(rank2k_streamk_f16_128x256)
TG_DECLARE(rank2k_tf32_128x128)
TG_DECLARE(rank2k_streamk_tf32_128x128)
TG_DECLARE(streamk_bf16_128x128_bkmajor)
TG_DECLARE(streamk_bf16_128x128_bnmajor)
TG_DECLARE(streamk_f16_128x128_bkmajor)
TG_DECLARE(streamk_f16_128x128_bnmajor)
TG_DECLARE(streamk_bf16_128x256_bkmajor)
TG_DECLARE(streamk_bf16_128x256_bnmajor)
TG_DECLARE(streamk_f16_128x256_bkmajor)
TG_DECLARE(streamk_f16_128x256_bnmajor)
TG_DECLARE(streamk_bf16_128x128c2_bkmajor)
TG_DECLARE(streamk_bf16_128x128c2_bnmajor)
TG_DECLARE(streamk_bf16_128x256c2_bkmajor)
TG_DECLARE(streamk_bf16_128x256c2_bnmajor)
TG_DECLARE(streamk_f16_128x128c2_bkmajor)
TG_DECLARE(streamk_f16_128x128c2_bnmajor)
TG_DECLARE(streamk_f16_128x256c2_bkmajor)
TG_DECLARE(streamk_f16_128x256c2_bnmajor)
TG_DECLARE(streamk_bf16_128x256_bkmajor_tmastore)
TG_DECLARE(streamk_bf16_128x256_bnmajor_tmastore)
TG_DECLARE(streamk_f16_128x256_bkmajor_tmastore)
TG_DECLARE(streamk_f16_128x256_bnmajor_tmastore)
TG_DECLARE(streamk_bf16_192x128_bkmajor)
TG_DECLARE(streamk_bf16_192x128_bnmajor)
TG_DECLARE(streamk_f16_192x128_bkmajor)
TG_DECLARE(streamk_f16_192x128_bnmajor)
TG_DECLARE(streamk_tf32_128x128_bkmajor)
TG_DECLARE(streamk_bf16_128x128_bkmajor_rowcopy)
TG_DECLARE(streamk_bf16_128x128_bnmajor_rowcopy)
TG_DECLARE(streamk_f16_128x128_bkmajor_rowcopy)
TG_DECLARE(streamk_f16_128x128_bnmajor_rowcopy)
TG_DECLARE(streamk_bf16_128x256_bkmajor_rowcopy)
TG_DECLARE(streamk_bf16_128x256_bnmajor_rowcopy)
TG_DECLARE(streamk_f16_128x256_bkmajor_rowcopy)
TG_DECLARE(streamk_f16_128x256_bnmajor_rowcopy)
TG_DECLARE(streamk_bf16_64x64_bkmajor)
TG_DECLARE(streamk_bf16_64x64_bnmajor)
TG_DECLARE(streamk_f16_64x64_bkmajor)
TG_DECLARE(streamk_f16_64x64_bnmajor)
TG_DECLARE(streamk_bf16_64x64_bkmajor_rowcopy)
TG_DECLARE(streamk_bf16_64x64_bnmajor_rowcopy)
TG_DECLARE(streamk_f16_64x64_bkmajor_rowcopy)
TG_DECLARE(streamk_f16_64x64_bnmajor_rowcopy)
TG_DECLARE(streamk_bf16_128x128_amajor)
TG_DECLARE(streamk_bf16_128x256_amajor)
TG_DECLARE(streamk_f16_128x128_amajor)
TG_DECLARE(streamk_f16_128x256_amajor)
#undef TG_DECLARE

namespace {

struct Entry {
  GroupedGemmKernel n_major, k_major;  // the same tiles, B N-major and K-major
};
// One configuration of input kind P (bf16, f16): tiles, cluster size, TMA-store epilogue, and the
// name suffix of its instantiations (grouped_gemm_<P>_<NAME>_bnmajor / _bkmajor).
#define TG_ENTRY(P, M, N, C, T, NAME)                                                                  \
  {{grouped_gemm_##P##_##NAME##_bnmajor, M, N, C, grouped_gemm_##P##_##NAME##_bnmajor_resident, T},    \
   {grouped_gemm_##P##_##NAME##_bkmajor, M, N, C, grouped_gemm_##P##_##NAME##_bkmajor_resident, T}}
// The kernels that exist, the same for both input kinds.
// (No clustered kernel with TMA stores: opt-in only, and slower than the clustered one without on
// every list and MoE case timed, H100, sessions 8 and 32; four sm90 instantiations of CI time.)
#define TG_TABLE(P)                                                                                    \
  {TG_ENTRY(P, 128, 128, 1, false, 128x128), TG_ENTRY(P, 128, 256, 1, false, 128x256),                  \
   TG_ENTRY(P, 128, 256, 2, false, 128x256c2), TG_ENTRY(P, 128, 256, 1, true, 128x256t),                \
   TG_ENTRY(P, 64, 128, 1, false, 64x128)}
const Entry kBFloat16[] = TG_TABLE(bf16);
const Entry kHalf[] = TG_TABLE(f16);
#undef TG_TABLE
#undef TG_ENTRY

}  // namespace

GroupedGemmKernel grouped_gemm_kernel(InputKind input, int tile_m, int tile_n, bool b_k_major, int cluster_m,
                                      bool tma_store) {
  if (input == InputKind::TF32) {
    TORCH_INTERNAL_ASSERT(tile_m == 128 && tile_n == 128 && b_k_major && cluster_m == 1 && !tma_store,
                          "grouped GEMM TF32: 128x128 tiles, B K-major, no clusters or TMA stores only");
    return {grouped_gemm_tf32_128x128_bkmajor, 128, 128, 1, grouped_gemm_tf32_128x128_bkmajor_resident, false};
  }
  const Entry* table = input == InputKind::BFloat16 ? kBFloat16 : kHalf;
  for (int i = 0; i < int(sizeof(kBFloat16) / sizeof(Entry)); ++i) {
    const GroupedGemmKernel& k = table[i].n_major;
    if (k.tile_m == tile_m && k.tile_n == tile_n && k.cluster_m == cluster_m && k.tma_store == tma_store)
      return b_k_major ? table[i].k_major : k;
  }
  TORCH_INTERNAL_ASSERT(false, "grouped GEMM: no kernel with ", tile_m, "x", tile_n, " tiles in clusters of ", cluster_m,
                        tma_store ? " with TMA stores" : "");
  return {};
}

GroupedGemmKernel k_grouped_kernel(InputKind input, int tile_m, int tile_n, int cluster_m) {
#define TG_K_GROUPED(P, M, N, C, NAME) \
  GroupedGemmKernel{grouped_gemm_##P##_##NAME##_kgrouped, M, N, C, grouped_gemm_##P##_##NAME##_kgrouped_resident, false}
#define TG_K_GROUPED_TABLE(P) \
  {TG_K_GROUPED(P, 128, 128, 1, 128x128), TG_K_GROUPED(P, 128, 256, 1, 128x256), TG_K_GROUPED(P, 128, 256, 2, 128x256c2)}
  static const GroupedGemmKernel bf16[] = TG_K_GROUPED_TABLE(bf16), f16[] = TG_K_GROUPED_TABLE(f16);
#undef TG_K_GROUPED_TABLE
#undef TG_K_GROUPED
  const GroupedGemmKernel* table = input == InputKind::BFloat16 ? bf16 : f16;
  for (int i = 0; i < int(sizeof(bf16) / sizeof(bf16[0])); ++i) {
    const GroupedGemmKernel& k = table[i];
    if (k.tile_m == tile_m && k.tile_n == tile_n && k.cluster_m == cluster_m) return k;
  }
  TORCH_INTERNAL_ASSERT(false, "K-grouped GEMM: no kernel with ", tile_m, "x", tile_n, " tiles in clusters of ", cluster_m);
  return {};
}

GroupedGemmKernel rank2k_kernel(InputKind input, bool streamk, int cluster_m, int tile_n) {
  if (input == InputKind::TF32) {
    TORCH_INTERNAL_ASSERT(tile_n == 128 && cluster_m == 1, "Rank2K TF32: 128x128 tiles without clusters only");
    return streamk ? GroupedGemmKernel{rank2k_streamk_tf32_128x128, 128, 128, 1, rank2k_streamk_tf32_128x128_resident, false}
                   : GroupedGemmKernel{rank2k_tf32_128x128, 128, 128, 1, rank2k_tf32_128x128_resident, false};
  }
  const bool bf16 = input == InputKind::BFloat16;
  if (tile_n == 256) {
    // Both maps serve both roles: 128-row boxes, the 256-row role in two.
    TORCH_INTERNAL_ASSERT(cluster_m == 1, "Rank2K: no 128x256 kernel in clusters of ", cluster_m);
    if (streamk) {
      return bf16 ? GroupedGemmKernel{rank2k_streamk_bf16_128x256, 128, 256, 1, rank2k_streamk_bf16_128x256_resident, false, 128, 128, true}
                  : GroupedGemmKernel{rank2k_streamk_f16_128x256, 128, 256, 1, rank2k_streamk_f16_128x256_resident, false, 128, 128, true};
    }
    return bf16 ? GroupedGemmKernel{rank2k_bf16_128x256, 128, 256, 1, rank2k_bf16_128x256_resident, false, 128, 128, true}
                : GroupedGemmKernel{rank2k_f16_128x256, 128, 256, 1, rank2k_f16_128x256_resident, false, 128, 128, true};
  }
  TORCH_INTERNAL_ASSERT(tile_n == 128, "Rank2K: no kernel with 128x", tile_n, " tiles");
  if (streamk) {
    return bf16 ? GroupedGemmKernel{rank2k_streamk_bf16_128x128, 128, 128, 1, rank2k_streamk_bf16_128x128_resident, false}
                : GroupedGemmKernel{rank2k_streamk_f16_128x128, 128, 128, 1, rank2k_streamk_f16_128x128_resident, false};
  }
  if (cluster_m == 2) {
    return bf16 ? GroupedGemmKernel{rank2k_bf16_128x128c2, 128, 128, 2, rank2k_bf16_128x128c2_resident, false, 64}
                : GroupedGemmKernel{rank2k_f16_128x128c2, 128, 128, 2, rank2k_f16_128x128c2_resident, false, 64};
  }
  TORCH_INTERNAL_ASSERT(cluster_m == 1, "Rank2K: no kernel in clusters of ", cluster_m);
  return bf16 ? GroupedGemmKernel{rank2k_bf16_128x128, 128, 128, 1, rank2k_bf16_128x128_resident, false}
              : GroupedGemmKernel{rank2k_f16_128x128, 128, 128, 1, rank2k_f16_128x128_resident, false};
}

// The clustered Stream-K kernels: bf16 and fp16, 128 x 128 or 128 x 256 halves, B either way
// (K-major B's map has boxes of a CTA's half tile: streamk_mm encodes it so); none for TF32.
bool streamk_cluster_kernel_exists(InputKind input, int tile_n) {
  return input != InputKind::TF32 && (tile_n == 128 || tile_n == 256);
}

namespace {
struct ClusteredStreamK {
  GroupedGemmLauncher launch;
  int (*resident)(int device);
};
// By [fp16][B K-major][128 x 256 halves].
const ClusteredStreamK& clustered_streamk(InputKind input, bool b_k_major, int tile_n) {
#define TG_CLUSTERED(NAME) ClusteredStreamK{NAME, NAME##_resident}
  static const ClusteredStreamK table[2][2][2] = {
      {{TG_CLUSTERED(streamk_bf16_128x128c2_bnmajor), TG_CLUSTERED(streamk_bf16_128x256c2_bnmajor)},
       {TG_CLUSTERED(streamk_bf16_128x128c2_bkmajor), TG_CLUSTERED(streamk_bf16_128x256c2_bkmajor)}},
      {{TG_CLUSTERED(streamk_f16_128x128c2_bnmajor), TG_CLUSTERED(streamk_f16_128x256c2_bnmajor)},
       {TG_CLUSTERED(streamk_f16_128x128c2_bkmajor), TG_CLUSTERED(streamk_f16_128x256c2_bkmajor)}}};
#undef TG_CLUSTERED
  TORCH_INTERNAL_ASSERT(streamk_cluster_kernel_exists(input, tile_n), "Stream-K: no clustered kernel with 128x",
                        tile_n, " tiles for these inputs");
  return table[input == InputKind::Half][b_k_major][tile_n == 256];
}
}  // namespace

int streamk_cluster_resident(InputKind input, bool b_k_major, int tile_n, int device) {
  return clustered_streamk(input, b_k_major, tile_n).resident(device);
}

GroupedGemmLauncher streamk_kernel(InputKind input, bool b_k_major, int tile_m, int tile_n, bool tma_store,
                                   bool row_copies, int cluster_m) {
  if (tile_m == 192) {
    TORCH_INTERNAL_ASSERT(input != InputKind::TF32 && tile_n == 128 && !tma_store && !row_copies && cluster_m == 1,
                          "Stream-K: 192-row tiles only 192x128, bf16 or fp16, without variants or clusters");
    if (input == InputKind::BFloat16) return b_k_major ? streamk_bf16_192x128_bkmajor : streamk_bf16_192x128_bnmajor;
    return b_k_major ? streamk_f16_192x128_bkmajor : streamk_f16_192x128_bnmajor;
  }
  if (tile_m == kStreamKSmallTile) {
    TORCH_INTERNAL_ASSERT(input != InputKind::TF32 && tile_n == kStreamKSmallTile && !tma_store && cluster_m == 1,
                          "Stream-K: 64-row tiles only 64x64, bf16 or fp16, without TMA stores or clusters");
    const bool bf16 = input == InputKind::BFloat16;
    if (row_copies) {
      if (bf16) return b_k_major ? streamk_bf16_64x64_bkmajor_rowcopy : streamk_bf16_64x64_bnmajor_rowcopy;
      return b_k_major ? streamk_f16_64x64_bkmajor_rowcopy : streamk_f16_64x64_bnmajor_rowcopy;
    }
    if (bf16) return b_k_major ? streamk_bf16_64x64_bkmajor : streamk_bf16_64x64_bnmajor;
    return b_k_major ? streamk_f16_64x64_bkmajor : streamk_f16_64x64_bnmajor;
  }
  TORCH_INTERNAL_ASSERT(tile_m == kStreamKTileM, "Stream-K: no kernel with ", tile_m, "-row tiles");
  if (cluster_m != 1) {
    TORCH_INTERNAL_ASSERT(cluster_m == 2 && !tma_store && !row_copies, "Stream-K: no kernel in clusters of ", cluster_m,
                          tma_store ? " with TMA stores" : "", row_copies ? " with row copies" : "");
    return clustered_streamk(input, b_k_major, tile_n).launch;
  }
  if (input == InputKind::TF32) {
    TORCH_INTERNAL_ASSERT(b_k_major && tile_n == 128 && !tma_store && !row_copies,
                          "Stream-K TF32: 128x128 tiles, B K-major, the threads' stores, no row copies only");
    return streamk_tf32_128x128_bkmajor;
  }
  const bool bf16 = input == InputKind::BFloat16;
  if (row_copies) {
    TORCH_INTERNAL_ASSERT((tile_n == 128 || tile_n == 256) && !tma_store,
                          "Stream-K: row copies only with 128x128 or 128x256 tiles and the threads' stores");
    if (tile_n == 256) {
      if (bf16) return b_k_major ? streamk_bf16_128x256_bkmajor_rowcopy : streamk_bf16_128x256_bnmajor_rowcopy;
      return b_k_major ? streamk_f16_128x256_bkmajor_rowcopy : streamk_f16_128x256_bnmajor_rowcopy;
    }
    if (bf16) return b_k_major ? streamk_bf16_128x128_bkmajor_rowcopy : streamk_bf16_128x128_bnmajor_rowcopy;
    return b_k_major ? streamk_f16_128x128_bkmajor_rowcopy : streamk_f16_128x128_bnmajor_rowcopy;
  }
  if (tma_store) {
    TORCH_INTERNAL_ASSERT(tile_n == 256, "Stream-K: TMA stores only with 128x256 tiles");
    if (bf16) return b_k_major ? streamk_bf16_128x256_bkmajor_tmastore : streamk_bf16_128x256_bnmajor_tmastore;
    return b_k_major ? streamk_f16_128x256_bkmajor_tmastore : streamk_f16_128x256_bnmajor_tmastore;
  }
  if (tile_n == 128) {
    if (bf16) return b_k_major ? streamk_bf16_128x128_bkmajor : streamk_bf16_128x128_bnmajor;
    return b_k_major ? streamk_f16_128x128_bkmajor : streamk_f16_128x128_bnmajor;
  }
  TORCH_INTERNAL_ASSERT(tile_n == 256, "Stream-K: no kernel with 128x", tile_n, " tiles");
  if (bf16) return b_k_major ? streamk_bf16_128x256_bkmajor : streamk_bf16_128x256_bnmajor;
  return b_k_major ? streamk_f16_128x256_bkmajor : streamk_f16_128x256_bnmajor;
}

GroupedGemmLauncher streamk_a_m_major_kernel(InputKind input, int tile_n) {
  TORCH_INTERNAL_ASSERT(input != InputKind::TF32 && (tile_n == 128 || tile_n == 256),
                        "Stream-K with A M-major: 128x128 or 128x256 tiles, bf16 or fp16 only");
  if (input == InputKind::BFloat16) return tile_n == 256 ? streamk_bf16_128x256_amajor : streamk_bf16_128x128_amajor;
  return tile_n == 256 ? streamk_f16_128x256_amajor : streamk_f16_128x128_amajor;
}

}  // namespace torch_grouped::kernels
