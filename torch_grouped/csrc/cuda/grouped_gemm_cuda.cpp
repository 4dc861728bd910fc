// CUDA paths of gemm (list API) and grouped_mm (offsets API) through the persistent grouped GEMM
// kernel (kernels/grouped_gemm_sm90.cuh), fp64 through the DMMA kernel where measured faster
// (dmma_cuda.h). What the kernels do not cover (other GPUs, fp64 lists of big problems, fp32 where
// cuBLAS is faster and fp32 K-grouped grouped_mm (tf32_operands.h), operands TMA cannot address)
// takes the portable path: correct, slower.
#include "grouped_gemm_cuda.h"

#include <ATen/ATen.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "../common/checks.h"
#include "../common/kernel_switch.h"
#include "../cpu/portable.h"
#include "../kernels/grouped_gemm_launch.h"
#include "../sched/group_order.h"
#include "../sched/list_tail.h"
#include "../sched/tile_choice.h"
#include "device_info.h"
#include "dmma_cuda.h"
#include "list_launch.h"
#include "k_grouped_maps.h"
#include "list_outputs.h"
#include "operand_maps.h"
#include "staged_operands.h"
#include "streamk_cuda.h"
#include "tf32_operands.h"

namespace torch_grouped {
namespace {

using kernels::GroupedForm;
using kernels::GroupedGemmArgs;
using kernels::OutKind;

// Column panels of this many tiles (sched::GemmTiles::panel). The list API's default, 8: a wave of
// 132 CTAs reads about 16 A strips and 8 B strips of one group, which stay in L2. grouped_mm's, 2:
// its groups share one ragged A and each has its own weights, and on its MoE cases 2 was as fast
// or faster than 4, 6, 8 and 12 (dsv3 7168x4096: 1043 -> 981 µs, skewed 277 -> 267 µs, Mixtral
// 3013 -> 2926 µs; interleaved repeats, H100, session 7, run 10). TORCH_GROUPED_PANEL overrides
// both (the benchmarks' sweeps; 0 = plain row-major).
int panel_width(int fallback) {
  const char* v = std::getenv("TORCH_GROUPED_PANEL");
  return v != nullptr && *v != 0 ? std::atoi(v) : fallback;
}
// The K-grouped form (MoE weight gradients), 16: each group a whole matmul over its own slabs, as a
// list's, whose outputs are wide (7168 x 2048 per expert): against 8, 2-5% faster on the five
// 16-bit weight-gradient cases of more than one K block a tile in one sweep (Mixtral 2980 against
// 3063 µs), and in a second on four of them (DSv3 up 1441 against 1527; Mixtral 3116 against 3070;
// H100, session 22).
constexpr int kListPanel = 8, kOffsetsPanel = 2, kKGroupedPanel = 16;

using sched::TileOption;

std::string tile_name(const TileOption& t) {
  return std::to_string(t.m) + "x" + std::to_string(t.n) + (t.cluster_m > 1 ? "c" + std::to_string(t.cluster_m) : "");
}

// TORCH_GROUPED_TILE=MxN (or 128x256c2, the clustered kernel) forces a tile, for the benchmarks'
// sweeps; unset or empty: the model (`model`). TORCH_GROUPED_CLUSTER=1 turns a 128 x 256 choice
// into the clustered kernel, =0 a clustered choice into plain 128 x 256 (sched::kClusterTile says
// which models weigh it); it is checked on every call. `options`: the tiles the call's kernels
// exist with, besides the clustered one; a forced tile they lack (the K-grouped form has no
// 64 x 128 kernel) leaves the choice to the model, so that a knob set for the forward pass does not
// break the weight gradient; a name that is no tile at all is an error.
template <class ModelFn>
const TileOption& chosen_tile(ModelFn model, sched::TileOptions options = sched::kTileOptions) {
  const KernelSwitch cluster = kernel_switch("TORCH_GROUPED_CLUSTER");
  const char* v = std::getenv("TORCH_GROUPED_TILE");
  if (v != nullptr && *v != 0) {
    if (tile_name(sched::kClusterTile) == v) return sched::kClusterTile;
    for (const TileOption* t = options.first; t != options.first + options.count; ++t) {
      if (tile_name(*t) == v) return *t;
    }
    std::vector<std::string> names;  // every tile some form has a kernel for
    for (const sched::TileOptions& set : {sched::TileOptions(sched::kTileOptions), sched::TileOptions(sched::kKGroupedTileOptions)}) {
      for (const TileOption* t = set.first; t != set.first + set.count; ++t) {
        if (std::find(names.begin(), names.end(), tile_name(*t)) == names.end()) names.push_back(tile_name(*t));
      }
    }
    TORCH_CHECK_VALUE(std::find(names.begin(), names.end(), v) != names.end(), "TORCH_GROUPED_TILE must be one of ",
                      c10::Join(", ", names), "; got '", v, "'");
  }
  const TileOption& t = model();
  if (cluster == KernelSwitch::Measured || t.m != sched::kClusterTile.m || t.n != sched::kClusterTile.n) return t;
  return cluster == KernelSwitch::Always ? sched::kClusterTile : sched::kTileOptions[0];
}

// `tma_store`: the variant whose epilogue stores through TMA, which exists for 128 x 256 tiles
// without clusters; elsewhere the request is ignored.
kernels::GroupedGemmKernel kernel_for(at::ScalarType input, const TileOption& tile, bool b_k_major,
                                      bool tma_store = false) {
  tma_store = tma_store && tile.m == 128 && tile.n == 256 && tile.cluster_m == 1;
  return kernels::grouped_gemm_kernel(input_kind(input), tile.m, tile.n, b_k_major, tile.cluster_m, tma_store);
}

// K grouped (2-D x 2-D, the MoE weight gradient dW = Xᵀ dY): out[g] = a[:, K_g] @ b[K_g, :] over
// the K range K_g = [offs[g-1], offs[g]), read with K as both operands' outer dimension (A M-major,
// B N-major: kernels::GroupedForm::RaggedK says why), from per-group maps built on the device.
// An operand in the other layout is copied into this one (the MoE backward's xᵀ and dY need none).
at::Tensor k_grouped_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& offs, at::Tensor out,
                        int64_t groups) {
  const int64_t m = a.size(0), n = b.size(1), k = a.size(1);
  if (k > INT32_MAX) return at::Tensor();  // K coordinates beyond TMA's (int32)
  const int device = a.get_device();
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device).stream();
  std::vector<at::Tensor> keep;
  StagedOperands operands;
  const int ia = operands.add(a, /*transposed=*/true), ib = operands.add(b);
  operands.copy(a.device(), stream, keep);
  if (!operands[ia] || !operands[ib]) return at::Tensor();  // beyond TMA's extents
  const TileOption& tile = chosen_tile(
      [&]() -> const TileOption& {
        return sched::choose_k_grouped_tile(m, n, groups, std::max<int64_t>(k / groups, 1), multiprocessor_count(device));
      },
      sched::kKGroupedTileOptions);
  // (The threads store: a TMA-store variant lost 4-33% on every weight gradient; H100, session 23.)
  const kernels::GroupedGemmKernel kernel =
      kernels::k_grouped_kernel(input_kind(a.scalar_type()), tile.m, tile.n, tile.cluster_m);

