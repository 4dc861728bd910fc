#include "checks.h"

#include <sstream>

namespace torch_grouped {
namespace {

bool is_matmul_dtype(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 || t == at::kFloat || t == at::kDouble;
}

std::string shape_str(const at::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

void check_matmul_dtype(const char* op, const at::Tensor& t, const std::string& name) {
  TORCH_CHECK(is_matmul_dtype(t.scalar_type()), op, ": ", name, " has dtype ", t.scalar_type(),
              "; expected one of Half, BFloat16, Float, Double");
}

void check_same(const char* op, const at::Tensor& t, const std::string& name, const at::Tensor& ref,
                const std::string& ref_name) {
  TORCH_CHECK(t.scalar_type() == ref.scalar_type(), op, ": ", name, " has dtype ", t.scalar_type(),
              " but ", ref_name, " has ", ref.scalar_type(), "; expected the same dtype");
  TORCH_CHECK(t.device() == ref.device(), op, ": ", name, " is on ", t.device(), " but ",
              ref_name, " is on ", ref.device(), "; expected the same device");
}

void check_rank(const char* op, const at::Tensor& t, const std::string& name, int64_t rank,
                const char* meaning) {
  TORCH_CHECK(t.dim() == rank, op, ": ", name, " must be ", rank, "-D ", meaning, ", got shape ",
              shape_str(t));
}

at::ScalarType resolve_out_dtype(const char* op, at::ScalarType in,
                                 std::optional<at::ScalarType> requested) {
  if (!requested || *requested == in) return in;
  const bool half_in = in == at::kHalf || in == at::kBFloat16;
  TORCH_CHECK_VALUE(half_in && *requested == at::kFloat, op, ": out_dtype ", *requested,
                    " is not supported for ", in, " inputs; expected ", in,
                    half_in ? " or Float" : "");
  return *requested;
}

std::string at_index(const char* name, size_t i) {
  return std::string(name) + "[" + std::to_string(i) + "]";
}

}  // namespace

std::vector<GroupShape> check_gemm(at::TensorList a, at::TensorList b,
                                   std::optional<at::ScalarType> requested,
                                   at::ScalarType& out_dtype) {
  constexpr const char* op = "gemm";
  TORCH_CHECK_VALUE(a.size() == b.size(), op, ": a has ", a.size(), " tensors but b has ",
                    b.size(), "; expected one b per a");
  std::vector<GroupShape> shapes;
  shapes.reserve(a.size());
  out_dtype = a.empty() ? (requested ? *requested : at::kFloat) : a[0].scalar_type();
  for (size_t i = 0; i < a.size(); ++i) {
    // The names are built only for a group that fails a check: a list of hundreds of small
    // groups should not pay for strings on every call.
    const bool well_formed = a[i].dim() == 2 && b[i].dim() == 2 && is_matmul_dtype(a[i].scalar_type()) &&
                             b[i].scalar_type() == a[i].scalar_type() && b[i].device() == a[i].device() &&
                             a[i].scalar_type() == a[0].scalar_type() && a[i].device() == a[0].device() &&
                             b[i].size(0) == a[i].size(1);
    if (!well_formed) {
      const std::string an = at_index("a", i), bn = at_index("b", i);
      check_rank(op, a[i], an, 2, "[M, K]");
      check_rank(op, b[i], bn, 2, "[K, N]");
      check_matmul_dtype(op, a[i], an);
      check_same(op, b[i], bn, a[i], an);
      check_same(op, a[i], an, a[0], "a[0]");
      TORCH_CHECK(b[i].size(0) == a[i].size(1), op, ": group ", i, ": ", an, " is ",
                  shape_str(a[i]), " and ", bn, " is ", shape_str(b[i]), "; ", bn,
                  ".size(0) must equal ", an, ".size(1) = ", a[i].size(1));
    }
    shapes.push_back({a[i].size(0), b[i].size(1), a[i].size(1)});
  }
  if (!a.empty()) out_dtype = resolve_out_dtype(op, a[0].scalar_type(), requested);
  return shapes;
}

GemmSchedule check_gemm_schedule(const std::string& schedule) {
  if (schedule == "auto") return GemmSchedule::Auto;
  if (schedule == "host") return GemmSchedule::Host;
  if (schedule == "device") return GemmSchedule::Device;
  TORCH_CHECK_VALUE(false, "gemm: schedule must be one of auto, host, device; got '", schedule, "'");
  return GemmSchedule::Auto;  // unreachable: the check above throws
}

GroupedMmShape check_grouped_mm(const at::Tensor& a, const at::Tensor& b,
                                const std::optional<at::Tensor>& offs,
                                std::optional<at::ScalarType> requested) {
  constexpr const char* op = "grouped_mm";
  check_matmul_dtype(op, a, "a");
  check_same(op, b, "b", a, "a");
  TORCH_CHECK((a.dim() == 2 || a.dim() == 3) && (b.dim() == 2 || b.dim() == 3), op,
              ": a and b must be 2-D or 3-D, got a ", shape_str(a), " and b ", shape_str(b));
  GroupedMmShape s;
  s.out_dtype = resolve_out_dtype(op, a.scalar_type(), requested);
  const int64_t ka = a.size(-1), kb = b.size(-2);
  TORCH_CHECK(ka == kb, op, ": a is ", shape_str(a), " and b is ", shape_str(b),
              "; b.size(-2) must equal a.size(-1) = ", ka);
  if (a.dim() == 3 && b.dim() == 3) {
    TORCH_CHECK_VALUE(!offs.has_value(), op, ": offs must be None when a and b are both 3-D");
    TORCH_CHECK(a.size(0) == b.size(0), op, ": a is ", shape_str(a), " and b is ", shape_str(b),
                "; b.size(0) must equal the group count a.size(0) = ", a.size(0));
    s.form = GroupedMmForm::A3dB3d;
    s.groups = a.size(0);
    s.out_sizes = {a.size(0), a.size(1), b.size(2)};
    return s;
  }
  TORCH_CHECK_VALUE(offs.has_value(), op, ": offs is required when a is ", a.dim(),
                    "-D and b is ", b.dim(), "-D");
  const at::Tensor& o = *offs;
  TORCH_CHECK(o.scalar_type() == at::kInt, op, ": offs has dtype ", o.scalar_type(),
              "; expected Int (int32 cumulative ends)");
  TORCH_CHECK(o.dim() == 1, op, ": offs must be 1-D, got shape ", shape_str(o));
  TORCH_CHECK(o.device() == a.device(), op, ": offs is on ", o.device(), " but a is on ",
              a.device(), "; expected the same device");
  if (a.dim() == 2 && b.dim() == 3) {
    s.form = GroupedMmForm::A2dB3d;
    s.groups = b.size(0);
    s.out_sizes = {a.size(0), b.size(2)};
  } else if (a.dim() == 3 && b.dim() == 2) {
    s.form = GroupedMmForm::A3dB2d;
    s.groups = a.size(0);
    s.out_sizes = {a.size(1), b.size(1)};
  } else {
    s.form = GroupedMmForm::A2dB2d;
    s.groups = o.size(0);
    s.out_sizes = {o.size(0), a.size(0), b.size(1)};
  }
  TORCH_CHECK(o.size(0) == s.groups, op, ": offs has ", o.size(0),
              " entries; expected one per group = ", s.groups);
  return s;
}

void check_offsets_values(const at::Tensor& offs_cpu, int64_t limit, const char* along) {
  const auto o = offs_cpu.contiguous();
  const int32_t* v = o.data_ptr<int32_t>();
  for (int64_t g = 0; g < o.numel(); ++g) {
    const int64_t prev = g == 0 ? 0 : v[g - 1];
    TORCH_CHECK_VALUE(v[g] >= prev, "grouped_mm: offs must be non-decreasing and start at >= 0, "
                      "got offs[", g, "] = ", v[g], " after ", prev);
    TORCH_CHECK_VALUE(v[g] <= limit, "grouped_mm: offs[", g, "] = ", v[g], " exceeds ", along,
                      " = ", limit);
  }
}

sched::Uplo check_syr2k(at::TensorList a, at::TensorList b, at::TensorList c,
                        const std::string& uplo) {
  constexpr const char* op = "syr2k";
  TORCH_CHECK_VALUE(uplo == "L" || uplo == "U", op, ": uplo must be 'L' or 'U', got '", uplo, "'");
  TORCH_CHECK_VALUE(a.size() == b.size(), op, ": a has ", a.size(), " tensors but b has ",
                    b.size(), "; expected one b per a");
  TORCH_CHECK_VALUE(c.empty() || c.size() == a.size(), op, ": c has ", c.size(),
                    " tensors; expected none or one per group = ", a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string an = at_index("a", i), bn = at_index("b", i);
    check_rank(op, a[i], an, 2, "[N, K]");
    check_matmul_dtype(op, a[i], an);
    check_same(op, b[i], bn, a[i], an);
    check_same(op, a[i], an, a[0], "a[0]");
    TORCH_CHECK(b[i].sizes() == a[i].sizes(), op, ": group ", i, ": ", bn, " is ",
                shape_str(b[i]), "; expected the shape of ", an, " = ", shape_str(a[i]));
    if (!c.empty()) {
      const std::string cn = at_index("c", i);
      check_same(op, c[i], cn, a[i], an);
      const int64_t n = a[i].size(0);
      TORCH_CHECK(c[i].dim() == 2 && c[i].size(0) == n && c[i].size(1) == n, op, ": group ", i,
                  ": ", cn, " is ", shape_str(c[i]), "; expected [", n, ", ", n, "]");
    }
  }
  return uplo == "L" ? sched::Uplo::Lower : sched::Uplo::Upper;
}

sched::Decomposition check_streamk(const at::Tensor& a, const at::Tensor& b,
                                   const std::string& decomposition, int64_t splits, int64_t grid,
                                   bool& is_auto) {
  constexpr const char* op = "streamk_mm";
  check_rank(op, a, "a", 2, "[M, K]");
  check_rank(op, b, "b", 2, "[K, N]");
  check_matmul_dtype(op, a, "a");
  check_same(op, b, "b", a, "a");
  TORCH_CHECK(b.size(0) == a.size(1), op, ": a is ", shape_str(a), " and b is ", shape_str(b),
              "; b.size(0) must equal a.size(1) = ", a.size(1));
  TORCH_CHECK_VALUE(splits >= 0, op, ": splits must be >= 0 (0 = automatic), got ", splits);
  TORCH_CHECK_VALUE(grid >= 0, op, ": grid must be >= 0 (0 = automatic), got ", grid);
  return parse_decomposition(op, decomposition, is_auto);
}

sched::Decomposition parse_decomposition(const char* op, const std::string& decomposition, bool& is_auto) {
  is_auto = decomposition == "auto";
  if (is_auto) return sched::Decomposition::DataParallel;
  if (decomposition == "data_parallel") return sched::Decomposition::DataParallel;
  if (decomposition == "split_k") return sched::Decomposition::SplitK;
  if (decomposition == "stream_k") return sched::Decomposition::StreamK;
  if (decomposition == "dp_one_tile_sk") return sched::Decomposition::DpOneTileSk;
  if (decomposition == "two_tile_sk_dp") return sched::Decomposition::TwoTileSkDp;
  TORCH_CHECK_VALUE(false, op, ": decomposition must be one of auto, data_parallel, split_k, "
                    "stream_k, dp_one_tile_sk, two_tile_sk_dp; got '", decomposition, "'");
  return sched::Decomposition::DataParallel;  // unreachable: the check above throws
}

std::vector<int64_t> check_permutation(const at::Tensor& x, at::IntArrayRef dims) {
  constexpr const char* op = "permute_copy";
  const int64_t rank = x.dim();
  TORCH_CHECK_VALUE(rank <= 8, op, ": x has ", rank, " dimensions; at most 8 are supported");
  TORCH_CHECK_VALUE(static_cast<int64_t>(dims.size()) == rank, op, ": dims has ", dims.size(),
                    " entries; expected one per dimension of x = ", rank);
  std::vector<int64_t> out(dims.begin(), dims.end());
  std::vector<bool> seen(rank, false);
  for (int64_t i = 0; i < rank; ++i) {
    TORCH_CHECK_VALUE(out[i] >= -rank && out[i] < rank, op, ": dims[", i, "] = ", out[i],
                      " is out of range for a ", rank, "-D tensor");
    if (out[i] < 0) out[i] += rank;
    TORCH_CHECK_VALUE(!seen[out[i]], op, ": dims[", i, "] = ", dims[i],
                      " repeats a dimension; dims must be a permutation");
    seen[out[i]] = true;
  }
  return out;
}

}  // namespace torch_grouped
