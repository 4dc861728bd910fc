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
TG_DECLARE(grouped_gemm_bf16_128x256c2t_bkmajor)
TG_DECLARE(grouped_gemm_bf16_128x256c2t_bnmajor)
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
TG_DECLARE(grouped_gemm_f16_128x256c2t_bkmajor)
TG_DECLARE(grouped_gemm_f16_128x256c2t_bnmajor)
TG_DECLARE(grouped_gemm_f16_64x128_bkmajor)
TG_DECLARE(grouped_gemm_f16_64x128_bnmajor)
TG_DECLARE(rank2k_bf16_128x128)
TG_DECLARE(rank2k_f16_128x128)
TG_DECLARE(rank2k_streamk_bf16_128x128)
TG_DECLARE(rank2k_streamk_f16_128x128)
TG_DECLARE(streamk_bf16_128x128_bkmajor)
TG_DECLARE(streamk_bf16_128x128_bnmajor)
TG_DECLARE(streamk_f16_128x128_bkmajor)
TG_DECLARE(streamk_f16_128x128_bnmajor)
TG_DECLARE(streamk_bf16_128x256_bkmajor)
TG_DECLARE(streamk_bf16_128x256_bnmajor)
TG_DECLARE(streamk_f16_128x256_bkmajor)
TG_DECLARE(streamk_f16_128x256_bnmajor)
TG_DECLARE(streamk_bf16_128x256_bkmajor_tmastore)
TG_DECLARE(streamk_bf16_128x256_bnmajor_tmastore)
TG_DECLARE(streamk_f16_128x256_bkmajor_tmastore)
TG_DECLARE(streamk_f16_128x256_bnmajor_tmastore)
#undef TG_DECLARE

namespace {

struct Entry {
  GroupedGemmKernel n_major, k_major;  // the same tiles, B N-major and K-major
};
#define TG_ENTRY(M, N, C, T, NAME_N, NAME_K) \
  {{NAME_N, M, N, C, NAME_N##_resident, T}, {NAME_K, M, N, C, NAME_K##_resident, T}}
// Per input kind, the kernels that exist: tiles, cluster size, TMA-store epilogue.
const Entry kBFloat16[] = {
    TG_ENTRY(128, 128, 1, false, grouped_gemm_bf16_128x128_bnmajor, grouped_gemm_bf16_128x128_bkmajor),
    TG_ENTRY(128, 256, 1, false, grouped_gemm_bf16_128x256_bnmajor, grouped_gemm_bf16_128x256_bkmajor),
    TG_ENTRY(128, 256, 2, false, grouped_gemm_bf16_128x256c2_bnmajor, grouped_gemm_bf16_128x256c2_bkmajor),
    TG_ENTRY(128, 256, 1, true, grouped_gemm_bf16_128x256t_bnmajor, grouped_gemm_bf16_128x256t_bkmajor),
    TG_ENTRY(128, 256, 2, true, grouped_gemm_bf16_128x256c2t_bnmajor, grouped_gemm_bf16_128x256c2t_bkmajor),
    TG_ENTRY(64, 128, 1, false, grouped_gemm_bf16_64x128_bnmajor, grouped_gemm_bf16_64x128_bkmajor)};
const Entry kHalf[] = {
    TG_ENTRY(128, 128, 1, false, grouped_gemm_f16_128x128_bnmajor, grouped_gemm_f16_128x128_bkmajor),
    TG_ENTRY(128, 256, 1, false, grouped_gemm_f16_128x256_bnmajor, grouped_gemm_f16_128x256_bkmajor),
    TG_ENTRY(128, 256, 2, false, grouped_gemm_f16_128x256c2_bnmajor, grouped_gemm_f16_128x256c2_bkmajor),
    TG_ENTRY(128, 256, 1, true, grouped_gemm_f16_128x256t_bnmajor, grouped_gemm_f16_128x256t_bkmajor),
    TG_ENTRY(128, 256, 2, true, grouped_gemm_f16_128x256c2t_bnmajor, grouped_gemm_f16_128x256c2t_bkmajor),
    TG_ENTRY(64, 128, 1, false, grouped_gemm_f16_64x128_bnmajor, grouped_gemm_f16_64x128_bkmajor)};
#undef TG_ENTRY

}  // namespace

GroupedGemmKernel grouped_gemm_kernel(InputKind input, int tile_m, int tile_n, bool b_k_major, int cluster_m,
                                      bool tma_store) {
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

GroupedGemmKernel rank2k_kernel(InputKind input, bool streamk) {
  if (input == InputKind::BFloat16) {
    return streamk ? GroupedGemmKernel{rank2k_streamk_bf16_128x128, 128, 128, 1, rank2k_streamk_bf16_128x128_resident, false}
                   : GroupedGemmKernel{rank2k_bf16_128x128, 128, 128, 1, rank2k_bf16_128x128_resident, false};
  }
  return streamk ? GroupedGemmKernel{rank2k_streamk_f16_128x128, 128, 128, 1, rank2k_streamk_f16_128x128_resident, false}
                 : GroupedGemmKernel{rank2k_f16_128x128, 128, 128, 1, rank2k_f16_128x128_resident, false};
}

GroupedGemmLauncher streamk_kernel(InputKind input, bool b_k_major, int tile_n, bool tma_store) {
  const bool bf16 = input == InputKind::BFloat16;
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

}  // namespace torch_grouped::kernels
