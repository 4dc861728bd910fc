"""Every op under torch.compile(fullgraph=True), with static and dynamic shapes, and through
torch.export, over its shared samples; a small MoE layer, forward and backward, compiled with
dynamic shapes, and exported with a dynamic token count; and a linear layer through streamk_mm
trained compiled."""
import pytest
import torch
from torch.utils._pytree import tree_flatten

import torch_grouped as tg
from harness import HOPPER
from op_table import OPS


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("autocast", [False, True], ids=["eager_dtypes", "autocast"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("op", OPS, ids=str)
def test_op_compiles_fullgraph(op, dynamic, autocast, device):
    """Compiled as eager runs it; under bf16 autocast too (the casts traced into the graph, and
    assert_close's dtype check holds the compiled output to eager autocast's: test_autocast.py)."""
    for s in op.samples(torch.float32, device):
        leaves, _ = tree_flatten(s.args)
        if not any(isinstance(x, torch.Tensor) for x in leaves):
            continue  # nothing to trace
        torch._dynamo.reset()  # each sample is its own program, not a recompilation
        compiled = torch.compile(lambda *args: op.api(*args, **s.kwargs), fullgraph=True,
                                 dynamic=dynamic, backend="aot_eager")
        with torch.autocast(device, dtype=torch.bfloat16, enabled=autocast):
            out, ref = tree_flatten(compiled(*s.args))[0], tree_flatten(op.api(*s.args, **s.kwargs))[0]
        assert len(out) == len(ref), s
        for o, r in zip(out, ref):
            torch.testing.assert_close(o, r, msg=lambda m: f"{s}: {m}")


class _Call(torch.nn.Module):
    """One sample's call as a module (torch.export takes modules)."""

    def __init__(self, api, kwargs):
        super().__init__()
        self.api, self.kwargs = api, kwargs

    def forward(self, *args):
        return self.api(*args, **self.kwargs)


@pytest.mark.parametrize("op", OPS, ids=str)
def test_op_exports(op, device):
    """torch.export (the deployment path: AOTInductor, ExecuTorch) keeps the op as one node
    of the graph, and the exported program computes what eager does."""
    for s in op.samples(torch.float32, device):
        leaves, _ = tree_flatten(s.args)
        if not any(isinstance(x, torch.Tensor) and x.numel() for x in leaves):
            continue  # nothing to trace (the Python API answers empty calls itself)
        program = torch.export.export(_Call(op.api, s.kwargs), s.args)
        assert any(n.target == op.overload for n in program.graph.nodes), s
        out, ref = tree_flatten(program.module()(*s.args))[0], tree_flatten(op.api(*s.args, **s.kwargs))[0]
        assert len(out) == len(ref), s
        for o, r in zip(out, ref):
            torch.testing.assert_close(o, r, msg=lambda m: f"{s}: {m}")


class MoE(torch.nn.Module):
    """Top-1 routed experts, each a two-layer MLP, through grouped_mm."""

    def __init__(self, experts, dim, hidden):
        super().__init__()
        self.router = torch.nn.Linear(dim, experts, bias=False)
        self.w1 = torch.nn.Parameter(torch.randn(experts, dim, hidden) / dim**0.5)
        self.w2 = torch.nn.Parameter(torch.randn(experts, hidden, dim) / hidden**0.5)

    def forward(self, x):
        expert = self.router(x).argmax(dim=-1)
        order = expert.argsort()
        counts = torch.bincount(expert, minlength=self.w1.shape[0])
        offs = counts.cumsum(0).to(torch.int32)
        h = torch.relu(tg.grouped_mm(x[order], self.w1, offs))
        y = tg.grouped_mm(h, self.w2, offs)
        return torch.empty_like(y).index_copy(0, order, y)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_moe_layer_forward_backward_dynamic(backend, device):
    torch.manual_seed(0)
    model = MoE(4, 16, 32).to(device)
    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend=backend)
    for tokens in (24, 37):
        x = torch.randn(tokens, 16, device=device)
        eager_out = model(x)
        eager_out.square().sum().backward()
        eager_grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        model.zero_grad()
        out = compiled(x)
        out.square().sum().backward()
        torch.testing.assert_close(out, eager_out)
        for g, e in zip([p.grad for p in model.parameters() if p.grad is not None], eager_grads):
            torch.testing.assert_close(g, e)
        model.zero_grad()


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_streamk_mm_trains_compiled_dynamic(backend, device):
    """A linear layer through streamk_mm, whose autograd kernel is C++ (csrc/common/
    matmul_autograd.cpp, as grouped_mm's, which the MoE layer trains through): compiled with
    dynamic shapes, the gradients of both operands are eager's, over batch sizes that recompile
    nothing; and with only the weight needing a gradient."""
    torch.manual_seed(1)
    w = torch.randn(48, 24, device=device, requires_grad=True)
    step = lambda x: tg.streamk_mm(torch.relu(x), w).square().sum()  # noqa: E731
    compiled = torch.compile(step, fullgraph=True, dynamic=True, backend=backend)
    for rows, x_grad in ((40, True), (72, True), (56, False)):
        x = torch.randn(rows, 48, device=device, requires_grad=x_grad)
        step(x).backward()
        eager = (x.grad, w.grad.clone())
        x.grad, w.grad = None, None
        compiled(x).backward()
        if x_grad:
            torch.testing.assert_close(x.grad, eager[0])
        torch.testing.assert_close(w.grad, eager[1])
        w.grad = None


def test_moe_layer_exports_with_dynamic_tokens(device):
    torch.manual_seed(2)
    model = MoE(4, 16, 32).to(device)
    x = torch.randn(24, 16, device=device)
    program = torch.export.export(model, (x,), dynamic_shapes={"x": {0: torch.export.Dim("tokens", min=2, max=4096)}})
    assert sum(n.target == torch.ops.grouped.grouped_mm.default for n in program.graph.nodes) == 2
    for tokens in (24, 37, 5):
        x = torch.randn(tokens, 16, device=device)
        torch.testing.assert_close(program.module()(x), model(x))


@pytest.mark.gpu
@pytest.mark.skipif(not HOPPER, reason="needs a Hopper GPU and a CUDA build")
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_bf16_moe_layer_on_the_kernel(backend):
    """The MoE layer in bf16 on Hopper, where every grouped_mm of its forward and backward (rows
    grouped, and the weight gradients' K grouped) runs the persistent kernel: compiled with
    dynamic shapes, the same outputs and gradients as eager, over token counts that leave short
    tail tiles."""
    torch.manual_seed(3)
    model = MoE(4, 64, 128).to("cuda", torch.bfloat16)
    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend=backend)
    for tokens in (300, 517):
        x = torch.randn(tokens, 64, device="cuda", dtype=torch.bfloat16)
        eager_out = model(x)
        eager_out.float().square().sum().backward()
        eager_grads = [p.grad.clone() for p in (model.w1, model.w2)]
        model.zero_grad()
        out = compiled(x)
        out.float().square().sum().backward()
        torch.testing.assert_close(out, eager_out)
        for g, e in zip((model.w1.grad, model.w2.grad), eager_grads):
            torch.testing.assert_close(g, e)
        model.zero_grad()
