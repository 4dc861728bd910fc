// Grouped Rank2K (syr2k), bf16 inputs, 128x256 tiles (256 x 256 macro tiles of the triangle walk,
// two tiles each; both maps in 128-row boxes).
// The epilogue through TMA stores where the host maps the one problem's output (args.c_map_set).
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_TMA_STORE(rank2k_bf16_128x256, cutlass::bfloat16_t, 128, 256, true, Rank2K)
