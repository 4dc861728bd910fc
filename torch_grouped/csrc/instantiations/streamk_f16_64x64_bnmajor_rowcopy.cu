// Stream-K matmul, fp16 inputs, 64x64 tiles, B N-major, operands TMA cannot address read by row copies.
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_ROW_COPY_GEMM(streamk_f16_64x64_bnmajor_rowcopy, cutlass::half_t, 64, 64, false)
