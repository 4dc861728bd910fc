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

// Where a walk reads the ragged forms' offsets: the CTA's copy in shared memory where the kernel
// made one (`shared`, grouped_gemm_sm90.cuh), else global memory.
struct OffsetReader {
  const int32_t* global;
  const int32_t* shared;
  __device__ __forceinline__ int64_t operator()(int32_t i) const {
    return shared != nullptr ? int64_t(shared[i]) : int64_t(__ldg(global + i));
  }
};

// The tile sequence of one CTA, identical in every warp.
template <class Cfg>
struct TileWalker {
  struct Sizes {
    const GroupedGemmArgs* p;
    OffsetReader read;
    __device__ __forceinline__ void operator()(int32_t g, int64_t& m, int64_t& n) const {
      const GroupProblem q = resolve_group(*p, g, read);
      m = q.m, n = q.n;
    }
  };
  using Tiles = typename Cfg::Tiles;
  const GroupedGemmArgs& p;
  OffsetReader read;
  Tiles tiles;
  sched::WarpGroupedVisitor<Tiles, Sizes, Cfg::RememberGroup, sched::DeviceWarp> visitor;
  int32_t resolved = -1;  // RememberGroup: the group whose problem the caller's `q` holds (-1: none yet)

  __device__ static Tiles tiles_of(const GroupedGemmArgs& args) {
    if constexpr (Cfg::Rank2K) {
      return args.triangle;
    } else {
      return args.tiles;
    }
  }
  // shared_offsets: the CTA's copy of args.offs in shared memory, or null (read them in global memory)
  __device__ explicit TileWalker(const GroupedGemmArgs& args, const int32_t* shared_offsets = nullptr)
      : p(args),
        read{args.offs, shared_offsets},
        tiles(tiles_of(args)),
        visitor{Sizes{&args, read}, visited_groups(args), tiles_of(args)} {}

  // Tile `step` of this CTA's walker (linear tile w + step * walkers) and its problem. A walker is
  // a CTA, or with clusters a cluster, whose CTAs take their rows of the pair tile it is dealt.
  // RememberGroup: `q` must be the problem of the previous call's answer (the same object,
  // untouched), so that the next tile of the same group keeps it instead of resolving it again
  // (reads of the offsets and their arithmetic, between one tile's K loop and the next).
  __device__ __forceinline__ bool next(int64_t step, sched::TileCoord& tile, GroupProblem& q) {
    const int64_t walker = blockIdx.x / Cfg::ClusterM, walkers = gridDim.x / Cfg::ClusterM;
    const int64_t index = walker + step * walkers;
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
