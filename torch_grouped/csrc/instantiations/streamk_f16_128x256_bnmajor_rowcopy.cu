// Stream-K matmul, f16 inputs, 128x256 tiles, B N-major, operands TMA cannot address read by row copies.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_ROW_COPY_GEMM(streamk_f16_128x256_bnmajor_rowcopy, cutlass::half_t, 128, 256, false)
