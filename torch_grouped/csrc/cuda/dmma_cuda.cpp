#include "dmma_cuda.h"

#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../common/kernel_switch.h"
#include "../kernels/dmma_launch.h"
#include "../sched/dmma_tile_choice.h"
#include "../sched/group_order.h"
#include "device_info.h"
#include "list_maps.h"
#include "list_outputs.h"
#include "pinned_upload.h"
#include "tma_map.h"

namespace torch_grouped {
namespace {

using kernels::DmmaArgs;
using kernels::DmmaListOperands;
using kernels::DmmaOperand;
using kernels::GroupedForm;

// The tile of a call: the model's choice (sched/dmma_tile_choice.h), or the option that
// TORCH_GROUPED_FP64_TILE names (128x64 or 64x64; A/B runs and the tests of both kernels).
sched::TileShape fp64_tile(const sched::TileOption& chosen) {
  const char* v = std::getenv("TORCH_GROUPED_FP64_TILE");
  if (v == nullptr || *v == '\0') return sched::TileShape{chosen.m, chosen.n};
  std::vector<std::string> names;
  const sched::TileOption* forced = nullptr;
  for (const sched::TileOption& t : sched::kDmmaTileOptions) {
    names.push_back(std::to_string(t.m) + "x" + std::to_string(t.n));
    if (names.back() == v) forced = &t;
  }
  TORCH_CHECK_VALUE(forced != nullptr, "TORCH_GROUPED_FP64_TILE must be ", c10::Join(" or ", names), "; got '", v, "'");
  return sched::TileShape{forced->m, forced->n};
}

int64_t device_sms(const at::Device& device) { return multiprocessor_count(device.index()); }

// A 2-D operand as rows x K: A [m, k] as it is, B [k, n] as its columns (rows_dim = 1).
DmmaOperand operand(const at::Tensor& t, int rows_dim, int k_dim, int batch_dim = -1) {
  return DmmaOperand{t.const_data_ptr<double>(), t.stride(rows_dim), t.stride(k_dim), batch_dim < 0 ? 0 : t.stride(batch_dim)};
}

constexpr size_t aligned16(size_t bytes) { return (bytes + 15) / 16 * 16; }

// One problem of a list (gemm, syr2k): its sizes and output (and syr2k's c) as the shared problem
// table holds them, and its operands (which launch_dmma_list copies into the table's operand
// fields, where the TMA maps are built from).
struct DmmaListProblem {
  kernels::ListGroup group;
  DmmaListOperands operands;
};

// TORCH_GROUPED_FP64_TMA=0 keeps the copying kernels where the TMA ones could run (A/B runs);
// unset or 1: TMA where the operands allow it (kernel_switch's parsing: read per call, so that
// one process can compare, and any other value an error).
bool fp64_tma_enabled() { return kernel_switch("TORCH_GROUPED_FP64_TMA") != KernelSwitch::Never; }

// A K-contiguous operand of rows x k as TMA addresses it, or nothing where it cannot (tma_map.h:
// a 16-byte aligned base, a row stride of whole 16-byte steps, rows that do not overlap).
std::optional<TmaOperand> fp64_tma_operand(const DmmaOperand& v, int64_t rows, int64_t k) {
  if (!kernels::k_fast(v)) return std::nullopt;
  const int64_t sizes[3] = {1, rows, k}, strides[3] = {rows * v.row_stride, v.row_stride, 1};
  return tma_operand(const_cast<double*>(v.base), at::kDouble, sizes, strides);
}

// Whether every group's operands can be TMA-loaded (groups without K are never loaded); -1 where
// not, else the first group that loads (whose operands encode the maps' templates), or `groups`.
int32_t tma_template_group(const std::vector<DmmaListProblem>& problems) {
  const int32_t groups = static_cast<int32_t>(problems.size());
  int32_t first = groups;
  for (int32_t j = 0; j < groups; ++j) {
    const kernels::ListGroup& g = problems[j].group;
    if (g.k == 0) continue;
    if (!fp64_tma_operand(problems[j].operands.a, g.m, g.k) || !fp64_tma_operand(problems[j].operands.b, g.n, g.k))
      return -1;
    first = std::min(first, j);
  }
  return first;
}

// The per-group maps of a TMA list (two per group at `maps`, 128-byte aligned device memory),
// patched on the device from the problem table at `list` (already queued on `stream`): boxes of
// 16 doubles (one 128-byte line) x 64 rows, the DMMA kernel's stage rows.
void build_fp64_maps(const DmmaListProblem& first, const kernels::ListGroup* list, int32_t groups, CUtensorMap* maps,
                     cudaStream_t stream) {
  constexpr uint32_t kBoxK = 16, kBoxRows = 64;
  const kernels::ListGroup& g = first.group;
  ListMapsArgs args{};
  args.a_template = encode_tma_map(*fp64_tma_operand(first.operands.a, g.m, g.k), at::kDouble, kBoxK, kBoxRows);
  args.b_template = encode_tma_map(*fp64_tma_operand(first.operands.b, g.n, g.k), at::kDouble, kBoxK, kBoxRows);
  args.list = list;
  args.a_maps = maps;
  args.b_maps = maps + groups;
  args.groups = groups;
  args.element_size = static_cast<int32_t>(sizeof(double));
  args.b_k_major = true;
  build_list_tensor_maps(args, stream);
}

// Launches the list, in the order given, with the tiles `tiles_of(tile)` (GemmTiles, or syr2k's
// SymmetricTiles) of the chosen tile shape and the mode's fields in `p` (alpha, beta): one upload
// of the problem table, the operands and (host_lists) the per-CTA tile lists, then the kernel over
// every resident CTA, or one per tile.
template <class TilesOf>
void launch_dmma_list(const std::vector<DmmaListProblem>& problems, TilesOf tiles_of, bool host_lists, DmmaArgs p,
                      const at::Device& device) {
  using Tiles = decltype(tiles_of(sched::TileShape{}));
  constexpr bool rank2k = std::is_same_v<Tiles, sched::SymmetricTiles>;
  const int32_t groups = static_cast<int32_t>(problems.size());
  std::vector<int64_t> ms(groups), ns(groups), ks(groups);
  for (int32_t j = 0; j < groups; ++j) ms[j] = problems[j].group.m, ns[j] = problems[j].group.n, ks[j] = problems[j].group.k;
  bool all_tiles = false;  // (syr2k's GEMM-walk switch, which tiles_of carries whatever the shape)
  if constexpr (rank2k) all_tiles = tiles_of(sched::TileShape{}).all_tiles;
  const Tiles tiles = tiles_of(fp64_tile(
      sched::choose_dmma_list_tile(ms.data(), ns.data(), ks.data(), groups, device_sms(device), rank2k, all_tiles)));
  const sched::GroupSizes sizes{ms.data(), ns.data(), groups};
  const int64_t total = sched::total_tiles(sizes, tiles);
  const int resident = rank2k ? kernels::dmma_rank2k_resident(device.index()) : kernels::dmma_grouped_resident(device.index());
  const int64_t walkers = std::max<int64_t>(1, std::min<int64_t>(resident, total));
  const int64_t stride = host_lists ? sched::ceil_div(total, walkers) : 0;

  p.a_k_fast = std::all_of(problems.begin(), problems.end(), [](const DmmaListProblem& q) { return kernels::k_fast(q.operands.a); });
  p.b_k_fast = std::all_of(problems.begin(), problems.end(), [](const DmmaListProblem& q) { return kernels::k_fast(q.operands.b); });
  if (rank2k) p.a_k_fast = p.b_k_fast = p.a_k_fast && p.b_k_fast;  // (its passes swap the slots: one orientation)
  const int32_t tma_first = p.a_k_fast && p.b_k_fast && fp64_tma_enabled() ? tma_template_group(problems) : -1;
  p.tma = tma_first >= 0 && tma_first < groups;

  // The device table: problems, operands, per-CTA lists, then (TMA) the maps, 128-byte aligned.
  const size_t operands_at = aligned16(groups * sizeof(kernels::ListGroup));
  const size_t entries_at = operands_at + aligned16(groups * sizeof(DmmaListOperands));
  const size_t bytes = entries_at + walkers * stride * sizeof(sched::PrecomputedEntry);
  const size_t maps_at = (bytes + 127) / 128 * 128;
  const size_t table_bytes = p.tma ? maps_at + 2 * groups * sizeof(CUtensorMap) : bytes;
  const at::Tensor table = at::detail::empty_cuda({static_cast<int64_t>(table_bytes)}, at::kByte, device, std::nullopt);
  uint8_t* dbase = table.data_ptr<uint8_t>();
  at::DataPtr host = pinned_block(bytes);
  auto* base = static_cast<uint8_t*>(host.get());
  auto* list = reinterpret_cast<kernels::ListGroup*>(base);
  auto* ops = reinterpret_cast<DmmaListOperands*>(base + operands_at);
  for (int32_t j = 0; j < groups; ++j) {
    list[j] = problems[j].group, ops[j] = problems[j].operands;
    list[j].a = ops[j].a.base, list[j].lda = ops[j].a.row_stride;  // (read by the map builder only)
    list[j].b = ops[j].b.base, list[j].ldb = ops[j].b.row_stride;
  }
  if (host_lists)
    sched::fill_all_cta_schedules(sizes, tiles, walkers, stride, reinterpret_cast<sched::PrecomputedEntry*>(base + entries_at));
  const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(device.index());
  upload_pinned(std::move(host), dbase, bytes, stream);
  if (p.tma) {
    auto* maps = reinterpret_cast<CUtensorMap*>(dbase + maps_at);
    build_fp64_maps(problems[tma_first], reinterpret_cast<const kernels::ListGroup*>(dbase), groups, maps,
                    stream.stream());
    p.shape.a_maps = maps, p.shape.b_maps = maps + groups;
  }

  p.shape.form = GroupedForm::List;
  p.shape.groups = groups;
  p.shape.list = reinterpret_cast<const kernels::ListGroup*>(dbase);
  p.shape.precomputed = host_lists ? reinterpret_cast<const sched::PrecomputedEntry*>(dbase + entries_at) : nullptr;
  p.shape.precomputed_stride = stride;
  p.shape.out_kind = kernels::OutKind::Double;
  p.list_operands = reinterpret_cast<const DmmaListOperands*>(dbase + operands_at);
  p.pairs = std::all_of(problems.begin(), problems.end(), [&](const DmmaListProblem& q) {
    return kernels::pairs_ok(q.operands.a, p.a_k_fast, q.group.m, q.group.k) &&
           kernels::pairs_ok(q.operands.b, p.b_k_fast, q.group.n, q.group.k);
  });
  if constexpr (rank2k) {
    p.shape.triangle = tiles;
    kernels::launch_dmma_rank2k(p, static_cast<int>(walkers), stream.stream());
  } else {
    p.shape.tiles = tiles;
    kernels::launch_dmma_grouped(p, static_cast<int>(walkers), stream.stream());
  }
}

KernelSwitch fp64_kernels_setting() { return kernel_switch("TORCH_GROUPED_FP64_KERNELS"); }

}  // namespace

// Measured on the H100 (benchmarks/NOTES.md, session 21): the kernel runs ~38 TFLOP/s on big
// problems, cuBLAS's dgemm ~55 and dsyr2k ~49 (4 x 4096³: 0.68x; syr2k n4096: 0.76x, n1024
// 0.68x), but a loop of cuBLAS pays a launch or two per problem: the kernel wins on lists of
// small problems (64 x 128 x 1024 x 1024: 1.5-2.2x the loop of dgemm; 48 syr2k problems of n, k up
// to 1024, ~0.5 GFLOP each: 1.69x the loop of dsyr2k) and loses from ~1 GFLOP a problem (seed
// 000's four problems, 1.0 GFLOP each: 0.72x). Session 39's kernel (H200, call 3) runs ~42
// TFLOP/s (4 x 4096³ 13.1 ms, 0.77x the loop of dgemm; seed 000 0.75x), and the rule still holds:
// only syr2k n = 8192, k = 1024 (137 GFLOP) went the other way, 3.36 ms on the kernel against
// 3.47 for dsyr2k and its mirror (0.87x / 0.84x dsyr2k alone). Session 40's kernel (16-byte
// copies, H200) runs ~47-50 TFLOP/s, and a rule that sent big shallow syr2k problems to it (to
// save the mirror) was measured wrong and withdrawn: dsyr2k and its mirror were 3-17% faster on
// every one tried (n 4096-16384, k 256-2048), the mirror costing 0.1-0.7 ms at n = 8192 across runs.
bool fp64_list_on_kernel(int64_t problems, double flops) {
  return on_our_kernel(fp64_kernels_setting(), flops < 1e9 * static_cast<double>(problems));
}

// grouped_mm's other path is a loop of cuBLAS calls that reads offs on the host (a
// synchronisation, no CUDA graph capture): the kernel unless told otherwise, as for fp32. Measured
// (H100, session 21, against that loop): 64 experts of 128 x 1024 x 1024 1.9-2.0x; 32 of
// 256 x 4096 x 2048 0.75x (session 39's kernels, H200: 0.82-0.84x on 128 x 64 tiles, 0.97x on the
// 64 x 64 ones the tile model now picks).
bool fp64_grouped_mm_on_kernel() { return fp64_kernels_setting() != KernelSwitch::Never; }

std::vector<at::Tensor> gemm_f64_cuda(at::TensorList a, at::TensorList b, const std::vector<GroupShape>& shapes,
                                      GemmSchedule mode, bool sort_by_k, int panel) {
  const at::Device device = a[0].device();
  std::vector<std::pair<int64_t, int64_t>> out_shapes;
  out_shapes.reserve(shapes.size());
  for (const GroupShape& s : shapes) out_shapes.emplace_back(s.m, s.n);
  std::vector<at::Tensor> out = outputs_in_one_block(out_shapes, at::kDouble, device);
  // Every group with output elements goes to the kernel, K = 0 included (its tiles store zeros).
  std::vector<int32_t> active;
  std::vector<int64_t> ks;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (out[i].numel() == 0) continue;
    active.push_back(static_cast<int32_t>(i));
    ks.push_back(shapes[i].k);
  }
  if (active.empty()) return out;
  std::vector<DmmaListProblem> problems;
  problems.reserve(active.size());
  for (const int32_t j : sched::visiting_order(ks, sort_by_k)) {
    const int32_t i = active[j];
    problems.push_back({kernels::ListGroup{shapes[i].m, shapes[i].n, shapes[i].k, out[i].data_ptr(), out[i].stride(0),
                                           nullptr, 0, nullptr, 0, nullptr, 0},
                        DmmaListOperands{operand(a[i], 0, 1), operand(b[i], 1, 0)}});
  }
  launch_dmma_list(problems, [&](sched::TileShape t) { return sched::GemmTiles{t, panel}; }, mode != GemmSchedule::Device,
                   DmmaArgs{}, device);
  return out;
}

