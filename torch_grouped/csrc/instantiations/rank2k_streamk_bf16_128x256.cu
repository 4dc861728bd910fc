// syr2k of one problem: the Rank2K kernel with 128x256 tiles over Stream-K work units, bf16 inputs.
// The epilogue through TMA stores where the host maps the one problem's output (args.c_map_set).
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_TMA_STORE(rank2k_streamk_bf16_128x256, cutlass::bfloat16_t, 128, 256, true, Rank2KStreamK)
