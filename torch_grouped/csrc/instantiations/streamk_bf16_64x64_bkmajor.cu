// Stream-K matmul, bf16 inputs, 64x64 tiles (one consumer warpgroup, two CTAs an SM: the small
// problems' tile, many CTAs for a small output), B K-major.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(streamk_bf16_64x64_bkmajor, cutlass::bfloat16_t, 64, 64, true, StreamK)
