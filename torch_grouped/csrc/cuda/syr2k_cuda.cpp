// CUDA path of syr2k: bf16/fp16/fp32 groups on Hopper run in the persistent Rank2K kernel, which
// walks only the `uplo` triangle's tiles (sched::Rank2KTiles) and writes every tile with its mirror;
// fp32 through TF32 WGMMA, fp32-accurate by default (3xTF32, cuda/tf32_operands.h). fp64 groups
// run the DMMA Rank2K kernel where measured faster (lists of small problems, cuda/dmma_cuda.h);
// otherwise they (and fp32 off Hopper) take cuBLAS ?syr2k (orders >= 1024) or two matmuls, each
// with a mirror kernel (cuda/syr2k_blas.h); everything else the portable composite.
#include <ATen/ATen.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "../common/checks.h"
#include "../common/streamk_plan_cache.h"
#include "../cpu/portable.h"
#include "../sched/group_order.h"
#include "../sched/rank2k_tile_choice.h"
#include "device_info.h"
#include "dmma_cuda.h"
#include "list_launch.h"
#include "list_outputs.h"
#include "operand_maps.h"
#include "staged_operands.h"
#include "streamk_cuda.h"
#include "syr2k_blas.h"
#include "syr2k_cuda.h"
#include "tf32_operands.h"

