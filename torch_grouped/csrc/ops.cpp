// Every schema of torch_grouped, in one library, and the empty Python module that lets
// `import torch_grouped._C` load this shared object (the extension-cpp pattern: no pybind11,
// Python's limited API, so one build serves every Python version).
#include <Python.h>
#include <torch/library.h>

extern "C" {
PyObject* PyInit__C(void) {
  static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr};
  return PyModule_Create(&module_def);
}
}

TORCH_LIBRARY(grouped, m) {
  m.def("gemm(Tensor[] a, Tensor[] b, *, ScalarType? out_dtype=None, str schedule=\"auto\", bool sort_by_k=True) -> Tensor[]");
  m.def("grouped_mm(Tensor a, Tensor b, Tensor? offs=None, *, ScalarType? out_dtype=None) -> Tensor");
  m.def("syr2k(Tensor[] a, Tensor[] b, Tensor[] c, *, str uplo=\"L\", float alpha=1.0, float beta=0.0) -> Tensor[]");
  m.def("streamk_mm(Tensor a, Tensor b, *, str decomposition=\"auto\", int splits=0, int grid=0) -> Tensor");
  m.def("permute_copy(Tensor x, int[] dims) -> Tensor");
  m.def("layout_transform(Tensor x, str src_layout, str dst_layout) -> Tensor");
  // Private: g[i] + g[i]ᵀ of square matrices, for syr2k's backward (common/syr2k_autograd.cpp; the GPU's
  // in cuda/symmetric_sum.cu).
  m.def("_symmetric_sum(Tensor[] g) -> Tensor[]");
  // Private: scheduler enumerations for the tests (csrc/cpu/schedule_dump.cpp).
  m.def("_schedule_grouped(int[] m, int[] n, int[] k, int tile_m, int tile_n, int grid, str mode, bool sort_by_k, *, int panel=0, int cluster_m=1) -> Tensor");
  m.def("_round_robin_makespan(int[] counts, float[] costs, int grid) -> float");
  m.def("_choose_gemm_tile(int[] m, int[] n, int[] k, int sms, bool a_m_major=False) -> int[]");
  m.def("_list_tail_corner(int[] m, int[] n, int[] k, int[] tile, int walkers, bool rule=True) -> int[]");
  m.def("_choose_k_grouped_tile(int m, int n, int groups, int k, int sms) -> int[]");
  m.def("_choose_grouped_mm_tile(str form, int m, int n, int groups, int k, int sms) -> int[]");
  m.def("_choose_fp64_tile(int[] m, int[] n, int[] k, int sms, *, bool rank2k=False) -> int[]");
  m.def("_schedule_rank2k(int[] n, int tile_m, int tile_n, int grid, str uplo, *, bool all_tiles=False, str mode=\"device\") -> Tensor");
  m.def("_rank2k_cluster(int[] n, str uplo, int ctas, int clusters, *, bool all_tiles=False) -> int");
  m.def("_calibration_source(str name, int major, int minor, int sms) -> str");
  m.def("_rank2k_plan(int n, int k, int tile_k, int sms, str device_name) -> int[]");
  m.def("_choose_streamk_tile(int m, int n, int k, int sms, float[] wide, float[] narrow, float[]? tall=None) -> int[]");
  m.def("_row_copies_pay(int m, int n, int grid, int a_width, int b_width, *, bool pitched_beside=False, int k=0, bool copies_cheap=False) -> bool");
  m.def("_streamk_small_tile_pays(int m, int n, int k, int grid) -> bool");
  m.def("_streamk_clusters_pay(int m, int n, int tile_n, *, bool in_place) -> bool");
  m.def("_schedule_streamk(int m, int n, int k, int tile_m, int tile_n, int tile_k, str decomposition, int splits, int grid, bool separate_fixup=True, float dram_tbps=0.0) -> Tensor");
  // Private: where a Stream-K partial tile's float4s lie in their workspace slot (sched::PartialQuad).
  m.def("_streamk_partial_quads(int tile_m, int tile_n) -> Tensor");
  // Private: the tile {M, N, K} that streamk_mm(a, b, grid=grid) runs on a's device, and the walk
  // of its plan {plan tile rows, walkers}: 2 x 1 clusters plan 256-row pair tiles over the resident
  // clusters (csrc/cpu/register_cpu.cpp, csrc/cuda/streamk_cuda.cpp).
  m.def("_streamk_tile(Tensor a, Tensor b, int grid=0) -> int[]");
  m.def("_streamk_walk(Tensor a, Tensor b, int grid=0) -> int[]");
  // Private: the permute_copy planner's decision for a tensor (csrc/cpu/schedule_dump.cpp).
  m.def("_permute_plan(int[] sizes, int[] strides, int[] dims, int element_size, int tile_elems) -> str");
  m.def("_permute_widen(int[] sizes, int[] strides, int[] dims, int element_size, int base) -> str");
}
