// Work decomposition of one matmul for a persistent grid (seed 001, the Stream-K paper).
//
// Output tiles are linearised m → n (n fastest within a row of tiles); each tile needs
// `iters_per_tile` MAC-loop iterations along K. The first `sk_tiles` tiles are shared among all
// CTAs Stream-K style: their iterations, laid end to end, are cut into `grid` ranges whose lengths
// differ by at most one. The remaining tiles are handed out whole (data-parallel) or, for
// `split_k`, as `splits` fixed K slices per tile. Every decomposition of the paper is a choice of
// `sk_tiles` and `splits`:
//   data_parallel   sk_tiles = 0
//   split_k         sk_tiles = 0, splits = s
//   stream_k        sk_tiles = all tiles
//   dp_one_tile_sk  sk_tiles = tiles mod grid (full DP waves, the ragged last wave Stream-K)
//   two_tile_sk_dp  sk_tiles = grid + tiles mod grid (one DP wave folded into the SK part, so every
//                   SK CTA has between one and two tiles of work), the rest data-parallel.
//
// A tile cut into several segments is reduced without waiting: every segment stores its fp32
// partial tile in its own workspace slot and counts itself in; the last to arrive adds the
// partials in K order and writes the tile (FixupTree below: for many segments, in two levels).
// With `separate_fixup` (streamk_mm, when some tile has SeparateFixup::kMinSegments segments or
// more) the matmul kernel only stores the partials, and a second kernel sums every cut tile
// in parallel over its elements (SeparateFixup below). Either way the order of every sum is
// fixed, so results are deterministic, and no CTA ever waits for another (no co-residency
// assumption).
//
// A Stream-K CTA runs its range rotated: from the first tile boundary in it to its end, then the
// leading piece before that boundary. Every CTA whose range holds a boundary thus starts a tile
// at k = 0 at the same moment, and after the wrap all are at k ≡ t − R (mod iterations per tile),
// R the range length: the CTAs sweep K in lockstep as data-parallel ones do, so the A and B blocks
// that tiles of one row or column share are read while they are still in L2. (In range order the
// CTAs sat at scattered K offsets, and on 4096³ the Stream-K part ran at half the data-parallel
// speed for want of L2 hits.)
//
// A CTA's range cuts at most two tiles (the one it starts in, the one it ends in): slots 2·cta
// (the segment holding the range's start) and 2·cta + 1 (the other), so the Stream-K workspace is
// sized by the grid. Split-K needs `splits` slots per tile.
// When there are fewer Stream-K iterations than CTAs, only the first sk_grid() CTAs share them.
#pragma once
#include "common.h"

namespace torch_grouped::sched {

enum class Decomposition : int32_t {
  DataParallel = 0,
  SplitK = 1,
  StreamK = 2,
  DpOneTileSk = 3,
  TwoTileSkDp = 4,
};

struct StreamKWorkUnit {
  int64_t tile;     // linear tile index
  int64_t k_begin;  // first MAC-loop iteration within the tile
  int64_t k_end;    // one past the last
  int64_t slot;     // workspace slot of this segment's partial; -1: the unit is the whole tile
  int64_t segment;  // which segment of the tile, in K order (0 for a whole tile)
};

// The order in which the last arrivers sum a tile's `segments` partials. Up to kFlatSegments,
// one level: the last of all to arrive reads every partial. Beyond, the reads of one CTA (about
// 1 µs per 64 KB partial on an H100, session 6) would dominate deep-K shapes with few tiles
// (256 x 256 x 131072: 138 µs with 66 partials summed by one CTA, 99 µs in two levels), so the
// segments form `groups`
// = ceil(sqrt(segments)) runs of consecutive segments whose lengths differ by at most one: the
// last arriver of a run sums the run into the slot of its first segment, then counts the run in
// on the tile; the last run to finish sums the runs' partials. The groups reduce in parallel on
// different SMs and the slowest path reads about 2·sqrt(segments) partials. Everything follows
// from `segments` alone, so the order of every addition is fixed: still deterministic.
struct FixupTree {
  static constexpr int64_t kFlatSegments = 8;  // two levels only when they read ≥ 2 fewer partials
  int64_t segments = 1;
  int64_t groups = 1;

