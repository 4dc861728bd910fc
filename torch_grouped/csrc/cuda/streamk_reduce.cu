// The separate Stream-K fixup kernel. A block owns 128 consecutive floats of one cut tile's
// partials (32 of their float4s: four elements of each of 32 consumer threads, sched::PartialQuad)
// and has one warp per part of the tile's segments (sched::SeparateFixup): lane l of warp w sums
// float4 l over the segments of part w in K order, 16-byte loads from L2; warp 0 then adds the
// parts in order and stores the four elements, two adjacent ones in each of two rows. A tile of
// 128 x 128 spreads over 128 blocks, so a 132-segment fixup reads its 8.6 MB of partials on every
// SM at once, where the last arriving CTA read them one after another. It launches as a
// programmatic dependent of the matmul kernel (kernels/dependent_launch.cuh): its blocks take the
// SMs the matmul's CTAs leave and wait there for the matmul's partials, rather than being launched
// once the matmul is done.
#include <c10/cuda/CUDAException.h>

#include "../kernels/dependent_launch.cuh"
#include "../kernels/float_convert.cuh"
#include "streamk_reduce.h"

namespace torch_grouped {
namespace {

constexpr int kElementsPerBlock = 128;  // 32 lanes x 4
constexpr int kWarps = sched::SeparateFixup::kParts;

__device__ __forceinline__ void add(float4& s, const float4& v) { s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w; }

template <class Out>
__global__ void __launch_bounds__(32 * kWarps) streamk_reduce_kernel(const sched::StreamKPlan plan, const float* workspace,
                                                                      int tile_m, int tile_n, StreamKOutput out) {
  __shared__ float4 part_sums[kWarps][32];
  kernels::wait_for_prior_grid();  // the matmul's partials
  kernels::allow_dependent_launch();
  const int64_t tile_floats = int64_t(tile_m) * tile_n, blocks_per_tile = tile_floats / kElementsPerBlock;
  const int64_t tile = blockIdx.x / blocks_per_tile;
  const int64_t segments = plan.segments(tile);
  if (segments < 2) return;  // a whole tile: the matmul kernel stored it
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t element = (blockIdx.x % blocks_per_tile) * kElementsPerBlock + lane * 4;  // in the tile

  const int64_t first = sched::SeparateFixup::part_begin(segments, warp);
  const int64_t end = sched::SeparateFixup::part_begin(segments, warp + 1);
  // Segments after the first have evenly spaced slots (StreamKPlan::segment_slot_stride).
  const int64_t slot1 = plan.segment_slot(tile, 1), stride = plan.segment_slot_stride(tile);
  const float* const base = workspace + element;
  auto partial = [&](int64_t j) {
    const int64_t slot = j == 0 ? plan.segment_slot(tile, 0) : slot1 + (j - 1) * stride;
    return __ldcg(reinterpret_cast<const float4*>(base + slot * tile_floats));
  };
  float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
  if (first < end) {
    sum = partial(first);
#pragma unroll 4
    for (int64_t j = first + 1; j < end; ++j) add(sum, partial(j));
  }
  part_sums[warp][lane] = sum;
  __syncthreads();
  if (warp != 0) return;
  float4 total = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int w = 0; w < kWarps; ++w)  // the non-empty parts, in order (as the CPU path adds them)
    if (sched::SeparateFixup::part_begin(segments, w) < sched::SeparateFixup::part_begin(segments, w + 1))
      add(total, part_sums[w][lane]);

  int64_t tile_row, tile_col;  // of the quad's first element
  sched::PartialQuad::place(element / 4, tile_n, tile_row, tile_col);
  const int64_t row = (tile / plan.tiles_n) * tile_m + tile_row;
  const int64_t col = (tile % plan.tiles_n) * tile_n + tile_col;
  const float pairs[2][2] = {{total.x, total.y}, {total.z, total.w}};  // rows row and row + 8
  for (int half = 0; half < 2; ++half) {
    const int64_t r = row + 8 * half;
    if (r >= out.m || col >= out.n) continue;
    Out* dst = static_cast<Out*>(out.data) + r * out.ldc + col;
    if (col + 2 <= out.n && reinterpret_cast<uintptr_t>(dst) % (2 * sizeof(Out)) == 0) {
      struct alignas(2 * sizeof(Out)) Two { Out v[2]; } two;
      two.v[0] = kernels::from_float<Out>(pairs[half][0]), two.v[1] = kernels::from_float<Out>(pairs[half][1]);
      *reinterpret_cast<Two*>(dst) = two;
    } else {
      for (int e = 0; e < 2 && col + e < out.n; ++e) dst[e] = kernels::from_float<Out>(pairs[half][e]);
    }
  }
}

}  // namespace

void launch_streamk_reduce(const sched::StreamKPlan& plan, const float* workspace, int tile_m, int tile_n,
                           const StreamKOutput& out, cudaStream_t stream) {
  // The cut tiles: the Stream-K ones, or every tile of split-K (the decompositions never mix).
  const int64_t candidates = plan.sk_tiles > 0 ? plan.sk_tiles : (plan.splits > 1 ? plan.tiles() : 0);
  const int64_t blocks = candidates * (int64_t(tile_m) * tile_n / kElementsPerBlock);
  if (blocks == 0) return;
  TORCH_CHECK(blocks < (int64_t{1} << 31), "streamk_mm: too many cut tiles for the fixup kernel");
  cudaLaunchAttribute dependent = kernels::dependent_launch_attribute();
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks)), config.blockDim = dim3(32 * kWarps), config.stream = stream;
  config.attrs = &dependent, config.numAttrs = kernels::dependent_launch_enabled() ? 1 : 0;
  switch (out.kind) {
    case kernels::OutKind::BFloat16:
      C10_CUDA_CHECK(cudaLaunchKernelEx(&config, streamk_reduce_kernel<__nv_bfloat16>, plan, workspace, tile_m, tile_n, out));
      break;
    case kernels::OutKind::Half:
      C10_CUDA_CHECK(cudaLaunchKernelEx(&config, streamk_reduce_kernel<__half>, plan, workspace, tile_m, tile_n, out));
      break;
    case kernels::OutKind::Float:  // fp32 inputs through TF32
      C10_CUDA_CHECK(cudaLaunchKernelEx(&config, streamk_reduce_kernel<float>, plan, workspace, tile_m, tile_n, out));
      break;
  }
}

}  // namespace torch_grouped
