// syr2k of one problem with few triangle tiles: the Rank2K kernel over Stream-K work units, f16 inputs.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(rank2k_streamk_f16_128x128, cutlass::half_t, 128, 128, true, Rank2KStreamK)