  TG_HOST_DEVICE static FixupTree of(int64_t segments) {
    FixupTree t;
    t.segments = segments;
    if (segments > kFlatSegments)
      while (t.groups * t.groups < segments) ++t.groups;
    return t;
  }
  // First segment of run `g` (g = groups: one past the last segment), and the run of segment j.
  TG_HOST_DEVICE int64_t group_begin(int64_t g) const { return g * segments / groups; }
  TG_HOST_DEVICE int64_t group_of(int64_t j) const { return ((j + 1) * groups - 1) / segments; }
  // Partials read one after another on the slowest path: the model's fixup cost.
  TG_HOST_DEVICE int64_t serial_reads() const {
    return groups == 1 ? segments : ceil_div(segments, groups) + groups;
  }
};

// The order of the separate fixup kernel (cuda/streamk_reduce.cu, and the CPU path): a tile's
// segments form kParts consecutive parts (some empty when there are fewer segments); each part
// is summed in K order (one warp of a block per part, so a tile's partials are read by
// kParts warps at once, over as many blocks as the tile has 32-column groups of four), then
// the parts in order. Measured on an H100 (session 6): the last arrivers' serial reads cost about
// 1 µs per 64 KB partial, and the separate kernel saved 5 µs on one 128 x 128 tile of 33 to 132
// segments, 12 µs on two 128 x 256 tiles of 66; but on 16 tiles of 9 segments (512 x 1024 x
// 32768) it cost 22 µs more than the two-level FixupTree (every partial makes a round trip
// through memory, where the in-kernel sums overlap with other CTAs' work): so only from
// kMinSegments segments on.
struct SeparateFixup {
  static constexpr int kParts = 8;
  static constexpr int64_t kMinSegments = 32;
  // First segment of part `w` (w = kParts: one past the last) of a tile of `segments`.
  TG_HOST_DEVICE static int64_t part_begin(int64_t segments, int w) { return w * segments / kParts; }
  // The part that holds segment j (the one non-empty part whose range contains it).
  TG_HOST_DEVICE static int part_of(int64_t segments, int64_t j) {
    int w = 0;
    while (part_begin(segments, w + 1) <= j) ++w;
    return w;
  }
  // For the model: a launch and one pass in which every SM reads about one partial.
  static constexpr int64_t kSerialReads = 2;
};

// Where a partial tile's elements lie in its workspace slot. Both fixups store partials as the
// consumers' registers hold them (kernels/streamk_fixup.cuh): the tile's rows in bands of 64, one
// band per consumer warpgroup (64 · tile_n floats each, in row order), and within a band thread t
// of the warpgroup stores its j-th four accumulators as float4 128·j + t. WGMMA's accumulators
// (the 64 x N layout of CuTe's SM90 GMMA C fragment: checked for 128 x 128, 128 x 256, 192 x 128
// and TF32 in session 48) put in thread t = 32·w + l, values 4j .. 4j+3, the elements
// (r, c), (r, c+1), (r+8, c), (r+8, c+1) with r = 16·w + l / 4, c = 8·j + 2·(l % 4).
// So the matmul kernel stores each partial in coalesced 16-byte pieces straight from registers
// (a row-major partial went out in 8-byte pairs, which ptxas split into 4-byte stores: 64 store
// instructions a thread; 128² x 65536's matmul 19.3 µs against 16.7 for the same split on the
// grouped walk, whose epilogue stores 16 bytes at a time; H200, session 48).
struct PartialQuad {
  // The tile element (row, col) of float4 `quad` of a slot of tile_n columns; the quad holds
  // (row, col), (row, col + 1), (row + 8, col), (row + 8, col + 1).
  TG_HOST_DEVICE static void place(int64_t quad, int64_t tile_n, int64_t& row, int64_t& col) {
    const int64_t band = quad / (16 * tile_n), in_band = quad % (16 * tile_n);
    const int64_t j = in_band / 128, t = in_band % 128, w = t / 32, l = t % 32;
    row = 64 * band + 16 * w + l / 4;
    col = 8 * j + 2 * (l % 4);
  }
};

// What `auto` weighs of a plan's fixup (StreamKPlan::fixup_stats).
struct FixupStats {
  int64_t max_segments = 1;    // the most segments a tile is cut into
  int64_t max_serial_reads = 0;  // the most StreamKPlan::serial_reads of a cut tile (0: none is cut)
  // Partial tiles beyond one per cut tile: segments − 1 each, or all of them where the separate
  // kernel sums (every segment stores its partial; the one that finishes the tile would not need to)
  int64_t extra_partials = 0;
  bool stream_k_cut = false;   // a Stream-K tile is cut (not only split-K slices)
};

struct StreamKCursor {
  int64_t sk_next;     // next Stream-K iteration of this CTA, from its first tile boundary ...
  int64_t sk_end;      // ... to the end of its range,
  int64_t lead_begin;  // then the leading piece [lead_begin, lead_end) before that boundary
  int64_t lead_end;
  int64_t dp_round;    // how many DP (or split-K) units this CTA has taken
};

struct StreamKPlan {
  int64_t tiles_m = 0;
  int64_t tiles_n = 0;
  int64_t iters_per_tile = 0;
  int64_t grid = 1;
  int64_t splits = 1;
  int64_t sk_tiles = 0;
  Decomposition decomposition = Decomposition::DataParallel;
  bool separate_fixup = false;  // cut tiles summed by the separate kernel (see above)

