// The forms of a grouped call: where its groups come from, and how many tiles each form's walk
// has. Shared by the kernels (kernels/grouped_gemm_args.h), the host's launchers and tile choice
// (tile_choice.h), and the CPU tests (through grouped::_choose_grouped_mm_tile).
#pragma once
#include <cstdint>

#include "common.h"

namespace torch_grouped::sched {

// Where the groups come from.
//  RaggedM: a [M, K] with rows grouped by `offs`, b [G, K, N], out [M, N]   (grouped_mm 2D x 3D)
//  RaggedN: a [G, M, K], b [K, N] with columns grouped by `offs`, out [M, N] (grouped_mm 3D x 2D)
//  Batched: a [G, M, K], b [G, K, N], out [G, M, N]                          (grouped_mm 3D x 3D)
//  List:    one (a, b, out) per group, sizes and tensor maps in the args' `list`/`a_maps`/`b_maps` (gemm)
//  RaggedK: a [M, K] and b [K, N] with K grouped by `offs`, out [G, M, N]  (grouped_mm 2D x 2D, the
//           MoE weight gradient dW = Xᵀ dY). Only the kernels that read A M-major run it: both
//           operands have K as their outer dimension there, so a group's first K (anywhere: the
//           offsets live on the device) is an outer TMA coordinate. (A swizzled box whose innermost
//           start is not 16-byte aligned faults: session 2.) Per-group maps in `a_maps`/`b_maps`
//           (csrc/cuda/k_grouped_maps.cu) cut K at the group's end, so TMA zero-fills past it.
enum class GroupedForm : int32_t { RaggedM = 0, RaggedN = 1, Batched = 2, List = 3, RaggedK = 4 };

// The tiles of a non-list call's walk with tile t (m, n: kernels::GroupedGemmArgs' m and n: the
// whole output's for the ragged forms, one problem's otherwise): groups x
// the grid of one problem (Batched, RaggedK), or the whole output's grid plus `partial` tile rows
// (RaggedM) or columns (RaggedN) for the groups' ragged edges — at most groups + 1 (one per group,
// one for the virtual tail group), on average about groups / 2 + 1.
TG_HOST_DEVICE int64_t form_tiles(GroupedForm form, int64_t m, int64_t n, int64_t groups, TileShape t, int64_t partial) {
  const int64_t rows = ceil_div(m, int64_t{t.m}), cols = ceil_div(n, int64_t{t.n});
  switch (form) {
    case GroupedForm::RaggedM: return (rows + partial) * cols;
    case GroupedForm::RaggedN: return rows * (cols + partial);
    default: return rows * cols * groups;
  }
}

}  // namespace torch_grouped::sched
