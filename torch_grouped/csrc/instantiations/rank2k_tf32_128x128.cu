// Grouped Rank2K (syr2k), fp32 inputs read through TF32 WGMMA (fp32 accumulators and output),
// 128x128 tiles. syr2k's fp32-accurate mode runs it on operands split into TF32 pairs (3xTF32).
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(rank2k_tf32_128x128, cutlass::tfloat32_t, 128, 128, true, Rank2K)