  TG_HOST_DEVICE int64_t tiles() const { return tiles_m * tiles_n; }
  TG_HOST_DEVICE int64_t sk_iters() const { return sk_tiles * iters_per_tile; }
  // CTAs that share the Stream-K iterations: never more than there are iterations, so that every
  // one of them has a non-empty range and the CTAs between a tile's first and last each hold one segment of it.
  TG_HOST_DEVICE int64_t sk_grid() const { return min64(grid, sk_iters()); }
  // First Stream-K iteration of `cta`; ranges differ in length by at most one.
  TG_HOST_DEVICE int64_t sk_begin(int64_t cta) const {
    return cta < sk_grid() ? cta * sk_iters() / sk_grid() : sk_iters();
  }
  // The CTA whose range holds Stream-K iteration `it` (the inverse of sk_begin).
  TG_HOST_DEVICE int64_t cta_of_sk_iter(int64_t it) const {
    return ((it + 1) * sk_grid() - 1) / sk_iters();
  }
  TG_HOST_DEVICE int64_t dp_units() const { return (tiles() - sk_tiles) * splits; }
  TG_HOST_DEVICE int64_t workspace_slots() const {
    if (sk_tiles > 0) return 2 * sk_grid();
    return splits > 1 ? (tiles() - sk_tiles) * splits : 0;
  }

  // Data-parallel over whole tiles (no Stream-K part, no split): the kernels' shortest walk.
  TG_HOST_DEVICE bool whole_tiles() const { return sk_tiles == 0 && splits == 1; }

  TG_HOST_DEVICE StreamKCursor begin(int64_t cta) const {
    if (whole_tiles()) return StreamKCursor{0, 0, 0, 0, 0};
    const int64_t start = sk_begin(cta), end = sk_begin(cta + 1);
    const int64_t boundary = start >= end ? end : min64(end, ceil_div(start, iters_per_tile) * iters_per_tile);
    return StreamKCursor{boundary, end, start, boundary, 0};
  }