  // The per-group maps, 128-byte aligned (the allocator's blocks are 512-byte aligned); straight
  // from the CUDA allocator, as the list API's (through the dispatcher, at::empty costs microseconds).
  const at::Tensor maps = at::detail::empty_cuda({2 * groups * int64_t(sizeof(CUtensorMap))}, at::kByte, a.device(),
                                                 std::nullopt);
  KGroupedMapsArgs m_args{};
  m_args.a_template = mn_major_map(*operands[ia], a.scalar_type());
  m_args.b_template = mn_major_map(*operands[ib], a.scalar_type());
  m_args.offs = offs.data_ptr<int32_t>();
  m_args.a_maps = reinterpret_cast<CUtensorMap*>(maps.data_ptr());
  m_args.b_maps = m_args.a_maps + groups;
  m_args.groups = static_cast<int32_t>(groups);
  m_args.k = k;
  build_k_grouped_tensor_maps(m_args, stream);

  GroupedGemmArgs p{};
  p.form = GroupedForm::RaggedK;
  p.a_map = m_args.a_template, p.b_map = m_args.b_template;
  p.a_maps = m_args.a_maps, p.b_maps = m_args.b_maps;
  p.offs = m_args.offs;
  p.m = m, p.n = n, p.k = k;
  p.groups = static_cast<int32_t>(groups);
  p.c = out.data_ptr(), p.ldc = n, p.c_batch_stride = m * n;
  p.out_kind = out_kind(out.scalar_type());
  // Each group is a whole matmul over its own slabs of A and B, as in the list API.
  p.tiles = sched::GemmTiles{tile.scheduled(), panel_width(kKGroupedPanel)};
  const int64_t scheduled_tiles = sched::form_tiles(GroupedForm::RaggedK, m, n, groups, tile.scheduled(), 0);
  const int64_t walkers = persistent_walkers(kernel, device, scheduled_tiles);
  kernel.launch(p, static_cast<int>(walkers * kernel.cluster_m), stream);
  return out;
}

