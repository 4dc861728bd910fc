"""Two saved benchmark runs (`run.py --out DIR` writes DIR/results.json) side by side, case by case:
our time in each, their ratio, and each run's ratio against its headline peer. For A/B runs of a
switch (e.g. TORCH_GROUPED_CLUSTER=1 or TORCH_GROUPED_TMA_STORE=1 against the default), where the
peer's own run-to-run spread shows how much of the difference is noise.

    python benchmarks/compare_runs.py BASE/results.json NEW/results.json [--op grouped_mm]
"""
import argparse
import json

from common import geomean


def load(path):
    with open(path) as f:
        return {(r["op"], r["case"], r["dtype"]): r for r in json.load(f)["results"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--op", help="only this op")
    args = parser.parse_args()
    base, new = load(args.base), load(args.new)
    keys = [k for k in base if k in new and (args.op is None or k[0] == args.op)]
    print(f"{'op':14s} {'case':44s} {'dtype':9s} {'base ms':>9s} {'new ms':>9s} {'speedup':>8s} "
          f"{'base vs peer':>12s} {'new vs peer':>11s} {'peer drift':>10s}")
    speedups = {}
    for key in keys:
        b, n = base[key], new[key]
        peer = b["headline_peer"]
        drift = n["peers_ms"].get(peer, float("nan")) / b["peers_ms"].get(peer, float("nan"))
        speedup = b["ours_ms"] / n["ours_ms"]
        speedups.setdefault(key[0], []).append(speedup)
        print(f"{key[0]:14s} {key[1][:44]:44s} {key[2]:9s} {b['ours_ms']:9.4f} {n['ours_ms']:9.4f} {speedup:7.3f}x "
              f"{b['ratio']:11.3f}x {n['ratio']:10.3f}x {drift:9.3f}x")
    for op, values in speedups.items():
        print(f"{op}: new run {geomean(values):.3f}x the base geomean over {len(values)} cases "
              f"(min {min(values):.3f}x, max {max(values):.3f}x)")


if __name__ == "__main__":
    main()
