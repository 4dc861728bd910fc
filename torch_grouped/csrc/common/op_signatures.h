// The ops' schema names and the C++ signatures of their kernels (cuda/*.h, cpu/portable.h), for the
// kernels registered in C++ at the Autocast and Autograd keys (common/autocast.cpp,
// common/*_autograd.cpp) that call the op again below their key, or another op for a gradient.
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <string>
#include <vector>

namespace torch_grouped {

inline constexpr char kGemm[] = "grouped::gemm";
inline constexpr char kGroupedMm[] = "grouped::grouped_mm";
inline constexpr char kSyr2k[] = "grouped::syr2k";
inline constexpr char kStreamKMm[] = "grouped::streamk_mm";
inline constexpr char kPermuteCopy[] = "grouped::permute_copy";
inline constexpr char kLayoutTransform[] = "grouped::layout_transform";
inline constexpr char kSymmetricSum[] = "grouped::_symmetric_sum";

using GemmSignature = std::vector<at::Tensor>(at::TensorList, at::TensorList, std::optional<at::ScalarType>,
                                              const std::string&, bool);
using GroupedMmSignature = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                      std::optional<at::ScalarType>);
using Syr2kSignature = std::vector<at::Tensor>(at::TensorList, at::TensorList, at::TensorList, const std::string&,
                                               double, double);
using StreamKMmSignature = at::Tensor(const at::Tensor&, const at::Tensor&, const std::string&, int64_t, int64_t);
using PermuteCopySignature = at::Tensor(const at::Tensor&, at::IntArrayRef);
using LayoutTransformSignature = at::Tensor(const at::Tensor&, const std::string&, const std::string&);
using SymmetricSumSignature = std::vector<at::Tensor>(at::TensorList);

// The op `Name`'s handle, looked up once.
template <const char* Name, class Signature>
const c10::TypedOperatorHandle<Signature>& op_handle() {
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow(Name, "").template typed<Signature>();
  return op;
}

}  // namespace torch_grouped
