// What the host hands the persistent grouped GEMM kernel (grouped_gemm_sm90.cuh), and how a group
// index becomes one matmul problem. Plain structs, shared by the host launcher and the device.
#pragma once
#include <cuda.h>  // CUtensorMap

#include <cstdint>

#include "../sched/common.h"
#include "../sched/grouped_form.h"
#include "../sched/grouped_visitor.h"
#include "../sched/rank2k_visitor.h"
#include "../sched/streamk_plan.h"

namespace torch_grouped::kernels {

using sched::GroupedForm;
enum class OutKind : int32_t { BFloat16 = 0, Half = 1, Float = 2, Double = 3 };  // (Double: the fp64 DMMA kernel)

// One problem of the list API, as the host writes it into the device table. The tensor maps of
// its operands are built from these on the device (csrc/cuda/list_maps.cu): encoding them on the
// host costs microseconds each, more than a small group's whole matmul.
struct ListGroup {
  int64_t m, n, k;
  void* c;
  int64_t ldc;      // elements
  const void* a;    // [m, k] rows of length k; M-major (the A-M-major kernels): [k, m] rows of length m
  int64_t lda;
  const void* b;    // K-major: [n, k] rows of length k; N-major: [k, n] rows of length n
  int64_t ldb;
  const void* c_in;  // syr2k: the `uplo` triangle of c is read (beta != 0), else null
  int64_t ldc_in;
};

// An operand whose rows TMA cannot address (a row stride or base that is not a multiple of 16
// bytes) but whose rows all start on a `width`-byte boundary (4, 8 or 16), read by the row-copy
// kernels (kernels/row_copy.cuh) from where it lies: `rows` rows of `inner` 2-byte elements, unit
// stride along them, `ld` elements from one row to the next (any value, 0 included). base null:
// the operand goes through its TMA map.
struct RowSource {
  const char* base;
  int64_t ld;
  int64_t rows, inner;
  int32_t width;
};

struct GroupedGemmArgs {
  // RaggedM/RaggedN/Batched: A as [batch, rows, K] (K fastest); B as [batch, N, K] when K-major,
  // [batch, K, N] when N-major. (RaggedK: A as [1, K, M], B as [1, K, N]; the maps here are the
  // templates of the per-group ones.) The ragged dimension is addressed by coordinates, so one map
  // serves every group: rows of a neighbouring group that a tile reads are never stored.
  CUtensorMap a_map;
  CUtensorMap b_map;
  const CUtensorMap* a_maps;  // List, RaggedK: per-group maps in device memory
  const CUtensorMap* b_maps;
  const ListGroup* list;      // List: per-group sizes and outputs in device memory
  const int32_t* offs;        // RaggedM/RaggedN: cumulative group ends, device memory
  const sched::PrecomputedEntry* precomputed;  // host-precompute mode: per-CTA lists, else null
  int64_t precomputed_stride;                  // entries per CTA in `precomputed`
  int64_t m, n, k;  // RaggedM: total rows; RaggedN: total columns; RaggedK: total K; Batched: sizes per batch
  void* c;          // output of the non-list forms
  int64_t ldc;      // elements
  int64_t c_batch_stride;
  const void* c_in;  // Batched Rank2K (one syr2k problem): beta's c, or null
  int64_t ldc_in;
  int32_t groups;   // groups of the call; the ragged forms visit one more (see below)
  GroupedForm form;
  OutKind out_kind;
  sched::GemmTiles tiles;
  // Rank2K kernels (syr2k): out = alpha (A Bᵀ + B Aᵀ) + beta c over the `uplo` triangle's tiles,
  // each written with its mirror; `triangle.all_tiles` walks every tile instead (the GEMM
  // scheduler, for comparison), each writing only itself.
  sched::SymmetricTiles triangle;
  float alpha, beta;
  // Stream-K kernels (streamk_mm): one matmul (the Batched form, one group) cut into work units
  // by `streamk`. Partial tiles go to `workspace` (fp32, one tile per slot); `counters` count the
  // segments of each tile in (one per tile and consumer warpgroup, all zero at launch: see
  // streamk_fixup.cuh).
  sched::StreamKPlan streamk;
  float* workspace;
  int32_t* counters;
  // Row-copy kernels (GroupedGemmConfig::RowCopies, streamk_mm): A as [M, K], B as [N, K] (K-major)
  // or [K, N] (N-major), for each operand TMA cannot address; the other's base is null.
  RowSource a_rows, b_rows;
  // The output as [batch, rows, N] in boxes of one 128-byte line x 64 rows (128-byte swizzle),
  // for the epilogue of the TMA-store kernels (store_tile_tma), when the output's rows are 16-byte
  // aligned: streamk_mm and the Batched form (one problem, or one per batch: exact), RaggedM (all
  // groups' rows: exact along N, so only 64-row blocks inside their group go through TMA). TMA
  // clips each box at the tensor's edges, not at a group's. (Last, so that the other fields keep
  // their offsets in the kernels that never read it.)
  CUtensorMap c_map;
  const CUtensorMap* c_maps;  // List: per-group output maps in device memory (exact)
  // Rank2K kernels with TMA stores (GroupedGemmConfig::TmaStore): c_map holds the one problem's
  // output; false: every tile goes through the threads' stores.
  bool c_map_set;
  // TF32 kernels (Rank2K, Stream-K), 3xTF32 (cuda/tf32_operands.h): each operand row is [hi | lo],
  // lo starting at the K block after hi's last, and each pass runs three parts of the problem's K:
  // A-role hi·hi, hi·lo, lo·hi. A problem's k is then 3 × hi's padded length (kernels::split_k_coords).
  bool tf32_split;
};

// 3xTF32: the K coordinates of pass-local K block `b` (of 3·nk, nk = the blocks of one part) in
// the maps of a (read hi, hi, lo over the three parts) and b (hi, lo, hi), whichever role each
// plays in the pass (a's products with b's are a·bᵀ in the first pass, b·aᵀ in the second).
TG_HOST_DEVICE void split_k_coords(int32_t b, int32_t nk, int32_t block_k, int32_t& k_in_a, int32_t& k_in_b) {
  const int32_t part = b / nk, j = b - part * nk;
  k_in_a = ((part == 2 ? nk : 0) + j) * block_k;
  k_in_b = ((part == 1 ? nk : 0) + j) * block_k;
}

// One matmul as the kernel sees it: sizes, where its tiles start in the tensor maps, its output.
struct GroupProblem {
  int64_t m, n, k;
  int32_t a_row, a_batch;  // A map coordinates of the problem's row 0
  int32_t b_col, b_batch;  // B map coordinates of the problem's column 0
  int32_t k_origin;        // RaggedK: the K coordinate of the problem's K index 0
  const CUtensorMap* a;
  const CUtensorMap* b;
  char* c;                 // element (0, 0) of the problem's output
  int64_t ldc;
  const void* c_in;        // Rank2K: beta's c, or null
  int64_t ldc_in;
};

TG_HOST_DEVICE int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

TG_HOST_DEVICE int64_t out_element_size(OutKind k) { return k == OutKind::Double ? 8 : (k == OutKind::Float ? 4 : 2); }

// The number of groups the visitor walks. The ragged forms add a virtual last group with K = 0
// that covers the rows (columns) after the last offset, so that the kernel writes their zeros
// itself: no separate fill, nothing read on the host.
TG_HOST_DEVICE int32_t visited_groups(const GroupedGemmArgs& p) {
  const bool ragged = p.form == GroupedForm::RaggedM || p.form == GroupedForm::RaggedN;
  return p.groups + (ragged ? 1 : 0);
}

// Where ragged group `g` of `groups` lies in [0, total): offsets clamped into [previous end, total]
// so that even invalid offsets (which the device cannot report without a synchronisation) only ever
// address memory inside the tensors. Group `groups` is the virtual tail [last end, total).
struct RaggedRange {
  int64_t start, end;
};
template <class ReadOffset>
TG_HOST_DEVICE RaggedRange ragged_range(int32_t g, int32_t groups, int64_t total, ReadOffset read) {
  const int64_t start = g == 0 ? 0 : clamp64(read(g - 1), 0, total);
  const int64_t end = g == groups ? total : clamp64(read(g), start, total);
  return {start, end};
}

// Batch `g` of the Batched form as a problem. (The Stream-K kernels, whose form is always this
// one, call it directly: resolve_group's switch on the form is code that a lone tile's CTA would
// fetch on its way to its first load; benchmarks/NOTES.md, session 27.)
TG_HOST_DEVICE GroupProblem batched_problem(const GroupedGemmArgs& p, int32_t g) {
  GroupProblem q{};
  q.a = &p.a_map;
  q.b = &p.b_map;
  q.ldc = p.ldc;
  q.m = p.m, q.n = p.n, q.k = p.k;
  q.a_batch = q.b_batch = g;
  q.c = static_cast<char*>(p.c) + g * p.c_batch_stride * out_element_size(p.out_kind);
  q.c_in = p.c_in, q.ldc_in = p.ldc_in;
  return q;
}

// Group `g` of the call as a problem.
template <class ReadOffset>
TG_HOST_DEVICE GroupProblem resolve_group(const GroupedGemmArgs& p, int32_t g, ReadOffset read) {
  if (p.form == GroupedForm::Batched) return batched_problem(p, g);
  GroupProblem q{};
  const int64_t es = out_element_size(p.out_kind);
  q.a = &p.a_map;
  q.b = &p.b_map;
  q.ldc = p.ldc;
  if (p.form == GroupedForm::List) {
    const ListGroup lg = p.list[g];
    q.m = lg.m, q.n = lg.n, q.k = lg.k;
    q.a = p.a_maps + g, q.b = p.b_maps + g;
    q.c = static_cast<char*>(lg.c), q.ldc = lg.ldc;
    q.c_in = lg.c_in, q.ldc_in = lg.ldc_in;
    return q;
  }
  if (p.form == GroupedForm::RaggedK) {
    const RaggedRange r = ragged_range(g, p.groups, p.k, read);
    q.m = p.m, q.n = p.n, q.k = r.end - r.start;
    q.k_origin = static_cast<int32_t>(r.start);
    q.a = p.a_maps + g, q.b = p.b_maps + g;
    q.c = static_cast<char*>(p.c) + g * p.c_batch_stride * es;
    return q;
  }
  const int64_t total = p.form == GroupedForm::RaggedM ? p.m : p.n;
  const auto [start, end] = ragged_range(g, p.groups, total, read);
  q.k = g == p.groups ? 0 : p.k;  // the virtual tail group: zeros
  if (p.form == GroupedForm::RaggedM) {
    q.m = end - start, q.n = p.n;
    q.a_row = static_cast<int32_t>(start);
    q.b_batch = g == p.groups ? 0 : g;
    q.c = static_cast<char*>(p.c) + start * p.ldc * es;
  } else {
    q.m = p.m, q.n = end - start;
    q.a_batch = g == p.groups ? 0 : g;
    q.b_col = static_cast<int32_t>(start);
    q.c = static_cast<char*>(p.c) + start * es;
  }
  return q;
}

}  // namespace torch_grouped::kernels
