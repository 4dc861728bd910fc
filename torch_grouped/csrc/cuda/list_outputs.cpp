#include "list_outputs.h"

#include <ATen/cuda/EmptyTensor.h>
#include <c10/core/TensorImpl.h>

namespace torch_grouped {

std::vector<at::Tensor> outputs_in_one_block(const std::vector<std::pair<int64_t, int64_t>>& shapes,
                                             at::ScalarType dtype, const at::Device& device) {
  // 256 bytes: what a kernel downstream may assume of a fresh tensor's start (vector accesses)
  constexpr int64_t kAlign = 256;
  const int64_t element = static_cast<int64_t>(c10::elementSize(dtype));
  std::vector<int64_t> offsets(shapes.size());
  int64_t bytes = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    offsets[i] = bytes / element;
    bytes += (shapes[i].first * shapes[i].second * element + kAlign - 1) / kAlign * kAlign;
  }
  const at::Tensor block = at::detail::empty_cuda({bytes}, at::kByte, device, std::nullopt);
  const caffe2::TypeMeta meta = c10::scalarTypeToTypeMeta(dtype);
  std::vector<at::Tensor> out;
  out.reserve(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto impl = c10::make_intrusive<c10::TensorImpl>(c10::Storage(block.storage()), block.key_set(), meta);
    impl->set_sizes_contiguous({shapes[i].first, shapes[i].second});
    impl->set_storage_offset(offsets[i]);
    out.emplace_back(std::move(impl));
  }
  return out;
}

}  // namespace torch_grouped
