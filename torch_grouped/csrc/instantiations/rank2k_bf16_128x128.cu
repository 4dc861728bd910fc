// Grouped Rank2K (syr2k), bf16 inputs, 128x128 tiles.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(rank2k_bf16_128x128, cutlass::bfloat16_t, 128, 128, true, Rank2K)
