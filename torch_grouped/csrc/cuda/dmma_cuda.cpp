#include "dmma_cuda.h"

#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>

#include "../kernels/dmma_launch.h"
#include "../sched/group_order.h"
#include "list_outputs.h"
#include "pinned_upload.h"

namespace torch_grouped {
namespace {

using kernels::DmmaArgs;
using kernels::DmmaListOperands;
using kernels::DmmaOperand;
using kernels::DmmaTile;
using kernels::GroupedForm;

int resident(bool rank2k, int device, DmmaTile tile) {
  return rank2k ? kernels::dmma_rank2k_resident(device, tile) : kernels::dmma_grouped_resident(device, tile);
}

// The tile of a call whose walk has `tiles(shape)` tiles: Wide (128 x 128, one CTA an SM) when
// its tiles fill every resident CTA of that shape, else Square (64 x 64, two CTAs an SM: four
// times the tiles, more SMs busy). TORCH_GROUPED_FP64_TILE=64x64 or 128x128 forces one (tests,
// benchmarks); read on every call.
template <class CountTiles>
DmmaTile choose_tile(bool rank2k, int device, CountTiles tiles) {
  const char* v = std::getenv("TORCH_GROUPED_FP64_TILE");
  const std::string forced = v == nullptr ? "" : v;
  TORCH_CHECK_VALUE(forced.empty() || forced == "64x64" || forced == "128x128",
                    "TORCH_GROUPED_FP64_TILE must be 64x64 or 128x128; got '", forced, "'");
  if (!forced.empty()) return forced == "128x128" ? DmmaTile::Wide : DmmaTile::Square;
  const sched::TileShape wide = kernels::dmma_tile_shape(DmmaTile::Wide);
  return tiles(wide) >= resident(rank2k, device, DmmaTile::Wide) ? DmmaTile::Wide : DmmaTile::Square;
}

// A 2-D operand as rows x K: A [m, k] as it is, B [k, n] as its columns (rows_dim = 1).
DmmaOperand operand(const at::Tensor& t, int rows_dim, int k_dim, int batch_dim = -1) {
  return DmmaOperand{t.const_data_ptr<double>(), t.stride(rows_dim), t.stride(k_dim), batch_dim < 0 ? 0 : t.stride(batch_dim)};
}

constexpr size_t aligned16(size_t bytes) { return (bytes + 15) / 16 * 16; }

// One problem of a list (gemm, syr2k): its sizes and output (and syr2k's c) as the shared problem
// table holds them (its TMA-operand fields unused: the kernel reads `operands`), and its operands.
struct DmmaListProblem {
  kernels::ListGroup group;
  DmmaListOperands operands;
};

// Launches the list, in the order given, with the tiles `make_tiles(shape)` makes (GemmTiles, or
// syr2k's SymmetricTiles) of the chosen shape and the mode's fields in `p` (alpha, beta): one
// upload of the problem table, the operands and (host_lists) the per-CTA tile lists, then the
// kernel over every resident CTA, or one per tile.
template <class MakeTiles>
void launch_dmma_list(const std::vector<DmmaListProblem>& problems, MakeTiles make_tiles, bool host_lists, DmmaArgs p,
                      const at::Device& device) {
  using Tiles = decltype(make_tiles(sched::TileShape{}));
  constexpr bool rank2k = std::is_same_v<Tiles, sched::SymmetricTiles>;
  const int32_t groups = static_cast<int32_t>(problems.size());
  std::vector<int64_t> ms(groups), ns(groups);
  for (int32_t j = 0; j < groups; ++j) ms[j] = problems[j].group.m, ns[j] = problems[j].group.n;
  const sched::GroupSizes sizes{ms.data(), ns.data(), groups};
  const DmmaTile tile = choose_tile(rank2k, device.index(), [&](sched::TileShape shape) {
    return sched::total_tiles(sizes, make_tiles(shape));
  });
  const Tiles tiles = make_tiles(kernels::dmma_tile_shape(tile));
  const int64_t total = sched::total_tiles(sizes, tiles);
  const int64_t walkers = std::max<int64_t>(1, std::min<int64_t>(resident(rank2k, device.index(), tile), total));
  const int64_t stride = host_lists ? sched::ceil_div(total, walkers) : 0;

  const size_t operands_at = aligned16(groups * sizeof(kernels::ListGroup));
  const size_t entries_at = operands_at + aligned16(groups * sizeof(DmmaListOperands));
  const size_t bytes = entries_at + walkers * stride * sizeof(sched::PrecomputedEntry);
  const at::Tensor table = at::detail::empty_cuda({static_cast<int64_t>(bytes)}, at::kByte, device, std::nullopt);
  uint8_t* dbase = table.data_ptr<uint8_t>();
  at::DataPtr host = pinned_block(bytes);
  auto* base = static_cast<uint8_t*>(host.get());
  auto* list = reinterpret_cast<kernels::ListGroup*>(base);
  auto* ops = reinterpret_cast<DmmaListOperands*>(base + operands_at);
  for (int32_t j = 0; j < groups; ++j) list[j] = problems[j].group, ops[j] = problems[j].operands;
  if (host_lists)
    sched::fill_all_cta_schedules(sizes, tiles, walkers, stride, reinterpret_cast<sched::PrecomputedEntry*>(base + entries_at));
  const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(device.index());
  upload_pinned(std::move(host), dbase, bytes, stream);

  p.shape.form = GroupedForm::List;
  p.shape.groups = groups;
  p.shape.list = reinterpret_cast<const kernels::ListGroup*>(dbase);
  p.shape.precomputed = host_lists ? reinterpret_cast<const sched::PrecomputedEntry*>(dbase + entries_at) : nullptr;
  p.shape.precomputed_stride = stride;
  p.shape.out_kind = kernels::OutKind::Double;
  p.list_operands = reinterpret_cast<const DmmaListOperands*>(dbase + operands_at);
  if constexpr (rank2k) {
    p.shape.triangle = tiles;
    kernels::launch_dmma_rank2k(p, tile, static_cast<int>(walkers), stream.stream());
  } else {
    p.shape.tiles = tiles;
    kernels::launch_dmma_grouped(p, tile, static_cast<int>(walkers), stream.stream());
  }
}

// Problem indices in visiting order: by K, descending (seed 000's sorting), or as given.
std::vector<int32_t> visiting_order(const std::vector<int64_t>& ks, bool sort_by_k) {
  if (sort_by_k) return sched::order_by_k_descending(ks);
  std::vector<int32_t> order(ks.size());
  std::iota(order.begin(), order.end(), 0);
  return order;
}

}  // namespace

bool fp64_kernels_enabled() {
  const char* v = std::getenv("TORCH_GROUPED_FP64_KERNELS");
  const std::string setting = v == nullptr ? "" : v;
  TORCH_CHECK_VALUE(setting.empty() || setting == "0" || setting == "1",
                    "TORCH_GROUPED_FP64_KERNELS must be 0 or 1; got '", setting, "'");
  return setting == "1";
}

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
  for (const int32_t j : visiting_order(ks, sort_by_k)) {
    const int32_t i = active[j];
    problems.push_back({kernels::ListGroup{shapes[i].m, shapes[i].n, shapes[i].k, out[i].data_ptr(), out[i].stride(0),
                                           nullptr, 0, nullptr, 0, nullptr, 0},
                        DmmaListOperands{operand(a[i], 0, 1), operand(b[i], 1, 0)}});
  }
  launch_dmma_list(
      problems, [&](sched::TileShape shape) { return sched::GemmTiles{shape, panel}; }, mode != GemmSchedule::Device,
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
  for (const int32_t j : visiting_order(ks, /*sort_by_k=*/true)) by_k.push_back(problems[j]);
  DmmaArgs p{};
  p.alpha = alpha, p.beta = beta;
  launch_dmma_list(
      by_k, [&](sched::TileShape shape) { return sched::SymmetricTiles{sched::Rank2KTiles{shape, uplo}, all_tiles}; },
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
  const int device = a.get_device();
  // the walk's size: its tiles at most (the ragged forms' partial rows or columns counted per group)
  auto bound = [&](sched::TileShape shape) { return kernels::form_tiles(g.form, g.m, g.n, s.groups, shape, s.groups + 1); };
  const DmmaTile tile = choose_tile(/*rank2k=*/false, device, bound);
  g.tiles = sched::GemmTiles{kernels::dmma_tile_shape(tile), panel};
  // the grid: every resident CTA, or as many as the walk has tiles at most if fewer
  const int64_t walkers =
      std::max<int64_t>(1, std::min<int64_t>(kernels::dmma_grouped_resident(device, tile), bound(g.tiles.tile)));
  kernels::launch_dmma_grouped(p, tile, static_cast<int>(walkers), c10::cuda::getCurrentCUDAStream(device).stream());
  return true;
}

}  // namespace torch_grouped