namespace torch_grouped {
namespace {

constexpr int kTile = 128;

// TORCH_GROUPED_SYR2K_SCHEDULER=gemm runs the same kernel over every tile of the square with the
// grouped GEMM walk (each tile written once, no mirror): the benchmark's measure of what the
// triangle scheduler gains.
bool gemm_scheduler() {
  const char* v = std::getenv("TORCH_GROUPED_SYR2K_SCHEDULER");
  return v != nullptr && std::strcmp(v, "gemm") == 0;
}

// TORCH_GROUPED_SYR2K_CLUSTER=1 runs the tile walks (not Stream-K's units) in 2 x 1 clusters:
// 256 x 128 pair tiles of the triangle, each CTA a 128 x 128 half, the B-role operand multicast
// (kernels::GroupedGemmConfig says why); 0 runs one CTA per tile. Unset (-1 here): clusters where
// sched::rank2k_clusters_pay says they save more than the waves they may add.
int forced_rank2k_cluster() {
  const char* v = std::getenv("TORCH_GROUPED_SYR2K_CLUSTER");
  if (v == nullptr || *v == '\0') return -1;
  TORCH_CHECK_VALUE(std::strcmp(v, "0") == 0 || std::strcmp(v, "1") == 0,
                    "TORCH_GROUPED_SYR2K_CLUSTER must be 0 or 1; got '", v, "'");
  return *v == '1' ? 2 : 1;
}

// TORCH_GROUPED_SYR2K_TILE=128x128 or 128x256 forces the tile (unset, 0 here: the one-problem call's
// model chooses, a list of problems runs 128 x 128). Only 128 x 128 tiles run in clusters, so
// TORCH_GROUPED_SYR2K_CLUSTER=1 with 128x256 is an error.
int forced_rank2k_tile_n() {
  const char* v = std::getenv("TORCH_GROUPED_SYR2K_TILE");
  if (v == nullptr || *v == '\0') return 0;
  TORCH_CHECK_VALUE(std::strcmp(v, "128x128") == 0 || std::strcmp(v, "128x256") == 0,
                    "TORCH_GROUPED_SYR2K_TILE must be 128x128 or 128x256; got '", v, "'");
  const int tile_n = v[4] == '1' ? 128 : 256;
  TORCH_CHECK_VALUE(tile_n == 128 || forced_rank2k_cluster() != 2,
                    "syr2k: TORCH_GROUPED_SYR2K_CLUSTER=1 runs 128x128 tiles only, but TORCH_GROUPED_SYR2K_TILE is ", v);
  return tile_n;
}

// The cluster size of the tile walk over problems of these orders (sched::rank2k_walk_cluster with
// this device's resident CTAs and clusters).
int rank2k_cluster(c10::ArrayRef<int64_t> orders, const sched::SymmetricTiles& tiles, kernels::InputKind input,
                   int device) {
  // (128 x 256 tiles and TF32 inputs: no clustered kernel)
  if (tiles.triangle.tile.n != tiles.triangle.tile.m || input == kernels::InputKind::TF32) return 1;
  const int forced = forced_rank2k_cluster();
  if (forced > 0) return forced;
  const int64_t ctas = kernels::rank2k_kernel(input, false, 1).resident(device);
  int64_t clusters = 0;
  try {
    clusters = kernels::rank2k_kernel(input, false, 2).resident(device) / 2;
  } catch (const c10::Error&) {
    // no cluster of two fits on this device (the occupancy query says so): one CTA per tile
  }
  return sched::rank2k_walk_cluster(orders.data(), static_cast<int32_t>(orders.size()), tiles, ctas, clusters);
}

// One problem whose triangle fills the GPU unevenly (n = 2048: 136 tiles of 128 on 132 SMs, a
// second wave of 4; n = 1024: 36 tiles) runs over Stream-K work units: streamk_mm's plan
// (sched/streamk_plan.h) over the triangle's tiles in the Rank2K walk's order, each tile
// 2·ceil(k / 64) iterations (both passes), chosen by the same calibrated model (`auto`), on 128 x
// 128 or 128 x 256 tiles (sched::rank2k_one_problem). TORCH_GROUPED_SYR2K_DECOMPOSITION names
// another decomposition (tests, benchmark; data_parallel is the plain triangle walk), and
// TORCH_GROUPED_SYR2K_TILE a tile; clusters forced on (TORCH_GROUPED_SYR2K_CLUSTER=1) mean the
// square tile: only it runs in clusters. TF32 inputs: 128 x 128 tiles only.
sched::Rank2KOneProblem one_problem_work(int64_t n, int64_t k, sched::Uplo uplo, at::ScalarType dtype, int device) {
  const char* v = std::getenv("TORCH_GROUPED_SYR2K_DECOMPOSITION");
  bool is_auto = true;
  const sched::Decomposition d = parse_decomposition("syr2k", v != nullptr && *v != '\0' ? v : "auto", is_auto);
  const int forced = forced_rank2k_cluster() == 2 ? kTile : forced_rank2k_tile_n();
  return sched::rank2k_one_problem(cached_models(device).rank2k, n, k, tile_k(dtype), uplo, d, is_auto, forced,
                                   multiprocessor_count(device), &resolve_streamk_plan_cached);
}

}  // namespace

std::vector<at::Tensor> syr2k_cuda(at::TensorList a, at::TensorList b, at::TensorList c, const std::string& uplo_name,
                                   double alpha, double beta) {
  const sched::Uplo uplo = check_syr2k(a, b, c, uplo_name);
  if (a.empty()) return {};
  c10::cuda::CUDAGuard guard(a[0].device());
  ensure_context(a[0].get_device());
  const at::ScalarType dtype = a[0].scalar_type();
  if (dtype == at::kDouble && kernel_device(a[0])) {  // the DMMA kernel where measured faster (dmma_cuda.h)
    double flops = 0;
    for (const at::Tensor& ai : a) flops += 2.0 * ai.size(0) * (ai.size(0) + 1) * ai.size(1);
    if (fp64_list_on_kernel(static_cast<int64_t>(a.size()), flops))
      return syr2k_f64_cuda(a, b, c, uplo, alpha, beta, gemm_scheduler());
  }
  const bool tf32 = dtype == at::kFloat;  // the TF32 kernel, on operands as Tf32Operands stage them
  const bool kernel = (kernel_dtype(dtype) || tf32) && kernel_device(a[0]);
  const bool blas = !kernel && (dtype == at::kFloat || dtype == at::kDouble);
  if (!kernel && !blas) return syr2k_composite(a, b, c, uplo_name, alpha, beta);
  const at::Device device = a[0].device();
  const bool with_c = beta != 0.0 && !c.empty();
  std::vector<at::Tensor> out, keep;
  if (kernel) {
    std::vector<std::pair<int64_t, int64_t>> shapes;
    for (const at::Tensor& ai : a) shapes.emplace_back(ai.size(0), ai.size(0));
    out = outputs_in_one_block(shapes, dtype, device);
  } else {
    out.resize(a.size());
  }
  std::vector<size_t> active;  // groups for the kernel
  // active group j's A is operand 2j, its B 2j + 1: staged where TMA cannot address them (bf16,
  // fp16), or as TF32 (fp32: split into hi/lo parts unless torch allows TF32 matmuls)
  StagedOperands operands;
  Tf32Operands tf32_operands(tf32 ? tf32_mode() : Tf32Mode::AsIs);
  auto operand = [&](int i) -> const std::optional<TmaOperand>& { return tf32 ? tf32_operands[i] : operands[i]; };
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t n = a[i].size(0), k = a[i].size(1);
    if (blas && n > 0 && k > 0) {
      out[i] = blas_syr2k(a[i], b[i], with_c ? &c[i] : nullptr, uplo, alpha, beta);
      continue;
    }
    if (blas) out[i] = at::Tensor(at::detail::empty_cuda({n, n}, dtype, device, std::nullopt));
    if (n == 0) continue;
    if (k == 0) {  // no products: beta·c folded from its triangle, or zeros
      if (with_c) {
        out[i].copy_(fold_triangle(c[i], uplo).mul_(beta));
      } else {
        out[i].zero_();
      }
      continue;
    }
    active.push_back(i);
    if (tf32) {
      tf32_operands.add(a[i]);
      tf32_operands.add(b[i]);
    } else {
      operands.add(a[i]);
      operands.add(b[i]);
    }
  }
  const cudaStream_t copy_stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  operands.copy(device, copy_stream, keep);
  tf32_operands.copy(device, copy_stream, keep);
  std::vector<ListProblem> problems;
  for (size_t j = 0; j < active.size(); ++j) {
    const size_t i = active[j];
    const int64_t n = a[i].size(0), k = tf32_operands.kernel_k(a[i].size(1));  // (split: 3 parts of K rounded up to 32)
    const auto& a_op = operand(static_cast<int>(2 * j));
    const auto& b_op = operand(static_cast<int>(2 * j + 1));
    if (!a_op || !b_op) return syr2k_composite(a, b, c, uplo_name, alpha, beta);  // beyond TMA's extents (2^31 rows)
    const at::Tensor ci = with_c ? c[i].contiguous() : at::Tensor();
    if (with_c) keep.push_back(ci);
    problems.push_back(ListProblem{{n, n, k, out[i].data_ptr(), n, a_op->base, a_op->outer_stride, b_op->base,
                                    b_op->outer_stride, with_c ? ci.data_ptr() : nullptr, with_c ? n : 0},
                                   *a_op, *b_op});
  }
  if (problems.empty()) return out;
  if (problems.size() > 1) {
    // Groups visited by K, descending (seed 000's sorting): the walk deals its tiles to the CTAs
    // round-robin and a tile's time grows with K, so every CTA gets a long tile before any gets a
    // second. (Each problem carries its own output, so the order is the walk's business only.)
    std::vector<int64_t> ks;
    ks.reserve(problems.size());
    for (const ListProblem& problem : problems) ks.push_back(problem.group.k);
    std::vector<ListProblem> by_k;
    by_k.reserve(problems.size());
    for (const int32_t j : sched::order_by_k_descending(ks)) by_k.push_back(problems[j]);
    problems.swap(by_k);
  }
  // The kernel's tiles (128 x 128 unless 128 x 256 is forced), and the walk's: with clusters, pair
  // tiles of two CTAs' rows.
  const int list_tile_n = !tf32 && forced_rank2k_tile_n() == 2 * kTile ? 2 * kTile : kTile;
  const sched::SymmetricTiles tiles{sched::Rank2KTiles{{kTile, list_tile_n}, uplo}, gemm_scheduler()};
  c10::SmallVector<int64_t, 8> orders;  // (no heap allocation for a few groups)
  for (const ListProblem& problem : problems) orders.push_back(problem.group.n);
  const int cluster = rank2k_cluster(orders, tiles, input_kind(dtype), device.index());
  const sched::SymmetricTiles walk = sched::cluster_walk(tiles, cluster);
  const kernels::GroupedGemmKernel walk_kernel = kernels::rank2k_kernel(input_kind(dtype), false, cluster, list_tile_n);
  kernels::GroupedGemmArgs p{};
  p.out_kind = out_kind(a[0].scalar_type());
  p.triangle = walk;
  p.alpha = static_cast<float>(alpha);
  p.beta = static_cast<float>(beta);
  p.tf32_split = tf32 && tf32_operands.split();
  ListLaunch how{walk_kernel, a[0].scalar_type(), /*b_k_major=*/true, /*host_lists=*/true};
  if (problems.size() == 1 && !tiles.all_tiles) {
    // One problem: the Batched form, its maps encoded here. No problem table to upload and no
    // maps to build on the device: a copy and a launch fewer, which an n = 1024 call notices.
    const ListProblem& only = problems[0];
    const int64_t n = only.group.n;
    p.form = kernels::GroupedForm::Batched;
    p.groups = 1;
    p.m = p.n = n, p.k = only.group.k;
    p.c = only.group.c, p.ldc = only.group.ldc, p.c_batch_stride = n * n;
    p.c_in = only.group.c_in, p.ldc_in = only.group.ldc_in;
    const sched::Rank2KOneProblem work = one_problem_work(n, p.k, uplo, dtype, device.index());
    p.streamk = work.plan;
    const bool streamk = p.streamk.decomposition != sched::Decomposition::DataParallel;
    const int tile_n = work.tiles.triangle.tile.n;
    // Stream-K's units are the kernel's own tiles; the data-parallel walk of 128 x 128 tiles may pair them.
    const bool own_kernel = streamk || tile_n != walk_kernel.tile_n;
    const kernels::GroupedGemmKernel kernel =
        own_kernel ? kernels::rank2k_kernel(input_kind(dtype), streamk, 1, tile_n) : walk_kernel;
    if (own_kernel) p.triangle = work.tiles;
    p.a_map = a_map(only.a, kernel.a_box_m(), dtype);
    p.b_map = b_map(only.b, /*k_major=*/true, kernel.b_box_n(), dtype);
    at::Tensor workspace;
    // every resident CTA (whole clusters), or one walker per tile if fewer
    const int64_t walk_slots = p.triangle.count(n, n);
    int64_t grid = persistent_walkers(kernel, device.index(), walk_slots) * kernel.cluster_m;
    // The 128 x 256 kernels' TMA stores, where a CTA has a next tile to run while the engine
    // writes: more tiles (the walk's slots) than CTAs. A CTA's last tile waits for its stores
    // before the CTA ends, and there the threads' own stores are faster (H100, session 16:
    // n = 8192, k = 1024 257 against 271 µs; one tile per CTA, n = 2048, k = 1024, 44.8
    // against 40.4). TORCH_GROUPED_TMA_STORE=0: the threads' stores always (A/B runs).
    if (kernel.optional_c_map && walk_slots > grid) {
      if (const std::optional<CUtensorMap> c_map = output_map(out[active[0]], /*by_default=*/true)) {
        p.c_map = *c_map;
        p.c_map_set = true;
      }
    }
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
    if (streamk) {
      const int64_t slots = p.streamk.workspace_slots();
      if (slots > 0) {
        workspace = at::empty({slots, int64_t{kTile} * tile_n}, a[0].options().dtype(at::kFloat));
        p.workspace = workspace.data_ptr<float>();
        p.counters = tile_counters(device, stream, p.streamk.fixup_counters() * kernels::kStreamKConsumers, keep);
      }
      grid = p.streamk.grid;
    }
    kernel.launch(p, static_cast<int>(grid), stream);
    return out;
  }
  launch_list(problems, walk, how, p, device);
  return out;
}

}  // namespace torch_grouped
