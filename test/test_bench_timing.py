"""The benchmark's GPU timing order (benchmarks/common.time_in_turn), on the CPU with a fake clock:
under a clock that drifts steadily through a case, no callable's median may gain from its place
in the rounds (session 56: with three rounds the first callable, ours, always took the latest
median, and gemm 8 x 4096³ read 0.90x in whole runs against 0.975x timed evenly)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))

import common  # noqa: E402

BASE_MS = {"ours": 1.00, "loop of mm": 1.02, "variant": 0.97, "another": 1.10}


def drifting_clock(monkeypatch, slope_ms):
    """Fakes the GPU: each timed sample of callable x reads BASE_MS[x] + slope_ms times the number
    of samples taken before it in the case. Returns the list of (name, sample) in timing order and
    the callables settled before the rounds."""
    taken, settled = [], []

    def time_ms(fn, device, rep_ms=100, warmup_ms=None):
        taken.append((fn.name, BASE_MS[fn.name] + slope_ms * len(taken)))
        return taken[-1][1]

    monkeypatch.setattr(common, "on_gpu", lambda device: True)
    monkeypatch.setattr(common, "time_ms", time_ms)
    monkeypatch.setattr(common, "_settle", lambda fn, ms: settled.append(fn.name))
    return taken, settled


def callables(names):
    def make(name):
        fn = lambda: None  # noqa: E731
        fn.name = name
        return fn
    return {name: make(name) for name in names}


@pytest.mark.parametrize("count", [2, 3, 4])
@pytest.mark.parametrize("slope_ms", [0.01, -0.01])
def test_a_steady_drift_favours_no_place(monkeypatch, count, slope_ms):
    names = list(BASE_MS)[:count]
    taken, _ = drifting_clock(monkeypatch, slope_ms)
    medians = common.time_in_turn(callables(names), "cuda")
    assert len(taken) == common.GPU_ROUNDS * count
    drift = {name: medians[name] - BASE_MS[name] for name in names}
    assert max(drift.values()) - min(drift.values()) == pytest.approx(0.0, abs=1e-12), drift


def test_rounds_alternate_and_the_first_callable_settles_first(monkeypatch):
    taken, settled = drifting_clock(monkeypatch, 0.0)
    monkeypatch.setattr(common, "SETTLE_MS", 200)
    common.time_in_turn(callables(["ours", "loop of mm", "variant"]), "cuda")
    assert settled == ["ours"]
    order = [name for name, _ in taken]
    forward, reverse = ["ours", "loop of mm", "variant"], ["variant", "loop of mm", "ours"]
    assert order == (forward + reverse) * (common.GPU_ROUNDS // 2)


def test_no_settling_when_switched_off(monkeypatch):
    _, settled = drifting_clock(monkeypatch, 0.0)
    monkeypatch.setattr(common, "SETTLE_MS", 0)
    common.time_in_turn(callables(["ours", "loop of mm"]), "cuda")
    assert settled == []
