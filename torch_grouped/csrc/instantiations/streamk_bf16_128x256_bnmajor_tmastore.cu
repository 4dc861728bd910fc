// Stream-K matmul, bf16 inputs, 128x256 tiles, B N-major, the epilogue through TMA stores (TORCH_GROUPED_TMA_STORE=1).
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_TMA_STORE(streamk_bf16_128x256_bnmajor_tmastore, cutlass::bfloat16_t, 128, 256, false, StreamK)
