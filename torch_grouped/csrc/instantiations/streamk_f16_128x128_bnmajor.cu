// Stream-K matmul, f16 inputs, 128x128 tiles (for N <= 128), B N-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(streamk_f16_128x128_bnmajor, cutlass::half_t, 128, 128, false, StreamK)