std::vector<at::Tensor> syr2k_f64_cuda(at::TensorList a, at::TensorList b, at::TensorList c, sched::Uplo uplo,
                                       double alpha, double beta, bool all_tiles) {
  const at::Device device = a[0].device();
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (const at::Tensor& ai : a) shapes.emplace_back(ai.size(0), ai.size(0));
  std::vector<at::Tensor> out = outputs_in_one_block(shapes, at::kDouble, device);
  const bool with_c = beta != 0.0 && !c.empty();
  // Every problem of order n > 0 goes to the kernel, K = 0 included (its tiles store beta·c from
  // c's triangle, or zeros). c is read through unit-stride rows (a copy otherwise), kept alive
  // until the kernel is queued (the allocator reuses memory in stream order).
  std::vector<at::Tensor> c_rows;
  std::vector<int64_t> ks;
  std::vector<DmmaListProblem> problems;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t n = a[i].size(0), k = a[i].size(1);
    if (n == 0) continue;
    const at::Tensor ci = with_c ? (c[i].stride(1) == 1 ? c[i] : c[i].contiguous()) : at::Tensor();
    if (with_c) c_rows.push_back(ci);
    problems.push_back({kernels::ListGroup{n, n, k, out[i].data_ptr(), n, nullptr, 0, nullptr, 0,
                                           with_c ? ci.const_data_ptr() : nullptr, with_c ? ci.stride(0) : 0},
                        DmmaListOperands{operand(a[i], 0, 1), operand(b[i], 0, 1)}});
    ks.push_back(k);
  }
  if (problems.empty()) return out;
  std::vector<DmmaListProblem> by_k;
  by_k.reserve(problems.size());
  for (const int32_t j : sched::order_by_k_descending(ks)) by_k.push_back(problems[j]);
  DmmaArgs p{};
  p.alpha = alpha, p.beta = beta;
  launch_dmma_list(by_k, [&](sched::TileShape t) { return sched::SymmetricTiles{sched::Rank2KTiles{t, uplo}, all_tiles}; },
                   /*host_lists=*/true, p, device);
  return out;
}

