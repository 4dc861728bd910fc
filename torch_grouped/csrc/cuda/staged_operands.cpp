#include "staged_operands.h"

#include <ATen/cuda/EmptyTensor.h>

#include <algorithm>

#include "permute_into.h"

namespace torch_grouped {

namespace {

// `t` ([rows, cols] or [batch, rows, cols]) as [batch, outer, inner]: rows x cols, or cols x rows
// when `transposed` (sizes and strides, without a view).
void as_operand(const at::Tensor& t, bool transposed, int64_t (&sizes)[3], int64_t (&strides)[3]) {
  TORCH_INTERNAL_ASSERT((t.dim() == 2 || t.dim() == 3) && t.element_size() == 2);
  const int r = static_cast<int>(t.dim()) - 2;  // the rows axis
  const int row = transposed ? r + 1 : r, col = transposed ? r : r + 1;
  sizes[0] = r ? t.size(0) : 1, sizes[1] = t.size(row), sizes[2] = t.size(col);
  strides[0] = r ? t.stride(0) : t.numel(), strides[1] = t.stride(row), strides[2] = t.stride(col);
}

// Whether `job` goes through the layout ops' transpose (cuda/permute_into.h) rather than the
// pitched copy: a transposed operand (its unit stride along the rows, as A = xᵀ is M-major) whose
// rows need no padding, of 1 MB or more. The pitched copy reads such a source with 2-byte loads a
// row apart, a sector each: A of 128 x 65536 took 56 µs (0.6 TB/s read and written) in front of a
// 27 µs streamk_mm (H200, session 45); the transpose moves it through shared-memory tiles,
// coalesced on both sides, in one launch of its own, which below about 1 MB costs more than the
// slow copy saves.
bool transposes(const PitchedCopyJob& job) {
  constexpr int64_t kMinBytes = int64_t{1} << 20;
  return job.stride[1] == 1 && job.stride[2] >= job.outer && job.outer > 1 && job.pitch == job.inner &&
         job.batch * job.outer * job.inner * 2 >= kMinBytes;
}

}  // namespace

bool StagedOperands::addressable(const at::Tensor& t, bool transposed) {
  int64_t sizes[3], strides[3];
  as_operand(t, transposed, sizes, strides);
  return tma_operand(t.data_ptr(), t.scalar_type(), sizes, strides).has_value();
}

std::optional<kernels::RowSource> StagedOperands::row_source(const at::Tensor& t, bool transposed) {
  int64_t sizes[3], strides[3];
  as_operand(t, transposed, sizes, strides);
  constexpr int64_t k31 = int64_t{1} << 31;
  if (sizes[0] != 1 || sizes[1] <= 0 || sizes[2] <= 0 || sizes[1] >= k31 || sizes[2] >= k31) return std::nullopt;
  if (sizes[2] > 1 && strides[2] != 1) return std::nullopt;  // the rows must be contiguous
  const int64_t ld = sizes[1] > 1 ? strides[1] : 0;
  // The widest cp.async piece every row start is aligned to: 16, 8 or 4 bytes (2: none).
  const uint64_t starts = reinterpret_cast<uintptr_t>(t.data_ptr()) | static_cast<uint64_t>(ld * t.element_size()) | 16;
  const int32_t width = static_cast<int32_t>(starts & (~starts + 1));  // the lowest set bit
  if (width < 4) return std::nullopt;
  return kernels::RowSource{static_cast<const char*>(t.data_ptr()), ld, sizes[1], sizes[2], width};
}

int StagedOperands::add(const at::Tensor& t, bool transposed) {
  int64_t sizes[3], strides[3];
  as_operand(t, transposed, sizes, strides);
  dtype_ = t.scalar_type();
  operands_.push_back(tma_operand(t.data_ptr(), dtype_, sizes, strides));
  const int64_t pitch = pitched_row(sizes[2]);
  // (a copy only where it would be addressable: not empty, within TMA's extents)
  constexpr int64_t k31 = int64_t{1} << 31;
  const bool fits = sizes[0] > 0 && sizes[1] > 0 && sizes[2] > 0 && sizes[0] < k31 && sizes[1] < k31 &&
                    sizes[2] < k31 && sizes[1] * pitch * 2 < (int64_t{1} << 40);
  if (!operands_.back() && fits) {
    bytes_ = (bytes_ + 127) / 128 * 128;
    // dst holds the byte offset until copy() has the buffer
    jobs_.push_back(PitchedCopyJob{static_cast<const uint16_t*>(t.data_ptr()), reinterpret_cast<uint16_t*>(bytes_),
                                   sizes[0], sizes[1], sizes[2], pitch, {strides[0], strides[1], strides[2]}});
    job_operand_.push_back(static_cast<int>(operands_.size()) - 1);
    bytes_ += sizes[0] * sizes[1] * pitch * 2;
  }
  return static_cast<int>(operands_.size()) - 1;
}

void StagedOperands::copy(const at::Device& device, cudaStream_t stream, std::vector<at::Tensor>& keep) {
  if (jobs_.empty()) return;
  // Straight to the CUDA allocator (through the dispatcher, at::empty costs microseconds).
  keep.push_back(at::detail::empty_cuda({bytes_}, at::kByte, device, std::nullopt));
  auto* base = keep.back().data_ptr<uint8_t>();
  for (size_t j = 0; j < jobs_.size(); ++j) {
    PitchedCopyJob& job = jobs_[j];
    job.dst = reinterpret_cast<uint16_t*>(base + reinterpret_cast<uintptr_t>(job.dst));
    const int64_t sizes[3] = {job.batch, job.outer, job.inner};
    const int64_t strides[3] = {job.outer * job.pitch, job.pitch, 1};
    operands_[job_operand_[j]] = tma_operand(job.dst, dtype_, sizes, strides);
    // The transposes first: the matmul launches as a programmatic dependent of the last kernel in
    // front of it, which the pitched copy lets start early and a transpose kernel does not; the
    // pitched copy itself is a plain launch, so it starts once the transposes have finished.
    if (transposes(job)) {
      constexpr int64_t dims[3] = {0, 1, 2};
      permute_into(job.src, job.dst, 2, 3, sizes, job.stride, dims, stream);
    }
  }
  // (the rest in place: no second list of jobs on every call)
  jobs_.erase(std::remove_if(jobs_.begin(), jobs_.end(), transposes), jobs_.end());
  if (!jobs_.empty()) launch_pitched_copies(jobs_, stream);
  jobs_.clear();
  job_operand_.clear();
  bytes_ = 0;
}

}  // namespace torch_grouped