  // The next unit of work of `cta`, in the order the CTA runs them: its Stream-K segments first
  // (rotated, see above), then its whole tiles (or split-K slices). Returns false when done.
  TG_HOST_DEVICE bool next(int64_t cta, StreamKCursor& c, StreamKWorkUnit& u) const {
    // Whole tiles first, alone: on a one-wave call the walk to the first unit is on the way to
    // the first load, and its instructions arrive cold (H100, session 27: ~1300 cycles for the
    // first next() through the general path below).
    if (whole_tiles()) {
      const int64_t tile = cta + c.dp_round++ * grid;
      if (tile >= tiles()) return false;
      u = StreamKWorkUnit{tile, 0, iters_per_tile, -1, 0};
      return true;
    }
    if (c.sk_next >= c.sk_end && c.lead_begin < c.lead_end) {  // the wrap: the leading piece
      c.sk_next = c.lead_begin, c.sk_end = c.lead_end;
      c.lead_begin = c.lead_end;
    }
    if (c.sk_next < c.sk_end) {
      const int64_t tile = c.sk_next / iters_per_tile;
      const int64_t tile_first = tile * iters_per_tile;
      const int64_t seg_end = min64(c.sk_end, tile_first + iters_per_tile);
      const bool whole = c.sk_next == tile_first && seg_end == tile_first + iters_per_tile;
      u = StreamKWorkUnit{tile, c.sk_next - tile_first, seg_end - tile_first,
                          whole ? -1 : 2 * cta + (c.sk_next == sk_begin(cta) ? 0 : 1),
                          cta - cta_of_sk_iter(tile_first)};
      c.sk_next = seg_end;
      return true;
    }
    const int64_t unit = cta + c.dp_round * grid;
    if (unit >= dp_units()) return false;
    ++c.dp_round;
    if (splits == 1) {  // the whole tiles after a Stream-K part: no division
      u = StreamKWorkUnit{sk_tiles + unit, 0, iters_per_tile, -1, 0};
      return true;
    }
    // Split-K units are dealt slice by slice: a wave of CTAs works on one K slice of many tiles.
    const int64_t dp_tiles = tiles() - sk_tiles;
    const int64_t tile = sk_tiles + unit % dp_tiles;
    const int64_t split = splits - 1 - unit / dp_tiles;
    u = StreamKWorkUnit{tile, split * iters_per_tile / splits, (split + 1) * iters_per_tile / splits,
                        splits > 1 ? (tile - sk_tiles) * splits + split : -1, split};
    return true;
  }

