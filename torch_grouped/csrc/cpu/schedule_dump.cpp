// Private ops that enumerate the schedules of csrc/sched/ so that the CPU tests can check their
// invariants (every tile exactly once, the triangle only, K ranges that partition the work).
// They take only sizes, so they are registered for every backend (CompositeImplicitAutograd).
#include <torch/library.h>

#include <sstream>
#include <vector>

#include "../common/checks.h"
#include "../common/permute_plan.h"
#include "../common/streamk_model_env.h"
#include "../sched/calibration_source.h"
#include "../sched/dmma_tile_choice.h"
#include "../sched/group_order.h"
#include "../sched/grouped_visitor.h"
#include "../sched/list_tail.h"
#include "../sched/rank2k_calibration.h"
#include "../sched/rank2k_tile_choice.h"
#include "../sched/rank2k_visitor.h"
#include "../sched/streamk_model.h"
#include "../sched/tile_choice.h"
#include "../sched/warp_visitor.cuh"
#include "warp_emulation.h"

namespace torch_grouped {
namespace {

// One answer of the warp search: the tile and its group's sizes.
struct TileAnswer {
  sched::TileCoord coord{};
  int64_t m = 0, n = 0;
  bool operator==(const TileAnswer& o) const {
    return coord.group == o.coord.group && coord.tile_m == o.coord.tile_m && coord.tile_n == o.coord.tile_n &&
           coord.valid == o.coord.valid && m == o.m && n == o.n;
  }
};

at::Tensor rows_to_tensor(const std::vector<std::vector<int64_t>>& rows, int64_t width) {
  at::Tensor t = at::empty({static_cast<int64_t>(rows.size()), width}, at::kLong);
  auto acc = t.accessor<int64_t, 2>();
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t j = 0; j < width; ++j) acc[i][j] = rows[i][j];
  return t;
}

// The tiles each walker visits by the warp-parallel search of the device kernels
// (sched::WarpGroupedVisitor, with or without `Remember`), run lane by lane on an emulated warp:
// walker w's linear tile indices w, w + walkers, ... until the search reports the end. Every lane
// must get the same answers; one lane's are returned.
template <class Tiles, bool Remember>
std::vector<std::vector<TileAnswer>> warp_walks(const sched::GroupSizes& sizes, Tiles tiles, int64_t walkers) {
  struct Sizes {
    sched::GroupSizes s;
    void operator()(int32_t g, int64_t& m, int64_t& n) const { m = s.m[g], n = s.n[g]; }
  };
  std::vector<std::vector<std::vector<TileAnswer>>> by_lane(EmulatedWarp::kLanes,
                                                            std::vector<std::vector<TileAnswer>>(walkers));
  // A window of 32 groups costs a search at most 11 exchanges (five shuffles of the prefix sum, a
  // broadcast, the ballot, four broadcasts); a walker's window only moves forward, so its searches
  // look at most at every window once plus once per tile they find, and at the end.
  const int64_t windows = sched::ceil_div(sizes.count, 32);
  const int64_t max_exchanges = 11 * (walkers * (windows + 1) + sched::total_tiles(sizes, tiles));
  EmulatedWarp::run([&] {
    std::vector<std::vector<TileAnswer>>& mine = by_lane[EmulatedWarp::lane()];
    for (int64_t w = 0; w < walkers; ++w) {
      sched::WarpGroupedVisitor<Tiles, Sizes, Remember, EmulatedWarp> visitor{Sizes{sizes}, sizes.count, tiles};
      TileAnswer a;
      while (visitor.find(w + static_cast<int64_t>(mine[w].size()) * walkers, a.coord, a.m, a.n)) mine[w].push_back(a);
    }
  }, max_exchanges);
  for (int lane = 1; lane < EmulatedWarp::kLanes; ++lane)
    TORCH_CHECK(by_lane[lane] == by_lane[0], "schedule: lane ", lane, " of the warp search disagrees with lane 0");
  return by_lane[0];
}

// Visits every tile of every CTA in `mode` ("device": the sequential visitor each CTA runs;
// "host": the precomputed per-CTA lists; "warp" and "warp_remember": the device kernels' search,
// emulated, whose sizes must match the problem's, checked here). Rows: (cta, step, group, tile_m, tile_n, valid) with
// the group numbered as the caller gave it, whatever the visiting order. With clusters of
// `cluster_m` CTAs (grid a multiple of it), `tiles` are the pair tiles dealt to the clusters, and
// the rows give each CTA's own tile of the pair (sched::cluster_member_tile).
template <class Tiles>
at::Tensor dump_grouped(const std::vector<int64_t>& m, const std::vector<int64_t>& n,
                        const std::vector<int32_t>& order, Tiles tiles, int64_t cta_grid,
                        const std::string& mode, int64_t cluster_m = 1) {
  TORCH_CHECK_VALUE(cta_grid >= 1, "schedule: grid must be >= 1, got ", cta_grid);
  TORCH_CHECK_VALUE(cluster_m >= 1 && cta_grid % cluster_m == 0, "schedule: grid (", cta_grid,
                    ") must be a multiple of cluster_m (", cluster_m, ")");
  const int64_t grid = cta_grid / cluster_m;  // the walkers: CTAs, or clusters
  TORCH_CHECK_VALUE(mode == "device" || mode == "host" || mode == "warp" || mode == "warp_remember",
                    "schedule: mode must be 'device', 'host', 'warp' or 'warp_remember', got '", mode, "'");
  std::vector<int64_t> ms, ns;
  for (int32_t g : order) ms.push_back(m[g]), ns.push_back(n[g]);
  const sched::GroupSizes sizes{ms.data(), ns.data(), static_cast<int32_t>(order.size())};
  const int64_t total = sched::total_tiles(sizes, tiles);
  std::vector<std::vector<TileAnswer>> warp;
  if (mode == "warp") warp = warp_walks<Tiles, false>(sizes, tiles, grid);
  if (mode == "warp_remember") warp = warp_walks<Tiles, true>(sizes, tiles, grid);
  std::vector<std::vector<int64_t>> rows;
  for (int64_t cta = 0; cta < grid; ++cta) {  // (a walker: a cluster when cluster_m > 1)
    auto emit = [&](int64_t step, const sched::TileCoord& c) {
      for (int32_t rank = 0; rank < cluster_m; ++rank) {
        const sched::TileCoord own = sched::cluster_member_tile(c, static_cast<int32_t>(cluster_m), rank);
        rows.push_back({cta * cluster_m + rank, step, order[own.group], own.tile_m, own.tile_n, own.valid ? 1 : 0});
      }
    };
    if (!warp.empty()) {
      for (size_t step = 0; step < warp[cta].size(); ++step) {
        const TileAnswer& a = warp[cta][step];
        TORCH_CHECK(a.m == sizes.m[a.coord.group] && a.n == sizes.n[a.coord.group],
                    "schedule: the warp search gave group ", a.coord.group, " sizes ", a.m, " x ", a.n);
        emit(static_cast<int64_t>(step), a.coord);
      }
    } else if (mode == "device") {
      sched::GroupedVisitor<Tiles> visitor(sizes, tiles);
      sched::TileCoord c;
      for (int64_t step = 0; visitor.find(cta + step * grid, c); ++step) emit(step, c);
    } else {
      std::vector<sched::PrecomputedEntry> entries(sched::entries_for_cta(total, grid, cta));
      sched::fill_cta_schedule(sizes, tiles, grid, cta, entries.data());
      // The one-pass fill the launcher uses must give every CTA the same list.
      const int64_t stride = sched::ceil_div(total, grid);
      std::vector<sched::PrecomputedEntry> all(grid * stride);
      sched::fill_all_cta_schedules(sizes, tiles, grid, stride, all.data());
      for (size_t step = 0; step < entries.size(); ++step) {
        const sched::PrecomputedEntry e = all[cta * stride + step];
        TORCH_CHECK(e.group == entries[step].group && e.group_first_tile == entries[step].group_first_tile,
                    "schedule: the one-pass fill disagrees with the per-CTA fill at CTA ", cta, " step ", step);
        emit(step, sched::decode_precomputed(sizes, tiles, entries[step], cta + step * grid));
      }
      for (int64_t step = entries.size(); step < stride; ++step)
        TORCH_CHECK(all[cta * stride + step].group == -1, "schedule: a slot past a CTA's last tile is not empty");
    }
  }
  return rows_to_tensor(rows, 6);
}

at::Tensor schedule_grouped(at::IntArrayRef m, at::IntArrayRef n, at::IntArrayRef k, int64_t tile_m,
                            int64_t tile_n, int64_t grid, const std::string& mode, bool sort_by_k,
                            int64_t panel, int64_t cluster_m) {
  TORCH_CHECK_VALUE(m.size() == n.size() && n.size() == k.size(), "schedule: m, n, k differ in length");
  const std::vector<int64_t> mv(m.begin(), m.end()), nv(n.begin(), n.end()), kv(k.begin(), k.end());
  const auto order = sched::visiting_order(kv, sort_by_k);
  TORCH_CHECK_VALUE(panel >= 0, "schedule: panel must be >= 0, got ", panel);
  TORCH_CHECK_VALUE(cluster_m >= 1, "schedule: cluster_m must be >= 1, got ", cluster_m);
  for (size_t i = 0; i < mv.size(); ++i)  // (the kernels' 32-bit coordinates; GemmTiles divides in 32 bits)
    TORCH_CHECK_VALUE(mv[i] >= 0 && nv[i] >= 0 && mv[i] <= INT32_MAX && nv[i] <= INT32_MAX,
                      "schedule: group sizes must lie in [0, 2^31), got ", mv[i], " x ", nv[i]);
  const sched::GemmTiles tiles{{static_cast<int32_t>(tile_m * cluster_m), static_cast<int32_t>(tile_n)},
                               static_cast<int32_t>(panel)};
  return dump_grouped(mv, nv, order, tiles, grid, mode, cluster_m);
}

// `all_tiles`: the GEMM walk over the whole square that the syr2k kernel runs for comparison.
at::Tensor schedule_rank2k(at::IntArrayRef n, int64_t tile_m, int64_t tile_n, int64_t grid,
                           const std::string& uplo, bool all_tiles, const std::string& mode) {
  TORCH_CHECK_VALUE(uplo == "L" || uplo == "U", "schedule: uplo must be 'L' or 'U'");
  const bool pow2 = tile_m > 0 && tile_n > 0 && (tile_m & (tile_m - 1)) == 0 && (tile_n & (tile_n - 1)) == 0;
  TORCH_CHECK_VALUE(pow2, "schedule: Rank2K tile sides must be powers of two, got ", tile_m, "x", tile_n);
  const std::vector<int64_t> nv(n.begin(), n.end());
  const sched::SymmetricTiles tiles{
      {{static_cast<int32_t>(tile_m), static_cast<int32_t>(tile_n)}, uplo == "L" ? sched::Uplo::Lower : sched::Uplo::Upper},
      all_tiles};
  return dump_grouped(nv, nv, sched::identity_order(nv.size()), tiles, grid, mode);
}

// Rows: (cta, tile, k_begin, k_end, starts the tile (k_begin = 0), workspace slot (-1: a whole
// tile), segments of the tile - 1, slot of the tile's first segment (-1: one segment), iterations
// per tile, workspace slots, decomposition, segment (K order), the segment's run in the fixup's
// FixupTree (with the separate fixup: its part, SeparateFixup), partials read one after another
// by the tile's fixup (0: not cut), 1 where the separate kernel sums the tile, the busiest CTA's
// iterations as the model counts them (sched::model_iters_per_cta), and the plan's
// FixupStats::extra_partials and stream_k_cut (the model's e and f terms), and the CTAs the plan
// launches (StreamKPlan::grid: those with work)). `separate_fixup`: whether the
// plan may use the separate fixup kernel, as streamk_mm's does (false: syr2k's); `dram_tbps`: the
// DRAM rate of `auto`'s floor on unshared Stream-K reads (sched::unshared_operand_mb; 0: none).
at::Tensor schedule_streamk(int64_t m, int64_t n, int64_t k, int64_t tile_m, int64_t tile_n,
                            int64_t tile_k, const std::string& decomposition, int64_t splits,
                            int64_t grid, bool separate_fixup, double dram_tbps) {
  const at::Tensor a = at::empty({m, k}), b = at::empty({k, n});
  bool is_auto = false;
  const sched::Decomposition d = check_streamk(a, b, decomposition, splits, grid, is_auto);
  TORCH_CHECK_VALUE(grid >= 1 && splits >= 1, "schedule: grid and splits must be >= 1");
  TORCH_CHECK_VALUE(dram_tbps >= 0.0, "schedule: dram_tbps must be >= 0");
  sched::StreamKModel model;
  model.dram_us_per_mb = dram_tbps > 0.0 ? (1 << 20) / (dram_tbps * 1e6) : 0.0;
  const sched::StreamKPlan plan =
      sched::resolve_streamk_plan(streamk_model_from_env(model), d, is_auto, splits, m, n, k, tile_m, tile_n, tile_k, grid,
                                  separate_fixup);
  std::vector<std::vector<int64_t>> rows;
  const sched::FixupStats stats = plan.fixup_stats();
  for (int64_t cta = 0; cta < plan.grid; ++cta) {
    sched::StreamKCursor cursor = plan.begin(cta);
    sched::StreamKWorkUnit u;
    while (plan.next(cta, cursor, u)) {
      const int64_t segments = plan.segments(u.tile);
      const bool separate = plan.separate_fixup && segments > 1;
      const int64_t run = separate ? sched::SeparateFixup::part_of(segments, u.segment)
                                   : sched::FixupTree::of(segments).group_of(u.segment);
      rows.push_back({cta, u.tile, u.k_begin, u.k_end, u.k_begin == 0 ? 1 : 0, u.slot, segments - 1,
                      segments > 1 ? plan.segment_slot(u.tile, 0) : -1, plan.iters_per_tile,
                      plan.workspace_slots(), static_cast<int64_t>(plan.decomposition), u.segment, run,
                      plan.fixup_serial_reads(u.tile), separate ? 1 : 0, sched::model_iters_per_cta(plan),
                      stats.extra_partials, stats.stream_k_cut ? 1 : 0, plan.grid});
    }
  }
  return rows_to_tensor(rows, 19);
}

// Rows (row, col) of a partial tile's float4s in their slot, in slot order: each holds (row, col),
// (row, col + 1), (row + 8, col) and (row + 8, col + 1) of the tile (sched::PartialQuad).
at::Tensor streamk_partial_quads(int64_t tile_m, int64_t tile_n) {
  TORCH_CHECK_VALUE(tile_m > 0 && tile_m % 64 == 0 && tile_n > 0 && tile_n % 8 == 0,
                    "partial quads: tile_m must be a multiple of 64 and tile_n of 8");
  std::vector<std::vector<int64_t>> rows;
  for (int64_t quad = 0; quad < tile_m * tile_n / 4; ++quad) {
    int64_t row = 0, col = 0;
    sched::PartialQuad::place(quad, tile_n, row, col);
    rows.push_back({row, col});
  }
  return rows_to_tensor(rows, 2);
}

// The planner's choice, as text: the simplified shape, the kernel, and for a box its axes
// (input order), extents, tile positions, padding and count.
std::string permute_plan(at::IntArrayRef sizes, at::IntArrayRef strides, at::IntArrayRef dims,
                         int64_t element_size, int64_t tile_elems) {
  TORCH_CHECK_VALUE(sizes.size() == strides.size() && sizes.size() == dims.size() && sizes.size() <= 8,
                    "permute plan: sizes, strides and dims must have one entry per axis (at most 8)");
  const PermuteShape s = simplify_permutation(static_cast<int>(sizes.size()), sizes.data(),
                                              strides.data(), dims.data());
  std::ostringstream out;
  out << "shape";
  for (int d = 0; d < s.rank; ++d) out << " " << s.size[d] << "@" << s.in_stride[d];
  const PermuteKind kind = choose_permute_kind(s, element_size);
  const char* names[] = {"empty", "rows", "box", "gather"};
  out << " | " << names[static_cast<int>(kind)];
  if (kind == PermuteKind::Box) {
    const BoxPlan b = plan_box(s, element_size, tile_elems);
    out << " | axes";
    for (int k = 0; k < b.count; ++k) out << " " << b.axis[k] << ":" << (1 << b.log2_extent[k]) << "@" << b.smem_stride[k];
    out << " | out_order";
    for (int k = 0; k < b.count; ++k) out << " " << b.out_order[k];
    out << " | pad " << b.pad << " every " << (1 << b.pad_shift) << " | elems " << b.box_elems << " smem "
        << b.smem_elems << " boxes " << b.total_boxes;
  }
  return out.str();
}

// widen_elements on the simplified shape (the default CUDA path widens; other variants do not), as
// text: the element size it chose and the shape in those elements. `base`: the input's address.
std::string permute_widen(at::IntArrayRef sizes, at::IntArrayRef strides, at::IntArrayRef dims, int64_t element_size,
                          int64_t base) {
  TORCH_CHECK_VALUE(sizes.size() == strides.size() && sizes.size() == dims.size() && sizes.size() <= 8,
                    "permute widen: sizes, strides and dims must have one entry per axis (at most 8)");
  PermuteShape s = simplify_permutation(static_cast<int>(sizes.size()), sizes.data(), strides.data(), dims.data());
  const int64_t wide = widen_elements(s, element_size, static_cast<uintptr_t>(base));
  std::ostringstream out;
  out << wide << " bytes | shape";
  for (int d = 0; d < s.rank; ++d) out << " " << s.size[d] << "@" << s.in_stride[d];
  out << " | numel " << s.numel;
  return out.str();
}

double round_robin_makespan(at::IntArrayRef counts, at::ArrayRef<double> costs, int64_t grid) {
  TORCH_CHECK_VALUE(counts.size() == costs.size(), "round_robin_makespan: one cost per group");
  TORCH_CHECK_VALUE(grid >= 1, "round_robin_makespan: grid must be >= 1, got ", grid);
  return sched::round_robin_makespan(counts.data(), costs.data(), static_cast<int32_t>(counts.size()), grid);
}

// The tile {m, n, cluster_m} gemm's heuristic picks for groups (m, n, k) visited in the order
// given, on `sms` SMs; `a_m_major`: among the tiles of the kernels that read A M-major.
std::vector<int64_t> choose_gemm_tile(at::IntArrayRef m, at::IntArrayRef n, at::IntArrayRef k, int64_t sms,
                                      bool a_m_major) {
  TORCH_CHECK_VALUE(m.size() == n.size() && m.size() == k.size() && !m.empty(),
                    "choose_gemm_tile: one m, n and k per group, at least one group");
  TORCH_CHECK_VALUE(sms >= 1, "choose_gemm_tile: sms must be >= 1, got ", sms);
  const sched::TileOption& t =
      sched::choose_list_tile(m.data(), n.data(), k.data(), static_cast<int32_t>(m.size()), sms,
                              a_m_major ? sched::TileOptions(sched::kKGroupedTileOptions) : sched::kListTileOptions);
  return {t.m, t.n, t.cluster_m};
}

// The corner gemm's list hands to the Stream-K kernel (sched/list_tail.h): {row0, col0} of the
// last group, or empty. The tile is one of the list's options ({m, n, cluster_m}); rule=False
// forces the carve wherever the geometry allows.
std::vector<int64_t> list_tail_corner(at::IntArrayRef m, at::IntArrayRef n, at::IntArrayRef k, at::IntArrayRef tile,
                                      int64_t walkers, bool rule) {
  TORCH_CHECK_VALUE(m.size() == n.size() && m.size() == k.size() && !m.empty(),
                    "list_tail_corner: one m, n and k per group, at least one group");
  TORCH_CHECK_VALUE(walkers >= 1, "list_tail_corner: walkers must be >= 1, got ", walkers);
  TORCH_CHECK_VALUE(tile.size() == 3, "list_tail_corner: tile is {m, n, cluster_m}");
  const sched::TileOption* option = nullptr;
  for (const sched::TileOption& t : sched::kListTileOptions)
    if (t.m == tile[0] && t.n == tile[1] && t.cluster_m == tile[2]) option = &t;
  TORCH_CHECK_VALUE(option != nullptr, "list_tail_corner: no list tile ", tile);
  for (size_t g = 0; g < m.size(); ++g)
    TORCH_CHECK_VALUE(m[g] > 0 && n[g] > 0 && k[g] > 0, "list_tail_corner: every group needs m, n and k > 0");
  const std::optional<sched::TailCorner> c =
      sched::list_tail_corner(m.data(), n.data(), k.data(), static_cast<int32_t>(m.size()), *option, walkers, rule);
  if (!c) return {};
  return {c->row0, c->col0};
}

// The tile {m, n, cluster_m} the weight gradient's model picks for `groups` problems of m x n whose K
// averages k, on `sms` SMs.
std::vector<int64_t> choose_k_grouped_tile(int64_t m, int64_t n, int64_t groups, int64_t k, int64_t sms) {
  TORCH_CHECK_VALUE(m > 0 && n > 0 && groups > 0 && k > 0 && sms > 0,
                    "choose_k_grouped_tile: m, n, groups, k and sms must be positive");
  const sched::TileOption& t = sched::choose_k_grouped_tile(m, n, groups, k, sms);
  return {t.m, t.n, t.cluster_m};
}

// The tile {m, n, cluster_m} grouped_mm's forward model picks for `groups` problems of K = k in
// `form` ("2d_3d": rows grouped, m x n the whole output; "3d_2d": columns grouped, likewise;
// "3d_3d": each problem m x n) on `sms` SMs.
std::vector<int64_t> choose_grouped_mm_tile(const std::string& form, int64_t m, int64_t n, int64_t groups, int64_t k,
                                            int64_t sms) {
  TORCH_CHECK_VALUE(form == "2d_3d" || form == "3d_2d" || form == "3d_3d",
                    "choose_grouped_mm_tile: form must be '2d_3d', '3d_2d' or '3d_3d', got '", form, "'");
  TORCH_CHECK_VALUE(m > 0 && n > 0 && groups > 0 && k > 0 && sms > 0,
                    "choose_grouped_mm_tile: m, n, groups, k and sms must be positive");
  const sched::GroupedForm f = form == "2d_3d"   ? sched::GroupedForm::RaggedM
                               : form == "3d_2d" ? sched::GroupedForm::RaggedN
                                                 : sched::GroupedForm::Batched;
  const sched::TileOption& t = sched::choose_grouped_mm_tile(f, m, n, groups, k, sms);
  return {t.m, t.n, t.cluster_m};
}

// The tile {m, n} of the fp64 DMMA kernel that its model picks for a list (gemm; syr2k when rank2k:
// orders n, m ignored, the triangle walk) of groups (m, n, k) in visiting order, on `sms` SMs.
std::vector<int64_t> choose_fp64_tile(at::IntArrayRef m, at::IntArrayRef n, at::IntArrayRef k, int64_t sms, bool rank2k) {
  TORCH_CHECK_VALUE(m.size() == n.size() && m.size() == k.size() && !m.empty(),
                    "choose_fp64_tile: one m, n and k per group, at least one group");
  TORCH_CHECK_VALUE(sms >= 1, "choose_fp64_tile: sms must be >= 1, got ", sms);
  const sched::TileOption& t = sched::choose_dmma_list_tile(m.data(), n.data(), k.data(), static_cast<int32_t>(m.size()),
                                                            sms, rank2k, /*all_tiles=*/false);
  return {t.m, t.n};
}

// Whether streamk_mm reads m x n's operands by row copies (sched::row_copies_pay), given the pieces
// of each operand read so (4, 8 or 16 bytes; 0: TMA reads it), the grid, whether the other
// operand goes through a pitched copy anyway, and for a GPU whose copies are cheap (an H200) the
// depth k the rule then weighs.
bool row_copies_pay(int64_t m, int64_t n, int64_t grid, int64_t a_width, int64_t b_width, bool pitched_beside,
                    int64_t k, bool copies_cheap) {
  const auto piece = [](int64_t w) { return w == 0 || w == 4 || w == 8 || w == 16; };
  TORCH_CHECK_VALUE(m > 0 && n > 0 && grid > 0, "row_copies_pay: m, n and grid must be positive");
  TORCH_CHECK_VALUE(piece(a_width) && piece(b_width) && a_width + b_width > 0,
                    "row_copies_pay: widths are 4, 8 or 16 bytes, or 0 (TMA), and not both 0");
  TORCH_CHECK_VALUE(!copies_cheap || k > 0, "row_copies_pay: copies_cheap weighs k, which must be positive");
  return sched::row_copies_pay(m, n, k, grid, int(a_width), int(b_width), pitched_beside, copies_cheap);
}

// Whether streamk_mm runs m x n x k on `grid` CTAs in its 64 x 64 tiles (sched::small_tile_pays).
bool streamk_small_tile_pays(int64_t m, int64_t n, int64_t k, int64_t grid) {
  TORCH_CHECK_VALUE(m >= 0 && n >= 0 && k >= 0 && grid > 0,
                    "streamk_small_tile_pays: m, n and k must be non-negative and grid positive");
  return sched::small_tile_pays(m, n, k, grid);
}

// Whether streamk_mm runs m x n in 2 x 1 clusters (sched::streamk_clusters_pay), given its tile
// width and whether its kernel reads and writes the operands and output in place.
bool streamk_clusters_pay(int64_t m, int64_t n, int64_t tile_n, bool in_place) {
  TORCH_CHECK_VALUE(m > 0 && n > 0, "streamk_clusters_pay: m and n must be positive");
  TORCH_CHECK_VALUE(tile_n == 128 || tile_n == 256, "streamk_clusters_pay: tile_n is 128 or 256");
  return sched::streamk_clusters_pay(in_place, tile_n, m, n);
}

// sched::choose_streamk_tile over a 128 x 256 and a 128 x 128 tile, and a 192 x 128 one where
// `tall` is given (K 64), each with its model's constants a..f: {tile_m, tile_n} of the tile
// `auto` takes for m x n x k on `sms` CTAs.
std::vector<int64_t> choose_streamk_tile(int64_t m, int64_t n, int64_t k, int64_t sms, at::ArrayRef<double> wide,
                                         at::ArrayRef<double> narrow, std::optional<at::ArrayRef<double>> tall) {
  TORCH_CHECK_VALUE(wide.size() == 6 && narrow.size() == 6 && (!tall.has_value() || tall->size() == 6),
                    "schedule: a model is six constants a..f");
  TORCH_CHECK_VALUE(m > 0 && n > 0 && k > 0 && sms > 0, "schedule: sizes and sms must be positive");
  auto model = [](at::ArrayRef<double> v) { return sched::StreamKModel{v[0], v[1], v[2], v[3], v[4], v[5]}; };
  std::vector<sched::StreamKTileOption> options{{{128, 256}, model(wide)}, {{128, 128}, model(narrow)}};
  if (tall.has_value()) options.push_back({{192, 128}, model(*tall)});
  const sched::TileShape chosen =
      options[sched::choose_streamk_tile(options.data(), int(options.size()), m, n, k, 64, sms, /*may_separate=*/true)].tile;
  return {chosen.m, chosen.n};
}

// syr2k's choice of 2 x 1 clusters for its tile walk (128-row tiles) over problems of orders n,
// with `ctas` CTAs and `clusters` clusters resident at once.
int64_t rank2k_cluster(at::IntArrayRef n, const std::string& uplo, int64_t ctas, int64_t clusters, bool all_tiles) {
  TORCH_CHECK_VALUE(uplo == "L" || uplo == "U", "rank2k_cluster: uplo must be 'L' or 'U', got '", uplo, "'");
  TORCH_CHECK_VALUE(ctas >= 1 && clusters >= 0, "rank2k_cluster: ctas must be >= 1 and clusters >= 0");
  const sched::SymmetricTiles tiles{sched::Rank2KTiles{{128, 128}, uplo == "L" ? sched::Uplo::Lower : sched::Uplo::Upper},
                                    all_tiles};
  return sched::rank2k_walk_cluster(n.data(), static_cast<int32_t>(n.size()), tiles, ctas, clusters);
}

// The GPU whose Stream-K calibration serves a GPU of this name, compute capability and SM count
// ("": none, the defaults).
std::string calibration_source(const std::string& name, int64_t major, int64_t minor, int64_t sms) {
  const sched::StreamKCalibration* entry = sched::streamk_calibration_for(
      {name.c_str(), static_cast<int>(major), static_cast<int>(minor), static_cast<int>(sms)});
  return entry != nullptr ? entry->device_name : "";
}

// syr2k's one-problem choice for order n and kernel depth k (3xTF32: three parts) in K steps of
// tile_k (64; 32: TF32, whose kernel runs 128 x 128 tiles only) on `sms` CTAs, with the Rank2K model
// calibrated for `device_name`, as the CUDA path makes it for `auto` (its plan cache aside): {tile
// width (128 or 256: sched::rank2k_wide_tile_pays), decomposition, splits, grid} of the plan.
std::vector<int64_t> rank2k_plan(int64_t n, int64_t k, int64_t tile_k, int64_t sms, const std::string& device_name) {
  TORCH_CHECK_VALUE(n > 0 && k > 0 && sms > 0, "rank2k_plan: n, k and sms must be positive");
  TORCH_CHECK_VALUE(tile_k == 64 || tile_k == 32, "rank2k_plan: tile_k is 64 or 32 (TF32), got ", tile_k);
  const sched::StreamKModel* square = sched::rank2k_calibrated_model(device_name.c_str());
  TORCH_CHECK_VALUE(square != nullptr, "rank2k_plan: no Rank2K calibration for '", device_name, "'");
  const sched::Rank2KOneProblem work =
      sched::rank2k_one_problem(*square, n, k, tile_k, sched::Uplo::Lower, sched::Decomposition::DataParallel,
                                /*is_auto=*/true, /*forced_tile_n=*/0, sms, &sched::resolve_streamk_plan);
  const sched::StreamKPlan& plan = work.plan;
  return {work.tiles.triangle.tile.n, static_cast<int64_t>(plan.decomposition), plan.splits, plan.grid};
}

}  // namespace

