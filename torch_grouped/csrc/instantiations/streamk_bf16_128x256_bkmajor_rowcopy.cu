// Stream-K matmul, bf16 inputs, 128x256 tiles, B K-major, operands TMA cannot address read by row copies.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_ROW_COPY_GEMM(streamk_bf16_128x256_bkmajor_rowcopy, cutlass::bfloat16_t, 128, 256, true)
