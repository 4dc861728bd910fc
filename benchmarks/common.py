"""What every benchmark script shares: the case record, timing, the measured ceilings."""
import dataclasses
import json
import math
import os
import statistics
import time
from typing import Any, Callable, Dict, Optional

import torch


@dataclasses.dataclass
class Case:
    op: str
    name: str
    dtype: torch.dtype
    ours: Callable[[], Any]
    peers: Dict[str, Callable[[], Any]]  # the first one is the headline peer
    work: float          # FLOPs (ceiling "mm") or bytes read + written (ceiling "copy")
    ceiling: str         # "mm" or "copy"
    tol: float           # allowed ‖ours − peer‖ / ‖peer‖
    exact: bool = False  # layout ops must match bit for bit


def on_gpu(device) -> bool:
    return torch.device(device).type == "cuda"


def with_env(settings, fn):
    """fn under the environment variables `settings` (the CUDA paths read them on every call)."""
    def run():
        before = {name: os.environ.get(name) for name in settings}
        os.environ.update(settings)
        try:
            return fn()
        finally:  # as it was, a variable the caller had set included
            for name, value in before.items():
                if value is None:
                    del os.environ[name]
                else:
                    os.environ[name] = value
    return run


# The switches that put fp32 and fp64 calls on our kernels whatever their measured rules say, for
# the rows that measure those kernels.
KERNEL_SWITCHES = {torch.float32: {"TORCH_GROUPED_FP32_KERNELS": "1"}, torch.float64: {"TORCH_GROUPED_FP64_KERNELS": "1"}}


def on_our_kernel(dtype, fn):
    """fn with our kernel switched on for `dtype` (other dtypes take it anyway: fn as it is)."""
    settings = KERNEL_SWITCHES.get(dtype)
    return with_env(settings, fn) if settings else fn


def with_tf32(fn):
    """fn with torch's TF32 matmuls allowed: our fp32 kernels then run one TF32 pass, not 3xTF32."""
    def run():
        before = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return fn()
        finally:
            torch.backends.cuda.matmul.allow_tf32 = before
    return run


