// Grouped GEMM of the K-grouped form (grouped_mm 2-D x 2-D), f16 inputs, 128x256 tiles, A M-major, B N-major,
// the tiles stored by store warps (store_warps.cuh) while the consumers go on.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_K_GROUPED_GEMM_STORE_WARPS(grouped_gemm_f16_128x256s_kgrouped, cutlass::half_t, 128, 256)
