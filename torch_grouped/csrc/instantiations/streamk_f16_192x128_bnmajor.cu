// Stream-K matmul, fp16 inputs, 192x128 tiles (three consumer warpgroups), B N-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(streamk_f16_192x128_bnmajor, cutlass::half_t, 192, 128, false, StreamK)
