// Grouped GEMM, bf16 inputs, 128x256 tiles in 2 x 1 clusters (B multicast), B N-major, the epilogue
// through TMA stores (TORCH_GROUPED_CLUSTER=1 with TORCH_GROUPED_TMA_STORE=1).
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_CONFIG(grouped_gemm_bf16_128x256c2t_bnmajor, cutlass::bfloat16_t, 128, 256, false, Grouped, 2, true)