bool grouped_mm_f64_cuda(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                         const GroupedMmShape& s, at::Tensor& out, int panel) {
  for (const at::Tensor& t : {a, b})
    for (int64_t d = 0; d < t.dim(); ++d)
      if (t.size(d) > INT32_MAX) return false;  // (GroupProblem's row, column and K origins are 32-bit)
  DmmaArgs p{};
  kernels::GroupedGemmArgs& g = p.shape;
  // The kernel reads offs with unit stride; a strided view gets a (device) copy, which the
  // allocator keeps until the kernel has run (stream order).
  const at::Tensor offs_dense = offs.has_value() ? offs->contiguous() : at::Tensor();
  if (offs_dense.defined()) g.offs = offs_dense.const_data_ptr<int32_t>();
  switch (s.form) {
    case GroupedMmForm::A2dB3d:  // a [T, K], b [G, K, N]: rows grouped
      g.form = GroupedForm::RaggedM, g.m = a.size(0), g.n = b.size(2), g.k = a.size(1);
      p.a = operand(a, 0, 1), p.b = operand(b, 2, 1, 0);
      break;
    case GroupedMmForm::A3dB2d:  // a [G, M, K], b [K, N]: columns grouped
      g.form = GroupedForm::RaggedN, g.m = a.size(1), g.n = b.size(1), g.k = a.size(2);
      p.a = operand(a, 1, 2, 0), p.b = operand(b, 1, 0);
      break;
    case GroupedMmForm::A3dB3d:
      g.form = GroupedForm::Batched, g.m = a.size(1), g.n = b.size(2), g.k = a.size(2);
      p.a = operand(a, 1, 2, 0), p.b = operand(b, 2, 1, 0);
      break;
    case GroupedMmForm::A2dB2d:  // a [M, K], b [K, N]: K grouped, out [G, M, N]
      g.form = GroupedForm::RaggedK, g.m = a.size(0), g.n = b.size(1), g.k = a.size(1);
      p.a = operand(a, 0, 1), p.b = operand(b, 1, 0);
      break;
  }
  g.c_batch_stride = g.m * g.n;  // (Batched, RaggedK: out [G, M, N], contiguous)
  g.groups = static_cast<int32_t>(s.groups);
  g.c = out.data_ptr();
  g.ldc = out.size(-1);
  g.out_kind = kernels::OutKind::Double;
  const sched::TileShape tile =
      fp64_tile(sched::choose_dmma_grouped_mm_tile(g.form, g.m, g.n, s.groups, g.k, device_sms(a.device())));
  g.tiles = sched::GemmTiles{tile, panel};
  p.a_k_fast = kernels::k_fast(p.a), p.b_k_fast = kernels::k_fast(p.b);
  // offs sizes (and offsets) A's rows (RaggedM), B's rows (RaggedN: its columns) or K (RaggedK)
  const int64_t k_known = g.form == GroupedForm::RaggedK ? -1 : g.k;
  p.pairs = kernels::pairs_ok(p.a, p.a_k_fast, g.form == GroupedForm::RaggedM ? -1 : g.m, k_known) &&
            kernels::pairs_ok(p.b, p.b_k_fast, g.form == GroupedForm::RaggedN ? -1 : g.n, k_known);
  const int device = a.get_device();
  // the grid: every resident CTA, or as many as the walk has tiles at most if fewer
  const int64_t bound = sched::form_tiles(g.form, g.m, g.n, s.groups, tile, s.groups + 1);
  const int64_t walkers = std::max<int64_t>(1, std::min<int64_t>(kernels::dmma_grouped_resident(device), bound));
  kernels::launch_dmma_grouped(p, static_cast<int>(walkers), c10::cuda::getCurrentCUDAStream(device).stream());
  return true;
}

}  // namespace torch_grouped
