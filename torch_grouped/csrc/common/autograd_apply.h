// The ops' autograd kernels (common/*_autograd.cpp) record a graph node only when a gradient can
// flow from the inputs they name (torch::autograd::compute_requires_grad: grad mode on and one of
// them requiring grad). Otherwise they call the op itself below autograd.
// torch::autograd::Function::apply builds its node, copies every input's metadata and runs the
// forward's save_for_backward even when nothing requires grad, which a list of a hundred groups
// notices; checked in Python before the call instead, it cost ~33 ns a tensor
// (torch._C._any_requires_grad over gemm's two lists of 64: 4.2 µs on a 2-core CPU, session 54).
#pragma once
#include <ATen/ATen.h>
#include <torch/csrc/autograd/functions/utils.h>

#include "op_signatures.h"

namespace torch_grouped {

using torch::autograd::compute_requires_grad;

// `Function::apply(args...)` where `grad_flows`, else the op `Name` below autograd with the same
// arguments (the same outputs, with no grad_fn).
template <class Function, const char* Name, class Signature, class... Args>
auto apply_where_grad_flows(bool grad_flows, const Args&... args) {
  if (grad_flows) return Function::apply(args...);
  at::AutoDispatchBelowADInplaceOrView below;
  return op_handle<Name, Signature>().call(args...);
}

}  // namespace torch_grouped
