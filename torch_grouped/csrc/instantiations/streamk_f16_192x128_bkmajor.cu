// Stream-K matmul, fp16 inputs, 192x128 tiles (three consumer warpgroups), B K-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(streamk_f16_192x128_bkmajor, cutlass::half_t, 192, 128, true, StreamK)
