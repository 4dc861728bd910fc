// The tile sequence of one CTA of a persistent grouped kernel, identical in every warp: seed 000's
// grouped problem visitor (csrc/sched/) over the groups of GroupedGemmArgs, in either of its modes
// (the warp-parallel device-only search, or the host-precomputed per-CTA list). Shared by the
// Hopper WGMMA kernels (grouped_gemm_sm90.cuh) and the fp64 DMMA kernel (dmma_grouped.cuh).
// `Cfg` supplies Tiles (the tile policy: GemmTiles or SymmetricTiles), Rank2K (which of the two
// args holds them), ClusterM (CTAs per walker) and RememberGroup (whether a tile of the group of
// the last one skips the search and keeps the resolved problem: worth its registers where tiles
// are short, the grouped WGMMA kernels; the Rank2K and fp64 kernels ran 2-4% slower with it).
#pragma once
#include "../sched/warp_visitor.cuh"
#include "grouped_gemm_args.h"

namespace torch_grouped::kernels {

// The tile sequence of one CTA, identical in every warp.
template <class Cfg>
struct TileWalker {
  struct Sizes {
    const GroupedGemmArgs* p;
    __device__ __forceinline__ void operator()(int32_t g, int64_t& m, int64_t& n) const {
      const GroupProblem q = resolve_group(*p, g, [&](int32_t i) { return int64_t(__ldg(p->offs + i)); });
      m = q.m, n = q.n;
    }
  };
  using Tiles = typename Cfg::Tiles;
  const GroupedGemmArgs& p;
  Tiles tiles;
  sched::WarpGroupedVisitor<Tiles, Sizes, Cfg::RememberGroup> visitor;
  int32_t resolved = -1;  // RememberGroup: the group whose problem the caller's `q` holds (-1: none yet)

  __device__ static Tiles tiles_of(const GroupedGemmArgs& args) {
    if constexpr (Cfg::Rank2K) {
      return args.triangle;
    } else {
      return args.tiles;
    }
  }
  __device__ explicit TileWalker(const GroupedGemmArgs& args)
      : p(args), tiles(tiles_of(args)), visitor{Sizes{&args}, visited_groups(args), tiles_of(args)} {}

  // Tile `step` of this CTA's walker (linear tile w + step * walkers) and its problem. A walker is
  // a CTA, or with clusters a cluster, whose CTAs take their rows of the pair tile it is dealt.
  // RememberGroup: `q` must be the problem of the previous call's answer (the same object,
  // untouched), so that the next tile of the same group keeps it instead of resolving it again
  // (reads of the offsets and their arithmetic, between one tile's K loop and the next).
  __device__ __forceinline__ bool next(int64_t step, sched::TileCoord& tile, GroupProblem& q) {
    const int64_t walker = blockIdx.x / Cfg::ClusterM, walkers = gridDim.x / Cfg::ClusterM;
    const int64_t index = walker + step * walkers;
    auto read = [&](int32_t i) { return int64_t(__ldg(p.offs + i)); };
    if (p.precomputed != nullptr) {
      if (step >= p.precomputed_stride) return false;
      const sched::PrecomputedEntry e = p.precomputed[walker * p.precomputed_stride + step];
      if (e.group < 0) return false;  // past this CTA's last tile
      if (!Cfg::RememberGroup || e.group != resolved) q = resolve_group(p, e.group, read), resolved = e.group;
      tile = tiles.coord(e.group, q.m, q.n, index - e.group_first_tile);
      return true;
    }
    int64_t m, n;
    if (!visitor.find(index, tile, m, n)) return false;
    if (!Cfg::RememberGroup || tile.group != resolved) q = resolve_group(p, tile.group, read), resolved = tile.group;
    return true;
  }
};

}  // namespace torch_grouped::kernels