  // How many segments (units of different CTAs) make up `tile`: 1 when one unit covers it.
  TG_HOST_DEVICE int64_t segments(int64_t tile) const {
    if (tile < sk_tiles) {
      const int64_t first = tile * iters_per_tile;
      return cta_of_sk_iter(first + iters_per_tile - 1) - cta_of_sk_iter(first) + 1;
    }
    return splits;
  }
  // Workspace slot of the j-th segment of `tile` in K order (0 ≤ j < segments(tile) > 1).
  TG_HOST_DEVICE int64_t segment_slot(int64_t tile, int64_t j) const {
    if (tile < sk_tiles) {
      const int64_t first = tile * iters_per_tile, cta = cta_of_sk_iter(first) + j;
      // Segments after the first start their CTA's range; the first does when the tile does.
      return 2 * cta + (j > 0 || sk_begin(cta) == first ? 0 : 1);
    }
    return (tile - sk_tiles) * splits + j;
  }
  // The slots of a tile's segments after the first are evenly spaced: segment_slot(tile, j) =
  // segment_slot(tile, 1) + (j - 1) * segment_slot_stride(tile) for j >= 1 (the slot pair of each
  // next CTA for Stream-K, the next slice for split-K): kernels step through them without a
  // division per segment.
  TG_HOST_DEVICE int64_t segment_slot_stride(int64_t tile) const { return tile < sk_tiles ? 2 : 1; }
  // The fixup's counters: one per tile (the last level), then one per workspace slot (a run of
  // FixupTree's first level counts on the counter of its first segment's slot).
  TG_HOST_DEVICE int64_t fixup_counters() const { return tiles() + workspace_slots(); }
  TG_HOST_DEVICE int64_t group_counter(int64_t tile, const FixupTree& tree, int64_t g) const {
    return tiles() + segment_slot(tile, tree.group_begin(g));
  }
  // One pass over the CTAs, not the tiles: `auto` weighs a dozen plans per call, and a walk over
  // the 8192 tiles of 16384 x 16384 x 256 took 340 µs of host time per call (session 6). A
  // Stream-K tile has one segment more than there are CTA ranges starting inside it (off its
  // first iteration), and the range starts increase with the CTA.
  FixupStats fixup_stats() const {
    FixupStats s;
    auto count_in = [&](int64_t segments, int64_t tiles_cut) {
      s.max_segments = max64(s.max_segments, segments);
      s.max_serial_reads = max64(s.max_serial_reads, serial_reads(segments));
      if (segments > 1) s.extra_partials += tiles_cut * (separate_fixup ? segments : segments - 1);
    };
    if (sk_tiles == 0) {
      count_in(splits, tiles());
      return s;
    }
    int64_t tile = -1, starts = 0;  // the tile of the current run of inner range starts
    for (int64_t c = 1; c < sk_grid(); ++c) {
      const int64_t start = sk_begin(c);
      if (start % iters_per_tile == 0) continue;  // starts a tile: cuts none
      if (start / iters_per_tile != tile) {
        if (starts > 0) count_in(starts + 1, 1);
        tile = start / iters_per_tile, starts = 0;
      }
      ++starts;
      s.stream_k_cut = true;
    }
    if (starts > 0) count_in(starts + 1, 1);
    return s;
  }
  int64_t max_segments() const { return fixup_stats().max_segments; }
  // Partials the fixup of a tile of `segments` reads one after another on its slowest path (0: not
  // cut), with this plan's fixup; and of `tile`.
  TG_HOST_DEVICE int64_t serial_reads(int64_t segments) const {
    if (segments < 2) return 0;
    return separate_fixup ? SeparateFixup::kSerialReads : FixupTree::of(segments).serial_reads();
  }
  TG_HOST_DEVICE int64_t fixup_serial_reads(int64_t tile) const { return serial_reads(segments(tile)); }
};

// Host-side plan construction. `grid` must be ≥ 1 and `splits` ≥ 1 (resolved by the caller).
// `may_separate`: the caller runs the separate fixup kernel where a tile has at least
// SeparateFixup::kMinSegments segments (streamk_mm; syr2k's Rank2K epilogue keeps the in-kernel fixup).
inline StreamKPlan make_streamk_plan(int64_t m, int64_t n, int64_t k, int64_t tile_m, int64_t tile_n,
                                     int64_t tile_k, Decomposition d, int64_t splits, int64_t grid,
                                     bool may_separate = false) {
  StreamKPlan p;
  p.tiles_m = ceil_div(m, tile_m);
  p.tiles_n = ceil_div(n, tile_n);
  p.iters_per_tile = ceil_div(k, tile_k);
  p.grid = grid;
  p.decomposition = d;
  const int64_t tiles = p.tiles();
  // The CTAs that get no unit are not launched: the Stream-K ones past sk_grid() and the ones past
  // a data-parallel or split-K wave that does not fill the grid. (Every unit keeps its CTA: those
  // are the CTAs below both bounds. Launched anyway, the idle CTAs cost 64 split-K units of 128² x
  // 65536 24.6 µs on a grid of 132 against 19.3-20.1 on a grid of 64; H200, session 48.)
  const auto trimmed = [&](StreamKPlan q) {
    q.grid = max64(1, max64(q.sk_tiles > 0 ? q.sk_grid() : 0, min64(grid, q.dp_units())));
    return q;
  };
  if (p.iters_per_tile == 0 || tiles == 0) return trimmed(p);  // nothing to share: data-parallel zeros
  switch (d) {
    case Decomposition::DataParallel:
      break;
    case Decomposition::SplitK:
      p.splits = min64(splits, p.iters_per_tile);
      break;
    case Decomposition::StreamK:
      p.sk_tiles = tiles;
      break;
    case Decomposition::DpOneTileSk:
      p.sk_tiles = tiles % grid;
      break;
    case Decomposition::TwoTileSkDp:
      p.sk_tiles = tiles % grid == 0 ? 0 : (tiles > grid ? grid + tiles % grid : tiles);
      break;
  }
  p.separate_fixup = may_separate && p.max_segments() >= SeparateFixup::kMinSegments;  // (segments only)
  return trimmed(p);
}

}  // namespace torch_grouped::sched
