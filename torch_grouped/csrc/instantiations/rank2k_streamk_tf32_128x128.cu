// syr2k of one problem: the Rank2K kernel over Stream-K work units, fp32 inputs through TF32
// WGMMA, 128x128 tiles.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(rank2k_streamk_tf32_128x128, cutlass::tfloat32_t, 128, 128, true, Rank2KStreamK)
