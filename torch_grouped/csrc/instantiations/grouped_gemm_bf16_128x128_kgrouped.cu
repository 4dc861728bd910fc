// Grouped GEMM of the K-grouped form (grouped_mm 2-D x 2-D), bf16 inputs, 128x128 tiles, A M-major, B N-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_K_GROUPED_GEMM(grouped_gemm_bf16_128x128_kgrouped, cutlass::bfloat16_t, 128, 128, 1)
