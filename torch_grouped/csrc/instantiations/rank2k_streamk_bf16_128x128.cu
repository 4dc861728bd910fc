// syr2k of one problem with few triangle tiles: the Rank2K kernel over Stream-K work units, bf16 inputs.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(rank2k_streamk_bf16_128x128, cutlass::bfloat16_t, 128, 128, true, Rank2KStreamK)
