// Grouped GEMM of the K-grouped form (grouped_mm 2-D x 2-D), bf16 inputs, 64x256 tiles taken in turn
// by two consumer warpgroups (ping-pong), A M-major, B N-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_K_GROUPED_GEMM_PINGPONG(grouped_gemm_bf16_64x256p_kgrouped, cutlass::bfloat16_t, 256)
