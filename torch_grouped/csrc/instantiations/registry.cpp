// Which grouped GEMM configuration serves which inputs (the launchers are in this folder's .cu).
#include <c10/util/Exception.h>

#include "../kernels/grouped_gemm_launch.h"

namespace torch_grouped::kernels {

#define TG_DECLARE(NAME) void NAME(const GroupedGemmArgs&, int, cudaStream_t);
TG_DECLARE(grouped_gemm_bf16_n128_bkmajor)
TG_DECLARE(grouped_gemm_bf16_n128_bnmajor)
TG_DECLARE(grouped_gemm_bf16_n256_bkmajor)
TG_DECLARE(grouped_gemm_bf16_n256_bnmajor)
TG_DECLARE(grouped_gemm_f16_n128_bkmajor)
TG_DECLARE(grouped_gemm_f16_n128_bnmajor)
TG_DECLARE(grouped_gemm_f16_n256_bkmajor)
TG_DECLARE(grouped_gemm_f16_n256_bnmajor)
#undef TG_DECLARE

GroupedGemmKernel grouped_gemm_kernel(InputKind input, int tile_n, bool b_k_major) {
  // [input][tile_n == 256][b_k_major]
  static constexpr GroupedGemmLauncher table[2][2][2] = {
      {{grouped_gemm_bf16_n128_bnmajor, grouped_gemm_bf16_n128_bkmajor},
       {grouped_gemm_bf16_n256_bnmajor, grouped_gemm_bf16_n256_bkmajor}},
      {{grouped_gemm_f16_n128_bnmajor, grouped_gemm_f16_n128_bkmajor},
       {grouped_gemm_f16_n256_bnmajor, grouped_gemm_f16_n256_bkmajor}}};
  TORCH_INTERNAL_ASSERT(tile_n == 128 || tile_n == 256, "grouped GEMM: no kernel with tile_n ", tile_n);
  return {table[static_cast<int>(input)][tile_n == 256][b_k_major], 128, tile_n};
}

}  // namespace torch_grouped::kernels
