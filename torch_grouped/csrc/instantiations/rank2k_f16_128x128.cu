// Grouped Rank2K (syr2k), f16 inputs, 128x128 tiles.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(rank2k_f16_128x128, cutlass::half_t, 128, 128, true, Rank2K)
