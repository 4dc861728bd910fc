// Grouped GEMM, bf16 inputs, 128x256 tiles in 2 x 1 clusters (B multicast), B N-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_CLUSTER(grouped_gemm_bf16_128x256c2_bnmajor, cutlass::bfloat16_t, 128, 256, false, Grouped, 2)
