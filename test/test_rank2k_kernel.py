"""The Hopper Rank2K kernel behind syr2k: only the triangle's tiles, each written with its mirror,
so the output is exactly symmetric; alpha, beta and c; ragged groups against the 128-row tile;
and the GEMM-scheduler switch the benchmark uses."""
import pytest
import torch

import reference
import torch_grouped as tg

HOPPER = torch.cuda.is_available() and tg.has_cuda_kernels() and torch.cuda.get_device_capability()[0] == 9
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HOPPER, reason="needs a Hopper GPU and a CUDA build")]

SIZES = [(1, 8), (127, 64), (128, 136), (129, 72), (300, 512), (0, 16), (45, 0), (700, 1000)]


def problem(dtype, seed, with_c):
    g = torch.Generator().manual_seed(seed)
    a = [torch.randn(n, k, generator=g).to("cuda", dtype) for n, k in SIZES]
    b = [torch.randn(n, k, generator=g).to("cuda", dtype) for n, k in SIZES]
    c = [torch.randn(n, n, generator=g).to("cuda", dtype) for n, _ in SIZES] if with_c else []
    return a, b, c


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("with_c", [False, True])
def test_matches_reference_and_is_exactly_symmetric(dtype, uplo, with_c):
    a, b, c = problem(dtype, 1 + with_c, with_c)
    alpha, beta = (0.75, -1.5) if with_c else (1.0, 0.0)
    torch.empty(1 << 24, device="cuda").fill_(float("nan"))  # poison what the outputs reuse
    out = tg.syr2k(a, b, c, uplo=uplo, alpha=alpha, beta=beta)
    for o, r in zip(out, reference.syr2k(a, b, c, uplo, alpha, beta)):
        assert not o.isnan().any(), "unwritten elements"
        reference.assert_close(o, r, dtype)
        assert torch.equal(o, o.T), "not exactly symmetric"


def test_gemm_scheduler_switch_gives_the_same_matrix(monkeypatch):
    a, b, _ = problem(torch.bfloat16, 3, False)
    triangle = tg.syr2k(a, b)
    monkeypatch.setenv("TORCH_GROUPED_SYR2K_SCHEDULER", "gemm")
    full = tg.syr2k(a, b)
    for t, f in zip(triangle, full):
        reference.assert_close(f, t.double(), torch.bfloat16)
        assert torch.equal(f.tril(), t.tril())  # the same tiles, the same sums


def test_unaligned_k_reads_pitched_copies():
    a = [torch.randn(40, 12, device="cuda", dtype=torch.float16)]
    b = [torch.randn(40, 12, device="cuda", dtype=torch.float16)]
    out = tg.syr2k(a, b)
    reference.assert_close(out[0], reference.syr2k(a, b, [], "L", 1.0, 0.0)[0], torch.float16)
