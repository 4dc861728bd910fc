// Stream-K matmul, bf16 inputs, 192x128 tiles (three consumer warpgroups), B N-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(streamk_bf16_192x128_bnmajor, cutlass::bfloat16_t, 192, 128, false, StreamK)