// The multiply-adds of the list's matmuls, counted as two operations each.
double flops(const std::vector<GroupShape>& shapes) {
  double total = 0.0;
  for (const GroupShape& s : shapes) total += 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  return total;
}

}  // namespace

at::Tensor grouped_mm_cuda(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                           std::optional<at::ScalarType> out_dtype) {
  const GroupedMmShape s = check_grouped_mm(a, b, offs, out_dtype);
  c10::cuda::CUDAGuard guard(a.device());
  ensure_context(a.get_device());
  // fp32: the TF32 kernel (128 x 128 tiles) on operands Tf32Operands stages K-major, split into
  // TF32 hi and lo parts unless torch allows TF32 matmuls, as gemm's; not the K-grouped form (its
  // A is read M-major, and each group's K would need its own split).
  const bool tf32 = a.scalar_type() == at::kFloat && s.form != GroupedMmForm::A2dB2d && fp32_grouped_mm_on_kernel();
  // fp64 (every form): the DMMA kernel (dmma_cuda.h).
  const bool f64 = a.scalar_type() == at::kDouble && fp64_grouped_mm_on_kernel();
  if (!(kernel_dtype(a.scalar_type()) || tf32 || f64) || !kernel_device(a)) return grouped_mm_portable(a, b, offs, out_dtype);
  at::Tensor out = at::empty(s.out_sizes, a.options().dtype(s.out_dtype));
  const int64_t k = a.size(-1);
  if (out.numel() == 0) return out;
  if (k == 0 || s.groups == 0) return out.zero_();
  if (f64) {
    const bool k_grouped = s.form == GroupedMmForm::A2dB2d;
    return grouped_mm_f64_cuda(a, b, offs, s, out, panel_width(k_grouped ? kListPanel : kOffsetsPanel))
               ? out
               : grouped_mm_portable(a, b, offs, out_dtype);
  }
  if (s.form == GroupedMmForm::A2dB2d) {
    // (PyTorch's torch._grouped_mm is no stand-in for the rare inputs our kernel cannot address:
    // it checks the offsets' alignment with a device-side assert, which kills the CUDA context.)
    at::Tensor done = k_grouped_mm(a, b, offs->contiguous(), out, s.groups);
    return done.defined() ? done : grouped_mm_portable(a, b, offs, out_dtype);
  }

  GroupedGemmArgs p{};
  // The kernel reads offs with unit stride; a strided or expanded view gets a (device) copy, which
  // the allocator keeps until the kernel has run (stream order).
  const at::Tensor offs_dense = offs.has_value() ? offs->contiguous() : at::Tensor();
  p.k = k;
  p.groups = static_cast<int32_t>(s.groups);
  p.c = out.data_ptr();
  p.ldc = out.size(-1);
  p.out_kind = out_kind(s.out_dtype);
  switch (s.form) {
    case GroupedMmForm::A2dB3d:
      p.form = GroupedForm::RaggedM, p.m = a.size(0), p.n = b.size(2), p.offs = offs_dense.data_ptr<int32_t>();
      break;
    case GroupedMmForm::A3dB2d:
      p.form = GroupedForm::RaggedN, p.m = a.size(1), p.n = b.size(1), p.offs = offs_dense.data_ptr<int32_t>();
      break;
    default:
      p.form = GroupedForm::Batched, p.m = a.size(1), p.n = b.size(2), p.c_batch_stride = p.m * p.n;
      break;
  }
  const int sms = multiprocessor_count(a.get_device());
  const TileOption& tile = tf32 ? sched::kTileOptions[1] : chosen_tile([&]() -> const TileOption& {  // (TF32: 128 x 128)
    return sched::choose_grouped_mm_tile(p.form, p.m, p.n, s.groups, k, sms);
  });
  // Columns grouped by offsets (3-D x 2-D) start anywhere, and TMA faults (illegal instruction)
  // on a swizzled box whose innermost start coordinate is not 16-byte aligned: there B is read
  // K-major, where the group's first column is an outer coordinate (an N-major B is copied).
  const int64_t kb = b.dim() - 2;  // B's K axis
  const bool k_major = tf32 || s.form == GroupedMmForm::A3dB2d || b_is_k_major(b.size(kb), b.size(kb + 1), b.stride(kb), b.stride(kb + 1));
  std::vector<at::Tensor> keep;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(a.get_device()).stream();
  StagedOperands operands;
  Tf32Operands tf32_operands(tf32 ? tf32_mode() : Tf32Mode::AsIs);
  auto operand = [&](int i) -> const std::optional<TmaOperand>& { return tf32 ? tf32_operands[i] : operands[i]; };
  // (TF32: B's columns staged as rows, [G, N, K] or [N, K].)
  const int ia = tf32 ? tf32_operands.add(a) : operands.add(a);
  const int ib = tf32 ? tf32_operands.add(b.transpose(-2, -1)) : operands.add(b, /*transposed=*/k_major);
  operands.copy(a.device(), stream, keep);
  tf32_operands.copy(a.device(), stream, keep);
  if (!operand(ia) || !operand(ib)) return grouped_mm_portable(a, b, offs, out_dtype);  // beyond TMA's extents
  if (tf32) p.k = tf32_operands.kernel_k(k), p.tf32_split = tf32_operands.split();  // (split: 3 parts of K rounded up to 32)
  // TORCH_GROUPED_TMA_STORE=1: the TMA-store epilogue where one output map serves (not RaggedN,
  // whose column groups a box would cross) and the output's rows are 16-byte aligned (not TF32's kernel).
  const std::optional<CUtensorMap> c_map =
      p.form != GroupedForm::RaggedN && !tf32 ? output_map(out, /*by_default=*/false) : std::nullopt;
  const kernels::GroupedGemmKernel kernel = kernel_for(a.scalar_type(), tile, k_major, c_map.has_value());
  if (kernel.tma_store) p.c_map = *c_map;
  // The persistent grid: every resident CTA, or one per tile (a cluster per pair tile) if fewer
  // (the walk's tiles at most: a partial tile row or column for every group and the tail).
  const int64_t tiles = sched::form_tiles(p.form, p.m, p.n, s.groups, tile.scheduled(), s.groups + 1);
  const int64_t walkers = persistent_walkers(kernel, a.get_device(), tiles);
  p.a_map = a_map(*operand(ia), kernel.tile_m, a.scalar_type());
  p.b_map = b_map(*operand(ib), k_major, kernel.b_box_n(), a.scalar_type());
  p.tiles = sched::GemmTiles{tile.scheduled(), panel_width(kOffsetsPanel)};
  kernel.launch(p, static_cast<int>(walkers * kernel.cluster_m), stream);
  return out;
}

