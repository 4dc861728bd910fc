"""fp32 grouped_mm on the Hopper grouped kernel through TF32 WGMMA (unless
TORCH_GROUPED_FP32_KERNELS=0): fp32-accurate by default (3xTF32: A and each group's Bᵀ staged as
TF32 hi and lo parts, K three times as long), one TF32 pass where torch allows TF32 matmuls; the
2-D x 3-D (MoE), 3-D x 2-D and 3-D x 3-D forms with empty groups, rows past the last offset, K
that TMA cannot address, B either way round; no host synchronisation, CUDA graphs with new
offsets; the K-grouped form (2-D x 2-D) stays on cuBLAS."""
import pytest
import torch

import reference
import torch_grouped as tg
from harness import HOPPER, HOPPER_ONLY, allow_tf32, kernels_launched, poison, replay_with_new_offsets
from reference import TF32_SPLIT_TOLERANCE, TF32_TOLERANCE

pytestmark = HOPPER_ONLY

KERNEL = "GroupedGemmConfig<cutlass::tfloat32_t"


def randn(*shape, seed, n_major=True):
    """On the GPU; n_major=False: the last two axes' values laid out transposed (B K-major)."""
    g = torch.Generator().manual_seed(seed)
    if n_major:
        return torch.randn(*shape, generator=g).cuda()
    return torch.randn(*shape[:-2], shape[-1], shape[-2], generator=g).cuda().mT


def offsets(ends):
    return torch.tensor(ends, dtype=torch.int32, device="cuda")


# (name, a, b, offs): ragged groups with an empty one and rows past the last offset; K off the
# 32-element step; K = 37 (rows TMA cannot address); B K-major; the other forms.
def problems():
    yield "moe", randn(700, 200, seed=1), randn(5, 200, 264, seed=2), offsets([130, 130, 400, 529, 650])
    yield "moe_k37_b_k_major", randn(300, 37, seed=3), randn(3, 37, 136, seed=4, n_major=False), offsets([0, 129, 290])
    yield "moe_one_expert", randn(256, 512, seed=5), randn(1, 512, 128, seed=6), offsets([256])
    yield "3d_2d", randn(3, 140, 96, seed=7), randn(96, 400, seed=8), offsets([100, 100, 390])
    yield "3d_3d", randn(4, 130, 72, seed=9), randn(4, 72, 200, seed=10, n_major=False), None
    # views TMA cannot address in place: rows of 65 and 130 elements, bases 4 bytes past a 16-byte line
    yield ("moe_misaligned_views", randn(301, 65, seed=13)[1:, 1:], randn(3, 64, 130, seed=14)[:, :, 1:129],
           offsets([90, 200, 280]))


PROBLEMS = {name: (a, b, offs) for name, a, b, offs in problems()} if HOPPER else {}


def check(out, a, b, offs, tolerance):
    assert not out.isnan().any(), "unwritten elements"
    err = reference.rel_error(out, reference.grouped_mm(a, b, offs))
    assert err <= tolerance, f"relative error {err:.3g} > {tolerance:.3g}"


@pytest.mark.parametrize("name", ["moe", "moe_k37_b_k_major", "moe_one_expert", "3d_2d", "3d_3d", "moe_misaligned_views"])
def test_fp32_accurate_by_default(name):
    """3xTF32 on the kernel: float64's result within fp32-level error, rows past the last offset
    zero, the same bits on a second run."""
    a, b, offs = PROBLEMS[name]
    poison()
    with allow_tf32(False):
        out = tg.grouped_mm(a, b, offs)
        again = tg.grouped_mm(a, b, offs)
    assert out.dtype == torch.float32
    check(out, a, b, offs, TF32_SPLIT_TOLERANCE)
    assert torch.equal(out, again)
    if a.dim() == 2 and offs is not None:
        assert (out[int(offs[-1]):] == 0).all()


@pytest.mark.parametrize("name", ["moe", "3d_2d", "3d_3d", "moe_misaligned_views"])
def test_tf32_where_torch_allows_it(name):
    """allow_tf32 on: one TF32 pass, TF32's error (ten times 3xTF32's at least)."""
    a, b, offs = PROBLEMS[name]
    with allow_tf32(True):
        tf32 = tg.grouped_mm(a, b, offs)
    with allow_tf32(False):
        split = tg.grouped_mm(a, b, offs)
    check(tf32, a, b, offs, TF32_TOLERANCE)
    ref = reference.grouped_mm(a, b, offs)
    assert reference.rel_error(tf32, ref) > 10 * reference.rel_error(split, ref), "allow_tf32 changed nothing"


@pytest.mark.parametrize("tf32", [False, True])
def test_takes_its_kernel_without_synchronising(tf32):
    """The TF32 kernel after the staging kernel, and offs never read on the host."""
    a, b, offs = PROBLEMS["moe"]
    with allow_tf32(tf32):
        names = kernels_launched(lambda: tg.grouped_mm(a, b, offs))  # (also the warm-up)
        torch.cuda.set_sync_debug_mode("error")  # a synchronising call now raises
        try:
            tg.grouped_mm(a, b, offs)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    assert any(KERNEL in n for n in names), names
    assert any("tf32_operand_kernel" in n for n in names), names


def test_cublas_when_asked(monkeypatch):
    """TORCH_GROUPED_FP32_KERNELS=0: the loop of cuBLAS calls (reading offs on the host), the same
    result within fp32's error."""
    a, b, offs = PROBLEMS["moe"]
    monkeypatch.setenv("TORCH_GROUPED_FP32_KERNELS", "0")
    with allow_tf32(False):
        names = kernels_launched(lambda: tg.grouped_mm(a, b, offs))
        check(tg.grouped_mm(a, b, offs), a, b, offs, TF32_SPLIT_TOLERANCE)
    assert not any("GroupedGemmConfig" in n for n in names), names
    torch.cuda.set_sync_debug_mode("error")  # the loop reads offs on the host: the check above has teeth
    try:
        with pytest.raises(RuntimeError, match="synchroniz"):
            tg.grouped_mm(a, b, offs)
    finally:
        torch.cuda.set_sync_debug_mode("default")


def test_k_grouped_form_stays_on_cublas():
    a, b = randn(96, 300, seed=11), randn(300, 80, seed=12)
    offs = offsets([100, 100, 250, 300])
    with allow_tf32(False):
        names = kernels_launched(lambda: tg.grouped_mm(a, b, offs))
        check(tg.grouped_mm(a, b, offs), a, b, offs, TF32_SPLIT_TOLERANCE)
    assert not any(KERNEL in n for n in names), names


@pytest.mark.parametrize("tf32", [False, True])
def test_cuda_graph_with_new_offsets(tf32):
    """Captured once (the staging included), replayed with new operand values and new offsets."""
    a, b, offs = (x.clone() for x in PROBLEMS["moe"])
    with allow_tf32(tf32):
        replay_with_new_offsets(lambda: tg.grouped_mm(a, b, offs), a, b, offs,
                                ([0, 300, 300, 699, 700], [64, 128, 192, 256, 320]),
                                lambda out: check(out, a, b, offs, TF32_TOLERANCE if tf32 else TF32_SPLIT_TOLERANCE))
