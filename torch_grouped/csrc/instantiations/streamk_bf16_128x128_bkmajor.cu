// Stream-K matmul, bf16 inputs, 128x128 tiles (for N <= 128), B K-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(streamk_bf16_128x128_bkmajor, cutlass::bfloat16_t, 128, 128, true, StreamK)
