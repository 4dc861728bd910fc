// The ops' autograd kernels (common/*_autograd.cpp) record a graph node only when a gradient can
// flow: grad mode on and some input requiring grad. Otherwise they call the op itself below
// autograd. torch::autograd::Function::apply builds its node, copies every input's metadata and
// runs the forward's save_for_backward even when nothing requires grad, which a list of a hundred
// groups notices; the check here costs a few nanoseconds a tensor, against ~33 ns for the same
// check made in Python before the call (torch._C._any_requires_grad over gemm's two lists of 64:
// 4.2 µs on a 2-core CPU, session 54).
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <optional>

#include "op_signatures.h"

namespace torch_grouped {

inline bool requires_grad(const at::Tensor& t) { return t.defined() && t.requires_grad(); }
inline bool requires_grad(at::TensorList ts) {
  return std::any_of(ts.begin(), ts.end(), [](const at::Tensor& t) { return requires_grad(t); });
}
inline bool requires_grad(const std::optional<at::Tensor>& t) { return t.has_value() && requires_grad(*t); }
template <class T>
constexpr bool requires_grad(const T&) {  // sizes, strings, numbers, dtypes
  return false;
}

// `Function::apply(args...)` where a gradient can flow from the arguments, else the op `Name`
// below autograd with the same arguments (the same outputs, with no grad_fn).
template <class Function, const char* Name, class Signature, class... Args>
auto apply_where_grad_flows(const Args&... args) {
  if (at::GradMode::is_enabled() && (requires_grad(args) || ...)) return Function::apply(args...);
  at::AutoDispatchBelowADInplaceOrView below;
  return op_handle<Name, Signature>().call(args...);
}

}  // namespace torch_grouped
