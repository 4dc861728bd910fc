// syr2k of one problem: the Rank2K kernel with 128x256 tiles over Stream-K work units, f16 inputs.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(rank2k_streamk_f16_128x256, cutlass::half_t, 128, 256, true, Rank2KStreamK)
