// Stream-K matmul, f16 inputs, 128x256 tiles, B K-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(streamk_f16_128x256_bkmajor, cutlass::half_t, 128, 256, true, StreamK)
