// Which grouped GEMM configuration serves which inputs (the launchers are in this folder's .cu).
#include <c10/util/Exception.h>

#include "../kernels/grouped_gemm_launch.h"

namespace torch_grouped::kernels {

#define TG_DECLARE(NAME) void NAME(const GroupedGemmArgs&, int, cudaStream_t);
TG_DECLARE(grouped_gemm_bf16_128x128_bkmajor)
TG_DECLARE(grouped_gemm_bf16_128x128_bnmajor)
TG_DECLARE(grouped_gemm_bf16_128x256_bkmajor)
TG_DECLARE(grouped_gemm_bf16_128x256_bnmajor)
TG_DECLARE(grouped_gemm_bf16_64x128_bkmajor)
TG_DECLARE(grouped_gemm_bf16_64x128_bnmajor)
TG_DECLARE(grouped_gemm_f16_128x128_bkmajor)
TG_DECLARE(grouped_gemm_f16_128x128_bnmajor)
TG_DECLARE(grouped_gemm_f16_128x256_bkmajor)
TG_DECLARE(grouped_gemm_f16_128x256_bnmajor)
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
#undef TG_DECLARE

namespace {

struct Entry {
  int tile_m, tile_n;
  GroupedGemmLauncher n_major, k_major;
};
// Per input kind, the tiles that exist.
constexpr Entry kBFloat16[] = {
    {128, 128, grouped_gemm_bf16_128x128_bnmajor, grouped_gemm_bf16_128x128_bkmajor},
    {128, 256, grouped_gemm_bf16_128x256_bnmajor, grouped_gemm_bf16_128x256_bkmajor},
    {64, 128, grouped_gemm_bf16_64x128_bnmajor, grouped_gemm_bf16_64x128_bkmajor}};
constexpr Entry kHalf[] = {
    {128, 128, grouped_gemm_f16_128x128_bnmajor, grouped_gemm_f16_128x128_bkmajor},
    {128, 256, grouped_gemm_f16_128x256_bnmajor, grouped_gemm_f16_128x256_bkmajor},
    {64, 128, grouped_gemm_f16_64x128_bnmajor, grouped_gemm_f16_64x128_bkmajor}};

}  // namespace

GroupedGemmKernel grouped_gemm_kernel(InputKind input, int tile_m, int tile_n, bool b_k_major) {
  const Entry* table = input == InputKind::BFloat16 ? kBFloat16 : kHalf;
  for (int i = 0; i < 3; ++i) {
    if (table[i].tile_m == tile_m && table[i].tile_n == tile_n) {
      return {b_k_major ? table[i].k_major : table[i].n_major, tile_m, tile_n, tile_m == 64 ? 2 : 1};
    }
  }
  TORCH_INTERNAL_ASSERT(false, "grouped GEMM: no kernel with ", tile_m, "x", tile_n, " tiles");
  return {};
}

GroupedGemmLauncher rank2k_kernel(InputKind input, bool streamk) {
  if (input == InputKind::BFloat16) return streamk ? rank2k_streamk_bf16_128x128 : rank2k_bf16_128x128;
  return streamk ? rank2k_streamk_f16_128x128 : rank2k_f16_128x128;
}

GroupedGemmLauncher streamk_kernel(InputKind input, bool b_k_major, int tile_n) {
  const bool bf16 = input == InputKind::BFloat16;
  if (tile_n == 128) {
    if (bf16) return b_k_major ? streamk_bf16_128x128_bkmajor : streamk_bf16_128x128_bnmajor;
    return b_k_major ? streamk_f16_128x128_bkmajor : streamk_f16_128x128_bnmajor;
  }
  TORCH_INTERNAL_ASSERT(tile_n == 256, "Stream-K: no kernel with 128x", tile_n, " tiles");
  if (bf16) return b_k_major ? streamk_bf16_128x256_bkmajor : streamk_bf16_128x256_bnmajor;
  return b_k_major ? streamk_f16_128x256_bkmajor : streamk_f16_128x256_bnmajor;
}

}  // namespace torch_grouped::kernels