def time_ms(fn: Callable[[], Any], device, rep_ms: int = 100, warmup_ms: Optional[int] = None) -> float:
    """Median time of one call in milliseconds: CUDA events through triton's do_bench on the GPU
    (it flushes L2 between calls) over about rep_ms of calls after warmup_ms (default rep_ms / 4)
    of them, perf_counter on the CPU."""
    if on_gpu(device):
        from triton.testing import do_bench

        warmup = max(1, rep_ms // 4) if warmup_ms is None else warmup_ms
        return float(do_bench(fn, warmup=warmup, rep=rep_ms, return_mode="median"))
    fn()
    samples, start = [], time.perf_counter()
    while len(samples) < 5 or (time.perf_counter() - start < 0.2 and len(samples) < 50):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


# On the GPU ours and the peers are timed in turn, GPU_ROUNDS times over, the order reversed in
# every other round, each keeping the median of its rounds (the same ~rep_ms of timed calls in
# all, each round after a full warm-up). A heavy case moves the GPU's clock under its power cap
# (H100, session 24: 1389-1979 MHz between matmul shapes; a weight gradient at 1657-1671 MHz, its
# stores alone at 1979), and the clock needs a while to settle after a lighter call (a host-bound
# loop of `mm`), so a single back-to-back pair of measurements leaned towards whichever ran in the
# better state (Mixtral's ratio moved 0.93-1.17x between runs).
# The number of rounds is even: with forward and reversed rounds in pairs, every callable's
# samples sit at places whose middle two average the same, so a clock that drifts steadily
# through a case favours none of them. Three rounds did not: the first callable (ours) took the
# latest middle place, and on gemm 8 x 4096³, whose samples rose ~20% through the case as the
# GPU heated (H200, session 56), ours measured 0.90x the loop of mm in whole runs, against
# 0.975x when every callable took every place in turn (tools/probe_bench_order.py).
GPU_ROUNDS = 4
GPU_WARMUP_MS = 25
# Before the rounds, the first callable runs untimed for about SETTLE_MS (BENCH_SETTLE_MS=N), so
# that the first round does not start from the previous case's clock and temperature (300 ms
# moved that gemm case from 0.90x to 0.99x, session 56). BENCH_ROUND_SAMPLES=1 prints every
# round's samples in their order.
SETTLE_MS = int(os.environ.get("BENCH_SETTLE_MS", "200") or 0)
ROUND_SAMPLES = os.environ.get("BENCH_ROUND_SAMPLES", "") == "1"


def _settle(fn: Callable[[], Any], ms: int) -> None:
    """Calls fn for about ms milliseconds, untimed (the GPU's clock and power state settle)."""
    start = time.perf_counter()
    while (time.perf_counter() - start) * 1e3 < ms:
        fn()
        torch.cuda.synchronize()


def time_in_turn(fns: Dict[Any, Callable[[], Any]], device, rep_ms: int = 100) -> Dict[Any, float]:
    """time_ms of each of fns; on the GPU after SETTLE_MS of the first, in GPU_ROUNDS rounds of
    alternating order (median)."""
    if not on_gpu(device):
        return {name: time_ms(fn, device, rep_ms) for name, fn in fns.items()}
    rounds: Dict[Any, list] = {name: [] for name in fns}
    order = list(fns.items())
    if SETTLE_MS > 0:
        _settle(order[0][1], SETTLE_MS)
    for r in range(GPU_ROUNDS):
        for name, fn in (order if r % 2 == 0 else order[::-1]):
            rounds[name].append(time_ms(fn, device, max(1, rep_ms // GPU_ROUNDS), GPU_WARMUP_MS))
        if ROUND_SAMPLES:
            print(f"    round {r}: " + ", ".join(f"{name or 'ours'} {rounds[name][-1] * 1e3:.1f}"
                                                for name, _ in (order if r % 2 == 0 else order[::-1])))
    return {name: statistics.median(times) for name, times in rounds.items()}


def rel_error(out, ref) -> float:
    outs = out if isinstance(out, (list, tuple)) else [out]
    refs = ref if isinstance(ref, (list, tuple)) else [ref]
    num = sum((o.double() - r.double()).norm().item() ** 2 for o, r in zip(outs, refs)) ** 0.5
    den = sum(r.double().norm().item() ** 2 for r in refs) ** 0.5
    return num / den if den > 0 else num


def exactly_equal(out, ref) -> bool:
    outs = out if isinstance(out, (list, tuple)) else [out]
    refs = ref if isinstance(ref, (list, tuple)) else [ref]
    return all(o.shape == r.shape and torch.equal(o, r) for o, r in zip(outs, refs))


_CEILINGS: Dict[str, Dict[str, float]] = {}


def ceilings(device) -> Dict[str, float]:
    """The measured limits of this device, once per run: copy bandwidth (bytes read + written per
    second) and dense matmul rate (FLOP/s; bf16 8192³ on the GPU, fp32 on the CPU), also under
    "mm_<dtype>", where mm_ceiling adds the other dtypes' rates as cases ask for them."""
    key = str(device)
    if key not in _CEILINGS:
        gpu = on_gpu(device)
        n = (1 << 28) if gpu else (1 << 24)
        src = torch.randn(n // 4, device=device)
        dst = torch.empty_like(src)
        copy_ms = time_ms(lambda: dst.copy_(src), device)
        size = 8192 if gpu else 1024
        dtype = torch.bfloat16 if gpu else torch.float32
        a = torch.randn(size, size, device=device, dtype=dtype)
        b = torch.randn(size, size, device=device, dtype=dtype)
        mm_ms = time_ms(lambda: torch.mm(a, b), device)
        mm = 2 * size**3 / (mm_ms * 1e-3)
        _CEILINGS[key] = {"copy": 2 * n / (copy_ms * 1e-3), "mm": mm, "mm_dtype": str(dtype), _mm_key(dtype): mm}
    return _CEILINGS[key]


def _mm_key(dtype) -> str:
    return "mm_" + str(dtype).replace("torch.", "")


def mm_ceiling(device, dtype) -> float:
    """Dense torch.mm's rate in `dtype` on this device (FLOP/s, 8192³ on the GPU, 1024³ on the CPU),
    measured once per run: the limit a matmul case of that dtype is a fraction of (fp32 at torch's
    default precision, fp64 on cuBLAS's FP64 tensor-core kernels), not the bf16 rate."""
    limits = ceilings(device)
    if _mm_key(dtype) not in limits:
        size = 8192 if on_gpu(device) else 1024
        a = torch.randn(size, size, device=device, dtype=dtype)
        b = torch.randn(size, size, device=device, dtype=dtype)
        limits[_mm_key(dtype)] = 2 * size**3 / (time_ms(lambda: torch.mm(a, b), device) * 1e-3)
    return limits[_mm_key(dtype)]


def rate_text(case: Case, ms: float) -> str:
    rate = case.work / (ms * 1e-3)
    return f"{rate / 1e12:.1f} TFLOP/s" if case.ceiling == "mm" else f"{rate / 1e9:.0f} GB/s"


def run_case(case: Case, device) -> Dict[str, Any]:
    out = case.ours()
    headline = next(iter(case.peers))
    ref = case.peers[headline]()
    if case.exact:
        ok, err = exactly_equal(out, ref), 0.0
    else:
        err = rel_error(out, ref)
        ok = err <= case.tol
    times = time_in_turn({None: case.ours, **case.peers}, device)  # (None: ours; peers have names)
    ours_ms = times.pop(None)
    peers_ms = times
    limit = mm_ceiling(device, case.dtype) if case.ceiling == "mm" else ceilings(device)["copy"]
    return {
        "op": case.op, "case": case.name, "dtype": str(case.dtype).replace("torch.", ""),
        "ok": ok, "rel_error": err, "ours_ms": ours_ms, "peers_ms": peers_ms, "headline_peer": headline,
        "ratio": peers_ms[headline] / ours_ms,
        "ratios": {name: ms / ours_ms for name, ms in peers_ms.items()},
        "rate": case.work / (ours_ms * 1e-3), "unit": "FLOP/s" if case.ceiling == "mm" else "B/s",
        "fraction_of_limit": case.work / (ours_ms * 1e-3) / limit,
        "rate_text": rate_text(case, ours_ms),
    }


def make_device(requested: Optional[str]) -> str:
    if requested:
        return requested
    import torch_grouped

    return "cuda" if torch.cuda.is_available() and torch_grouped.has_cuda_kernels() else "cpu"


def geomean(values) -> float:
    """The geometric mean; NaN for no values."""
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def report_targets(title: str, summary: Dict[str, Any], targets: Dict[str, float], path: str) -> Dict[str, bool]:
    """Prints each of an issue's targets (summary[key] >= goal: met or MISSED; a figure the run has
    no case for is NaN, "none", and missed), stores the verdicts in summary["targets_met"] and
    writes the summary to `path` as JSON. Performance is reported, never asserted."""
    def text(key):
        return "none" if math.isnan(summary[key]) else f"{summary[key]:.2f}"
    verdicts = {key: not math.isnan(summary[key]) and summary[key] >= goal for key, goal in targets.items()}
    print(f"{title}: " + "; ".join(f"{key} >= {goal}: {text(key)} {'met' if verdicts[key] else 'MISSED'}"
                                   for key, goal in targets.items()))
    summary["targets_met"] = verdicts
    save_summary(summary, path)
    return verdicts


def save_summary(summary: Dict[str, Any], path: str) -> None:
    with open(path, "w") as f:
        json.dump(summary, f, indent=1)


def work_of(result: Dict[str, Any]) -> float:
    """A run_case result's work (FLOP or bytes): its rate times its time."""
    return result["rate"] * result["ours_ms"] * 1e-3
