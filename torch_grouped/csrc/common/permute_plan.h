// How a permuted copy is carried out: the host simplifies the permutation and chooses a tile
// ("box") of the iteration space that is read coalesced from the input and written coalesced to
// the output (seed 004, TVM's layout-transform schedule, generalised to any rank). Plain index
// math: shared by the CUDA launcher and the kernels (kernels/permute.cuh).
#pragma once
#include <cstdint>

namespace torch_grouped {

constexpr int kPermuteMaxRank = 8;
constexpr int kPermuteMaxBox = 4;

// The copy after simplification: `rank` axes in output order (outer → inner), the output is
// contiguous, `in_stride` are the input's element strides of those axes.
struct PermuteShape {
  int rank = 0;
  int64_t size[kPermuteMaxRank];
  int64_t in_stride[kPermuteMaxRank];
  int64_t out_stride[kPermuteMaxRank];
  int64_t numel = 1;
};

// Drops size-1 axes and merges output-adjacent axes that are also adjacent in the input.
PermuteShape simplify_permutation(int rank, const int64_t* sizes, const int64_t* strides,
                                  const int64_t* dims);

enum class PermuteKind : int32_t {
  Empty,   // nothing to copy
  Rows,    // the innermost output axis is the input's unit-stride axis and long: a row copy
  Box,     // a tile through shared memory
  Gather,  // no unit-stride input axis (a strided view): one element per thread
};

struct BoxPlan {
  PermuteShape shape;
  int count = 0;                        // box axes
  int axis[kPermuteMaxBox];             // box axes in input order (unit stride first)
  int log2_extent[kPermuteMaxBox];      // tile extent of each, a power of two
  int64_t smem_stride[kPermuteMaxBox];  // position step in the output-ordered tile, before padding
  int out_order[kPermuteMaxBox];        // box slots in output order (innermost first)
  int pad_shift = 0;                    // one pad after every 2^pad_shift positions ...
  int pad = 0;                          // ... of `pad` elements (bank-conflict-free scatter)
  int64_t tiles[kPermuteMaxRank];       // tiles along each axis (1-wide for non-box axes)
  int64_t total_boxes = 0;
  int box_elems = 0;
  int smem_elems = 0;
};

struct RowsPlan {
  PermuteShape shape;
  int64_t inner = 0;        // elements per row (input stride 1, output contiguous)
  int64_t rows = 0;
  int64_t chunk = 0;        // elements per block step within a row (rows ≥ a chunk)
  int64_t chunks_per_row = 0;
  int64_t rows_per_chunk = 1;  // whole rows per block step (rows shorter than a chunk)
};

// Where the output-inner axis is the input's unit-stride axis, the copy moves whole runs of it,
// so it may move wider elements: returns the widest W (element_size <= W <= 16 bytes, a power of
// two) that divides the run's bytes, every other input stride's bytes and `base`, and rewrites `s`
// in W-byte elements (a run of one element leaves the shape, as simplification would drop it).
// E.g. NCHW8c -> NHWC in fp16 becomes a transpose of 16-byte elements. Returns element_size where
// nothing wider fits.
int64_t widen_elements(PermuteShape& s, int64_t element_size, uintptr_t base);

PermuteKind choose_permute_kind(const PermuteShape& s, int64_t element_size);
// `tile_elems`: the element budget of one box (a power of two).
BoxPlan plan_box(const PermuteShape& s, int64_t element_size, int64_t tile_elems);
RowsPlan plan_rows(const PermuteShape& s, int64_t chunk);

}  // namespace torch_grouped