TORCH_LIBRARY_IMPL(grouped, CompositeImplicitAutograd, m) {
  m.impl("_rank2k_plan", &rank2k_plan);
  m.impl("_rank2k_cluster", &rank2k_cluster);
  m.impl("_round_robin_makespan", &round_robin_makespan);
  m.impl("_choose_gemm_tile", &choose_gemm_tile);
  m.impl("_list_tail_corner", &list_tail_corner);
  m.impl("_choose_k_grouped_tile", &choose_k_grouped_tile);
  m.impl("_choose_grouped_mm_tile", &choose_grouped_mm_tile);
  m.impl("_choose_fp64_tile", &choose_fp64_tile);
  m.impl("_permute_plan", &permute_plan);
  m.impl("_permute_widen", &permute_widen);
  m.impl("_schedule_grouped", &schedule_grouped);
  m.impl("_schedule_rank2k", &schedule_rank2k);
  m.impl("_calibration_source", &calibration_source);
  m.impl("_schedule_streamk", &schedule_streamk);
  m.impl("_streamk_partial_quads", &streamk_partial_quads);
  m.impl("_choose_streamk_tile", &choose_streamk_tile);
  m.impl("_row_copies_pay", &row_copies_pay);
  m.impl("_streamk_small_tile_pays", &streamk_small_tile_pays);
  m.impl("_streamk_clusters_pay", &streamk_clusters_pay);
}

}  // namespace torch_grouped
