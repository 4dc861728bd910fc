#include "permute_plan.h"

#include <algorithm>

namespace torch_grouped {
namespace {

int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

int log2_of(int64_t v) {
  int l = 0;
  while ((int64_t{1} << l) < v) ++l;
  return l;
}

// A run shorter than this many bytes is extended by a second axis (one 128-byte line).
constexpr int64_t kLineBytes = 128;
// A unit-stride inner axis at least this long is copied row by row, without a tile.
constexpr int64_t kRowBytes = 512;

}  // namespace

PermuteShape simplify_permutation(int rank, const int64_t* sizes, const int64_t* strides,
                                  const int64_t* dims) {
  PermuteShape s;
  for (int i = 0; i < rank; ++i) {
    const int64_t size = sizes[dims[i]], stride = strides[dims[i]];
    s.numel *= size;
    if (size == 1) continue;
    // Merge with the previous output axis when the pair is contiguous in the input as well.
    if (s.rank > 0 && s.in_stride[s.rank - 1] == stride * size) {
      s.size[s.rank - 1] *= size;
      s.in_stride[s.rank - 1] = stride;
      continue;
    }
    s.size[s.rank] = size;
    s.in_stride[s.rank] = stride;
    ++s.rank;
  }
  int64_t step = 1;
  for (int d = s.rank - 1; d >= 0; --d) s.out_stride[d] = step, step *= s.size[d];
  return s;
}

int64_t widen_elements(PermuteShape& s, int64_t element_size, uintptr_t base) {
  if (s.rank == 0 || s.in_stride[s.rank - 1] != 1) return element_size;
  const int inner = s.rank - 1;
  for (int64_t w = 16; w > element_size; w /= 2) {
    const int64_t f = w / element_size;  // elements per wide element (sizes are powers of two)
    bool ok = w % element_size == 0 && base % w == 0 && s.size[inner] % f == 0;
    for (int d = 0; d < inner; ++d) ok = ok && s.in_stride[d] % f == 0;
    if (!ok) continue;
    s.size[inner] /= f;
    s.numel /= f;
    for (int d = 0; d < inner; ++d) s.in_stride[d] /= f;
    // A run of one wide element: drop the axis. (No merge follows: strides and sizes were divided
    // alike, so axes that were not adjacent in the input still are not.)
    if (s.size[inner] == 1) --s.rank;
    int64_t step = 1;
    for (int d = s.rank - 1; d >= 0; --d) s.out_stride[d] = step, step *= s.size[d];
    return w;
  }
  return element_size;
}

PermuteKind choose_permute_kind(const PermuteShape& s, int64_t element_size) {
  if (s.numel == 0) return PermuteKind::Empty;
  if (s.rank == 0) return PermuteKind::Rows;  // a single element
  const int inner = s.rank - 1;
  if (s.in_stride[inner] == 1 && s.size[inner] * element_size >= kRowBytes) return PermuteKind::Rows;
  for (int d = 0; d < s.rank; ++d)
    if (s.in_stride[d] == 1) return PermuteKind::Box;
  return PermuteKind::Gather;
}

BoxPlan plan_box(const PermuteShape& s, int64_t element_size, int64_t tile_elems) {
  BoxPlan b;
  b.shape = s;
  const int64_t line = std::max<int64_t>(1, kLineBytes / element_size);
  const int out_inner = s.rank - 1;
  int in_inner = 0;
  for (int d = 0; d < s.rank; ++d)
    if (s.in_stride[d] == 1) in_inner = d;
  // The input-order axes: by input stride (a permutation of the shape's axes).
  int by_in[kPermuteMaxRank];
  for (int d = 0; d < s.rank; ++d) by_in[d] = d;
  // (the unit-stride axis first even where a broadcast axis has stride 0)
  std::sort(by_in, by_in + s.rank, [&](int x, int y) {
    const int64_t kx = x == in_inner ? -1 : s.in_stride[x], ky = y == in_inner ? -1 : s.in_stride[y];
    return kx < ky;
  });
  int64_t extent[kPermuteMaxRank];
  bool in_box[kPermuteMaxRank] = {};
  for (int d = 0; d < s.rank; ++d) extent[d] = 1;
  auto add = [&](int d, int64_t want) {
    in_box[d] = true;
    extent[d] = std::max(extent[d], std::min(pow2_ceil(s.size[d]), pow2_ceil(want)));
  };
  // Input side: the unit-stride axis, and the next one in input order when the run is short.
  add(in_inner, line);
  if (extent[in_inner] < line && s.rank > 1) add(by_in[1], line / extent[in_inner]);
  // Output side likewise: the innermost axis, and the one before it when the run is short.
  add(out_inner, line);
  if (extent[out_inner] < line && s.rank > 1) add(out_inner - 1, line / extent[out_inner]);
  // Grow the box to the budget, doubling axes that are not yet whole, run extenders first.
  auto box_size = [&]() {
    int64_t p = 1;
    for (int d = 0; d < s.rank; ++d) p *= extent[d];
    return p;
  };
  for (bool grew = true; grew && box_size() < tile_elems;) {
    grew = false;
    for (int d = s.rank - 1; d >= 0 && box_size() < tile_elems; --d) {
      if (in_box[d] && extent[d] < pow2_ceil(s.size[d])) extent[d] *= 2, grew = true;
    }
  }
  // Box slots in input order, and the output-ordered positions inside the tile.
  for (int k = 0; k < s.rank; ++k)
    if (in_box[by_in[k]]) b.axis[b.count] = by_in[k], b.log2_extent[b.count] = log2_of(extent[by_in[k]]), ++b.count;
  int64_t pos_stride = 1;
  int slot_of_axis[kPermuteMaxRank];
  for (int k = 0; k < b.count; ++k) slot_of_axis[b.axis[k]] = k;
  int n = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    if (!in_box[d]) continue;
    b.out_order[n++] = slot_of_axis[d];
    b.smem_stride[slot_of_axis[d]] = pos_stride;
    pos_stride *= extent[d];
  }
  b.box_elems = static_cast<int>(pos_stride);
  // Padding: the load phase scatters consecutive input elements `smem_stride[0]` apart; one pad
  // (at least 4 bytes) every such stride puts them in different banks. A stride of at most one
  // 4-byte word needs none: consecutive lanes already write consecutive (or shared) words, and a
  // pad would double the stride into two words, two lanes per bank (a 2 x 2 fp16 box did).
  if (b.axis[0] != out_inner && b.smem_stride[0] * element_size > 4) {
    b.pad_shift = log2_of(b.smem_stride[0]);
    b.pad = static_cast<int>(std::max<int64_t>(1, 4 / element_size));
  }
  b.smem_elems = b.box_elems + (b.pad ? (b.box_elems >> b.pad_shift) * b.pad : 0);
  b.total_boxes = 1;
  for (int d = 0; d < s.rank; ++d) {
    b.tiles[d] = in_box[d] ? (s.size[d] + extent[d] - 1) / extent[d] : s.size[d];
    b.total_boxes *= b.tiles[d];
  }
  return b;
}

RowsPlan plan_rows(const PermuteShape& s, int64_t chunk) {
  RowsPlan r;
  r.shape = s;
  r.inner = s.rank ? s.size[s.rank - 1] : 1;
  r.rows = r.inner ? s.numel / r.inner : 0;
  if (r.inner >= chunk) {
    r.chunk = chunk;
    r.chunks_per_row = (r.inner + chunk - 1) / chunk;
  } else {
    r.chunk = r.inner;
    r.chunks_per_row = 1;
    r.rows_per_chunk = std::max<int64_t>(1, chunk / std::max<int64_t>(r.inner, 1));
  }
  return r;
}

}  // namespace torch_grouped
