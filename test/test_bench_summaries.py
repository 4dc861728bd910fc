"""The benchmark's per-issue summaries (benchmarks/bench_*.py `summarize`), fed with hand-made
results in run_case's format: which cases each target is judged on, the figures, the verdicts
printed and saved. On the CPU; no timing."""
import json
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))

import bench_gemm  # noqa: E402
import bench_grouped_mm  # noqa: E402
import bench_syr2k  # noqa: E402
from common import report_targets  # noqa: E402


def result(op, case, dtype, ratio, peers_ms=None, headline="loop of mm", ours_ms=1.0, flop=1e9, limit=1e15):
    """A run_case result: ours in ours_ms, the headline peer `ratio` times slower, other peers' times."""
    peers_ms = {headline: ratio * ours_ms, **(peers_ms or {})}
    rate = flop / (ours_ms * 1e-3)
    return {"op": op, "case": case, "dtype": dtype, "ok": True, "rel_error": 0.0, "ours_ms": ours_ms,
            "peers_ms": peers_ms, "headline_peer": headline, "ratio": ratio,
            "ratios": {name: ms / ours_ms for name, ms in peers_ms.items()}, "rate": rate, "unit": "FLOP/s",
            "fraction_of_limit": rate / limit, "rate_text": ""}


def saved(tmp_path, name):
    with open(tmp_path / name) as f:
        return json.load(f)


def test_report_targets_prints_and_saves_verdicts(tmp_path, capsys):
    summary = {"a": 1.5, "b": 0.5, "c": math.nan}
    verdicts = report_targets("issue 0 targets", summary, {"a": 1.2, "b": 1.0, "c": 1.0}, str(tmp_path / "s.json"))
    assert verdicts == {"a": True, "b": False, "c": False}
    assert capsys.readouterr().out == ("issue 0 targets: a >= 1.2: 1.50 met; b >= 1.0: 0.50 MISSED; "
                                       "c >= 1.0: none MISSED\n")
    assert saved(tmp_path, "s.json")["targets_met"] == verdicts


def test_grouped_mm_summary_judges_the_16_bit_moe_cases(tmp_path):
    peer = bench_grouped_mm.PEER
    results = [
        result("grouped_mm", "mixtral", "bfloat16", 1.3, headline=peer, flop=2e12, limit=2e12 / 1e-3 / 0.9),
        result("grouped_mm", "wgrad_small", "float16", 1.1, headline=peer),
        # not judged: fp32 against the same peer, fp64 against the loop, another op
        result("grouped_mm", "fp32", "float32", 0.5, headline=peer),
        result("grouped_mm", "fp64", "float64", 0.5),
        result("gemm", "list", "bfloat16", 0.5, headline=peer),
    ]
    summary = bench_grouped_mm.summarize(results, str(tmp_path))
    assert summary["cases"] == 2
    assert summary["geomean_vs_grouped_mm"] == pytest.approx(math.sqrt(1.3 * 1.1))
    assert summary["min_vs_grouped_mm"] == pytest.approx(1.1) and summary["slowest"] == "wgrad_small float16"
    assert summary["big_cases"] == ["mixtral bfloat16"] and summary["big_fraction_of_dense"] == pytest.approx(0.9)
    assert saved(tmp_path, "grouped_mm_summary.json")["targets_met"] == {
        "geomean_vs_grouped_mm": False, "min_vs_grouped_mm": True, "big_fraction_of_dense": True}


def test_grouped_mm_summary_of_a_cpu_run_is_none(tmp_path):
    assert bench_grouped_mm.summarize([result("grouped_mm", "cpu_4x", "float32", 0.7)], str(tmp_path)) is None
    assert not os.listdir(tmp_path)