namespace {

// Cuts `corner` (rows [row0, m) x columns [col0, n)) out of the last problem: what the grouped
// kernel keeps of it is its rows above the corner's tile row, then that tile row left of the
// corner, as two problems (either may be empty). A is K-major (rows of k), so the second starts
// row0 rows further in A and in the output; B's columns [0, col0) start where B does.
void carve_corner(std::vector<ListProblem>& problems, const sched::TailCorner& corner, size_t in_size, size_t out_size) {
  const ListProblem last = problems.back();
  problems.pop_back();
  if (corner.row0 > 0) {
    ListProblem above = last;
    above.group.m = corner.row0;
    problems.push_back(above);
  }
  if (corner.col0 > 0) {
    ListProblem left = last;
    left.group.m = last.group.m - corner.row0;
    left.group.n = corner.col0;
    left.group.c = static_cast<uint8_t*>(last.group.c) + corner.row0 * last.group.ldc * out_size;
    left.group.a = static_cast<const uint8_t*>(last.group.a) + corner.row0 * last.group.lda * in_size;
    problems.push_back(left);
  }
}

}  // namespace

std::vector<at::Tensor> gemm_cuda(at::TensorList a, at::TensorList b, std::optional<at::ScalarType> out_dtype,
                                  const std::string& schedule, bool sort_by_k) {
  at::ScalarType od;
  const std::vector<GroupShape> shapes = check_gemm(a, b, out_dtype, od);
  const GemmSchedule mode = check_gemm_schedule(schedule);
  if (a.empty()) return {};
  c10::cuda::CUDAGuard guard(a[0].device());
  ensure_context(a[0].get_device());
  if (a[0].scalar_type() == at::kDouble && kernel_device(a[0]) &&
      fp64_list_on_kernel(static_cast<int64_t>(shapes.size()), flops(shapes)))
    return gemm_f64_cuda(a, b, shapes, mode, sort_by_k, panel_width(kListPanel));
  // fp32: the TF32 kernel (128 x 128 tiles), on operands Tf32Operands stages K-major (B's columns
  // as rows), split into TF32 hi and lo parts (3xTF32) unless torch allows TF32 matmuls.
  const bool tf32 = a[0].scalar_type() == at::kFloat && fp32_gemm_on_kernel(static_cast<int64_t>(shapes.size()), flops(shapes));
  if (!(kernel_dtype(a[0].scalar_type()) || tf32) || !kernel_device(a[0])) {
    return gemm_portable(a, b, out_dtype, schedule, sort_by_k);
  }
  const at::Device device = a[0].device();
  std::vector<std::pair<int64_t, int64_t>> out_shapes;
  out_shapes.reserve(shapes.size());
  for (const GroupShape& s : shapes) out_shapes.emplace_back(s.m, s.n);
  std::vector<at::Tensor> out = outputs_in_one_block(out_shapes, od, device);
  std::vector<int32_t> active;  // groups with output elements and K > 0
  std::vector<int64_t> ks;
  int k_major_votes = 0, a_m_major_votes = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (out[i].numel() == 0) continue;
    if (shapes[i].k == 0) {
      out[i].zero_();
      continue;
    }
    active.push_back(static_cast<int32_t>(i));
    ks.push_back(shapes[i].k);
    k_major_votes += b_is_k_major(b[i].size(0), b[i].size(1), b[i].stride(0), b[i].stride(1)) ? 1 : -1;
    a_m_major_votes += a_is_m_major(a[i].size(0), a[i].size(1), a[i].stride(0), a[i].stride(1)) ? 1 : -1;
  }
  if (active.empty()) return out;
  // One kernel serves one B layout: the minority gets a copy in the majority's layout (TF32: every
  // B is staged K-major).
  const bool k_major = tf32 || k_major_votes > 0;
  // A read M-major where it lies, by the K-grouped form's kernels (their walk serves a list too),
  // where most A's are transposed views and B is N-major: gemm's own dB_i = A_iᵀ·dY_i, whose A_iᵀ
  // were each transposed K-major first (8 x 2048 x 1024 x 2048: 46 µs of a 635 µs training step,
  // H200, session 46). 16-bit inputs; the minority is staged M-major; no TMA-store variant.
  // TORCH_GROUPED_GEMM_A_M_MAJOR=0 stages every A K-major (the benchmarks' A/B runs, tests); read
  // on every call, so that a bad setting is an error whatever the call's layouts.
  const bool a_m_major_allowed = on_our_kernel(kernel_switch("TORCH_GROUPED_GEMM_A_M_MAJOR"), true);
  const bool a_m_major = a_m_major_allowed && !tf32 && !k_major && a_m_major_votes > 0;
  const sched::TileOptions tile_options =
      a_m_major ? sched::TileOptions(sched::kKGroupedTileOptions) : sched::TileOptions(sched::kListTileOptions);
  const std::vector<int32_t> order = sched::visiting_order(ks, sort_by_k);

  const int sms = multiprocessor_count(a[0].get_device());
  std::vector<int64_t> ms(order.size()), ns(order.size()), ks_visited(order.size());
  for (size_t j = 0; j < order.size(); ++j) {
    const GroupShape& g = shapes[active[order[j]]];
    ms[j] = g.m, ns[j] = g.n, ks_visited[j] = g.k;
  }
  const TileOption& tile = tf32 ? sched::kTileOptions[1] : chosen_tile([&]() -> const TileOption& {  // (TF32: 128 x 128)
    return sched::choose_list_tile(ms.data(), ns.data(), ks_visited.data(), static_cast<int32_t>(order.size()), sms,
                                   tile_options);
  }, tile_options);
  const sched::GemmTiles tiles{tile.scheduled(), panel_width(kListPanel)};

  // Operands as TMA sees them (a copy where the layout forces one), from raw sizes and strides.
  std::vector<at::Tensor> keep;
  StagedOperands operands;  // group j's A is operand 2j, its B 2j + 1 (bf16, fp16; or as TF32)
  Tf32Operands tf32_operands(tf32 ? tf32_mode() : Tf32Mode::AsIs);
  auto operand = [&](int i) -> const std::optional<TmaOperand>& { return tf32 ? tf32_operands[i] : operands[i]; };
  for (size_t j = 0; j < order.size(); ++j) {
    const int32_t i = active[order[j]];
    if (tf32) {
      tf32_operands.add(a[i]);
      tf32_operands.add(b[i].t());
    } else {
      operands.add(a[i], /*transposed=*/a_m_major);
      operands.add(b[i], /*transposed=*/k_major);
    }
  }
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  operands.copy(device, stream, keep);
  tf32_operands.copy(device, stream, keep);
  std::vector<ListProblem> problems(active.size());
  for (size_t j = 0; j < order.size(); ++j) {
    const int32_t i = active[order[j]];
    const auto& a_op = operand(static_cast<int>(2 * j));
    const auto& b_op = operand(static_cast<int>(2 * j + 1));
    if (!a_op || !b_op) return gemm_portable(a, b, out_dtype, schedule, sort_by_k);  // beyond TMA's extents (2^31 rows)
    const int64_t k = tf32_operands.kernel_k(shapes[i].k);  // (split: 3 parts of K rounded up to 32)
    problems[j] = ListProblem{{shapes[i].m, shapes[i].n, k, out[i].data_ptr(), out[i].stride(0),
                               a_op->base, a_op->outer_stride, b_op->base, b_op->outer_stride, nullptr, 0},
                              *a_op, *b_op};
  }
  // TORCH_GROUPED_TMA_STORE=1: the TMA-store epilogue when every output's rows are 16-byte aligned
  // (each output starts 256-byte aligned in the call's block).
  bool tma_store = !tf32 && !a_m_major && tma_store_enabled(/*by_default=*/false);
  for (size_t j = 0; j < order.size() && tma_store; ++j)
    tma_store = (out[active[order[j]]].stride(0) * at::elementSize(od)) % 16 == 0;
  GroupedGemmArgs p{};
  p.out_kind = out_kind(od);
  p.tiles = tiles;
  p.tf32_split = tf32 && tf32_operands.split();
  const kernels::GroupedGemmKernel kernel =
      a_m_major ? kernels::k_grouped_kernel(input_kind(a[0].scalar_type()), tile.m, tile.n, tile.cluster_m)
                : kernel_for(a[0].scalar_type(), tile, k_major, tma_store);
  // The walk's partial last round to the Stream-K kernel (sched/list_tail.h), where it pays:
  // TORCH_GROUPED_LIST_TAIL=0 never, =1 wherever the geometry allows (tests), unset by the rule.
  // (Not for the TF32, A-M-major or TMA-store kernels: no measurement says it pays there.)
  const KernelSwitch tail = kernel_switch("TORCH_GROUPED_LIST_TAIL");
  std::optional<sched::TailCorner> corner;
  if (!tf32 && !a_m_major && !tma_store && tail != KernelSwitch::Never)
    corner = sched::list_tail_corner(ms.data(), ns.data(), ks_visited.data(), static_cast<int32_t>(order.size()), tile,
                                     resident_walkers(kernel, device.index()), tail == KernelSwitch::Measured);
  if (corner) carve_corner(problems, *corner, at::elementSize(a[0].scalar_type()), at::elementSize(od));
  launch_list(problems, tiles, ListLaunch{kernel, a[0].scalar_type(), k_major, mode != GemmSchedule::Device, a_m_major},
              p, device);
  if (corner) {
    const int32_t i = active[order.back()];
    const int64_t rows = shapes[i].m - corner->row0, cols = shapes[i].n - corner->col0;
    streamk_mm_into(a[i].narrow(0, corner->row0, rows), b[i].narrow(1, corner->col0, cols),
                    out[i].narrow(0, corner->row0, rows).narrow(1, corner->col0, cols), sched::Decomposition::DataParallel,
                    /*is_auto=*/true, /*splits=*/0, /*grid=*/0);
  }
  return out;
}

}  // namespace torch_grouped
