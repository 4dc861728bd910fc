// Grouped Rank2K (syr2k), bf16 inputs, 64x64 tiles (two CTAs per SM): for triangles with too few
// 128x128 tiles to fill the GPU evenly.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(rank2k_bf16_64x64, cutlass::bfloat16_t, 64, 64, true, Rank2K)
