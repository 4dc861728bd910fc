// Grouped GEMM, f16 inputs, 128x256 tiles, B N-major, the epilogue through TMA stores (TORCH_GROUPED_TMA_STORE=1).
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM_TMA_STORE(grouped_gemm_f16_128x256t_bnmajor, cutlass::half_t, 128, 256, false, Grouped)