def test_gemm_summary_judges_small_and_big_lists(tmp_path):
    small, big = bench_gemm.SMALL_GROUP_CASES, bench_gemm.BIG_GROUP_CASES
    results = [result("gemm", small[0], "bfloat16", 12.0, {"ours, unsorted": 1.1}),
               result("gemm", small[1], "bfloat16", 9.0),
               result("gemm", big[0], "bfloat16", 1.02),
               result("gemm", "32x_ragged_random", "bfloat16", 0.5)]  # reported, not judged
    summary = bench_gemm.summarize(results, str(tmp_path))
    assert summary["min_small_groups_vs_loop"] == 9.0 and summary["min_big_groups_vs_loop"] == 1.02
    assert summary["vs_loop"]["32x_ragged_random"] == 0.5
    assert summary["variants"][f"{small[0]} bfloat16"] == {"ours, unsorted": 1.1}
    assert saved(tmp_path, "gemm_summary.json")["targets_met"] == {
        "min_small_groups_vs_loop": False, "min_big_groups_vs_loop": True}
    assert bench_gemm.summarize([result("gemm", "cpu_16x_32x64x64", "float32", 0.9)], str(tmp_path)) is None


def test_syr2k_summary_judges_each_target_on_its_cases(tmp_path):
    tiles = lambda gemm, triangle: {"GEMM scheduler, 128x128 tiles": gemm, "triangle, 128x128 tiles": triangle}  # noqa: E731
    results = [
        result("syr2k", "n4096_k4096", "float32", 3.0, {"cuBLAS syr2k": 1.2, **tiles(2.0, 1.0)}, headline="two mm"),
        result("syr2k", "n2048_k8192", "float64", 2.0, {"cuBLAS syr2k": 0.98}, headline="two mm"),
        # n1024: reported against the peers, not judged as large
        result("syr2k", "n1024_k1024", "float64", 1.0, {"cuBLAS syr2k": 0.5}, headline="two mm"),
        result("syr2k", "n4096_k4096", "bfloat16", 1.85, tiles(1.9, 1.0), headline="two mm"),
        result("syr2k", "n1024_k1024", "bfloat16", 0.9, tiles(0.95, 1.0), headline="two mm"),
        result("syr2k", "grouped_48_mixed", "float32", 4.0, {"loop of cuBLAS syr2k": 7.5, "same kernel, GEMM scheduler": 1.4},
               headline="loop of two mm"),
        result("syr2k", "grouped_48_mixed", "bfloat16", 13.0, {"same kernel, GEMM scheduler": 1.3}, headline="loop of two mm"),
        # fp64: the forced DMMA kernel's triangle against its own GEMM walk (ours may be cuBLAS's)
        result("syr2k", "grouped_48_mixed", "float64", 1.5, {"loop of cuBLAS syr2k": 5.5, "ours, DMMA kernel forced": 0.5,
                                                             "DMMA kernel, GEMM scheduler": 0.9}, headline="loop of two mm"),
    ]
    summary = bench_syr2k.summarize(results, str(tmp_path))
    assert summary["large_vs_cublas_syr2k"] == {"n4096_k4096 float32": 1.2, "n2048_k8192 float64": 0.98}
    assert summary["large_bf16_vs_two_mm"] == {"n4096_k4096 bfloat16": 1.85}
    assert summary["grouped_vs_loop"] == {"grouped_48_mixed float32": 7.5, "grouped_48_mixed bfloat16": 13.0,
                                          "grouped_48_mixed float64": 5.5}
    assert summary["triangle_vs_gemm_scheduler"] == pytest.approx({
        "n4096_k4096 float32 128x128": 2.0, "n4096_k4096 bfloat16 128x128": 1.9, "n1024_k1024 bfloat16 128x128": 0.95,
        "grouped_48_mixed float32": 1.4, "grouped_48_mixed bfloat16": 1.3, "grouped_48_mixed float64 DMMA": 1.8})
    assert saved(tmp_path, "syr2k_summary.json")["targets_met"] == {
        "min_large_fp32_fp64_vs_cublas_syr2k": False, "min_large_bf16_vs_two_mm": True,
        "min_grouped_vs_loop_of_cublas": True, "min_triangle_vs_gemm_scheduler": False}
    # a CPU run has no cuBLAS peer: no summary
    assert bench_syr2k.summarize([result("syr2k", "n256_k64", "float32", 0.2, headline="two mm")], str(tmp_path)) is None
