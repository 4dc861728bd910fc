"""The checks every op runs over its shared samples, and what the GPU tests ask of the profiler."""
import contextlib
import re

import pytest
import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

import torch_grouped as tg
from reference import TOLERANCE, rel_error

# The tests of the Hopper kernels: `pytestmark = HOPPER_ONLY` in their files.
HOPPER = torch.cuda.is_available() and tg.has_cuda_kernels() and torch.cuda.get_device_capability()[0] == 9
HOPPER_ONLY = [pytest.mark.gpu, pytest.mark.skipif(not HOPPER, reason="needs a Hopper GPU and a CUDA build")]


def _differentiable_leaves(args):
    leaves, spec = tree_flatten(args)
    idx = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor) and x.requires_grad]
    return leaves, spec, idx


def check_gradcheck(op, sample):
    """torch.autograd.gradcheck of `op(*args, **kwargs)` over every tensor that requires grad
    (fast mode: random projections of the Jacobian, so samples of any size stay cheap)."""
    leaves, spec, idx = _differentiable_leaves(sample.args)
    if not idx:
        return

    def fn(*xs):
        new = list(leaves)
        for i, x in zip(idx, xs):
            new[i] = x
        out = op(*tree_unflatten(new, spec), **sample.kwargs)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    assert torch.autograd.gradcheck(fn, [leaves[i] for i in idx], eps=1e-6, atol=1e-5, rtol=1e-4,
                                    fast_mode=True)


def check_gradients_match(op, ref_op, sample, dtype):
    """Gradients of our op against the reference's (PyTorch autograd) for the same cotangents."""
    leaves, spec, idx = _differentiable_leaves(sample.args)
    if not idx:
        return
    out = op(*sample.args, **sample.kwargs)
    ref = ref_op(*sample.args, **sample.kwargs)
    outs, _ = tree_flatten(out)
    refs, _ = tree_flatten(ref)
    cots = [torch.randn_like(o, dtype=torch.float64) for o in refs]
    inputs = [leaves[i] for i in idx]
    ours = torch.autograd.grad([o.double() for o in outs], inputs, cots, allow_unused=True)
    theirs = torch.autograd.grad(refs, inputs, cots, allow_unused=True)
    for i, (g, r) in enumerate(zip(ours, theirs)):
        if r is None:
            continue
        g = torch.zeros_like(r) if g is None else g
        err = rel_error(g, r)
        assert err <= 4 * TOLERANCE[dtype], f"grad of input {i}: relative error {err:.3g}"


def check_opcheck(opoverload, sample):
    leaves, _ = tree_flatten(sample.args)
    if not any(isinstance(x, torch.Tensor) for x in leaves):
        return  # the dispatcher needs a tensor; the Python API answers this case (see ops.py)
    torch.library.opcheck(opoverload, sample.args, sample.kwargs)


@contextlib.contextmanager
def allow_tf32(on):
    """torch.backends.cuda.matmul.allow_tf32 set to `on` inside, restored after."""
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = on
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


def set_env(monkeypatch, name, value):
    """Sets environment variable `name` for the test (value None: unset)."""
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)


def poison():
    """Fills 64 MB of the caching allocator's memory with NaN: outputs that reuse it show their
    unwritten elements as NaN."""
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))


def replay_with_new_offsets(run, a, b, offs, ends_list, check):
    """Captures out = run() in a CUDA graph (after a warm-up outside it), then for each `ends` of
    ends_list draws new values into a and b, writes the offsets and replays: check(out) each time."""
    run()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = run()
    for ends in ends_list:
        a.normal_(), b.normal_()
        offs.copy_(torch.tensor(ends, dtype=offs.dtype))
        graph.replay()
        check(out)


def kernels_launched(fn):
    """Names of the CUDA kernels that fn() launches (the profiler's, demangled). Skips the test
    where the profiler sees no kernels at all (under compute-sanitizer), told by a probe kernel
    launched beside fn's: a test that asks which kernel ran cannot be answered there, and its
    empty answer would fail it (session 56: one such test stopped memcheck's run of the rest)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        torch.cuda._sleep(1)  # the probe: at::cuda's spin_kernel, which no op of ours launches
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if not any("spin_kernel" in name for name in names):
        pytest.skip("the profiler sees no CUDA kernels in this process (compute-sanitizer hides them)")
    return [name for name in names if "spin_kernel" not in name]


def _configs(names):
    flag = "(true|false)"
    found = (re.search(rf"GroupedGemmConfig<[^<>]*, (\d+), {flag}, {flag}, {flag}>", n) for n in names)
    return [(int(m.group(1)), *(m.group(i) == "true" for i in (2, 3, 4))) for m in found if m]


def matmul_configs(names):
    """The (cluster size, TMA-store epilogue, A K-major) of every grouped GEMM kernel
    configuration among kernel names: template arguments of GroupedGemmConfig."""
    return {c[:3] for c in _configs(names)}


def gemm_replayed(a, b, **kwargs):
    """tg.gemm(a, b, **kwargs) warmed up, captured in a CUDA graph, its inputs refilled (normal_)
    and its outputs poisoned (NaN), then replayed: the outputs, for the caller to check against
    the new inputs."""
    tg.gemm(a, b, **kwargs)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tg.gemm(a, b, **kwargs)
    for x in a + b:
        x.normal_()
    for o in out:
        o.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    return out


def matmul_modes(names):
    """The KernelMode of every grouped GEMM kernel among kernel names (kernels/grouped_gemm_sm90.cuh:
    0 grouped, 1 Rank2K, 2 Stream-K, 3 Rank2K over Stream-K units), one entry per launch."""
    found = (re.search(r"GroupedGemmConfig<[^<>]*?\(torch_grouped::kernels::KernelMode\)(\d)", n) for n in names)
    return [int(m.group(1)) for m in found if m]


def matmul_tiles(names):
    """The (tile_m, tile_n) of every grouped GEMM kernel configuration among kernel names."""
    found = (re.search(r"GroupedGemmConfig<[^,<>]+, (\d+), (\d+),", n) for n in names)
    return {(int(m.group(1)), int(m.group(2))) for m in found if m}


def transpose_kernels(names):
    """How many of the launched kernels are the layout ops' permuted copies (kernels/permute*.cuh),
    which stage a transposed matmul operand of 1 MB or more (cuda/staged_operands.cpp)."""
    return sum(bool(re.search(r"torch_grouped::kernels::\w+_copy<", n)) for n in names)


def row_copy_kernels(names):
    """How many of the launched matmul kernels read operands by row copies (kernels/row_copy.cuh):
    GroupedGemmConfig's last template argument."""
    return sum(c[3] for c in _configs(names))

