// Grouped GEMM of the K-grouped form (grouped_mm 2-D x 2-D), bf16 inputs, 128x256 tiles, A M-major, B N-major, TMA-store epilogue.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_K_GROUPED_GEMM_TMA_STORE(grouped_gemm_bf16_128x256t_kgrouped, cutlass::bfloat16_t, 128, 256)
