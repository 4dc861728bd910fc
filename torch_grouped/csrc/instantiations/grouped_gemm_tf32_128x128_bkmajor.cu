// Grouped GEMM (gemm's list API; grouped_mm's forms but the K-grouped one), fp32 inputs read through
// TF32 WGMMA (fp32 accumulators), 128x128 tiles, B K-major (TF32 WGMMA reads both operands
// K-major). The fp32-accurate mode runs it on operands split into TF32 pairs (3xTF32,
// cuda/tf32_operands.h).
#include "../kernels/grouped_gemm_sm90.cuh"

TORCH_GROUPED_DEFINE_GROUPED_GEMM(grouped_gemm_tf32_128x128_bkmajor, cutlass::tfloat32_t, 128, 128, true, Grouped)
