"""The main job: every op against what a user would otherwise call, self-checked, side by side.

    python benchmarks/run.py [--device cuda|cpu] [--ops gemm,grouped_mm,...] [--out DIR]

On a GPU it runs the cases of ANCHORS.md (copied into the bench_*.py scripts); on a CPU, small
ones. Each case's result is checked against the peer's (bit-exact for the layout ops); times are
medians; ratio = peer time / our time (> 1: we are faster). Writes DIR/results.json and one PNG
per op, and exits non-zero if any check failed.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from tqdm import tqdm  # noqa: E402

import bench_gemm  # noqa: E402
import bench_grouped_mm  # noqa: E402
import bench_layout  # noqa: E402
import bench_streamk  # noqa: E402
import bench_syr2k  # noqa: E402
import torch_grouped  # noqa: E402, F401
from common import ceilings, make_device, run_case  # noqa: E402

SCRIPTS = {"grouped_mm": bench_grouped_mm, "gemm": bench_gemm, "syr2k": bench_syr2k,
           "streamk_mm": bench_streamk, "layout": bench_layout}


def print_table(results, limits):
    rates = ", ".join(f"{key[3:]} {rate / 1e12:.3g}" for key, rate in limits.items()
                      if key.startswith("mm_") and key != "mm_dtype")
    print(f"\ncopy ceiling {limits['copy'] / 1e9:.0f} GB/s; matmul ceilings (dense torch.mm) {rates} TFLOP/s, "
          "measured in this run: a matmul row's 'of limit' is against its dtype's")
    header = f"{'op':<17}{'case':<44}{'dtype':<9}{'ok':<4}{'ours ms':>10}{'peer ms':>10}{'ratio':>7}  {'rate':<15}{'of limit':>8}  peer"
    print(header)
    print("-" * len(header))
    for r in results:
        peer = r["headline_peer"]
        print(f"{r['op']:<17}{r['case'][:43]:<44}{r['dtype']:<9}{'yes' if r['ok'] else 'NO':<4}"
              f"{r['ours_ms']:>10.4f}{r['peers_ms'][peer]:>10.4f}{r['ratio']:>7.2f}  {r['rate_text']:<15}"
              f"{100 * r['fraction_of_limit']:>7.1f}%  {peer}")
    others = [(r, name) for r in results for name in r["peers_ms"] if name != r["headline_peer"]]
    if others:
        print("\nother peers, measured in the same run (ratio = their time / ours):")
        for r, name in others:
            print(f"  {r['op']:<15}{r['case'][:43]:<44}{r['dtype']:<9}{r['peers_ms'][name]:>10.4f} ms  "
                  f"{r['ratios'][name]:>6.2f}x  {name}")
    print()
    for op in dict.fromkeys(r["op"] for r in results):
        ratios = [r["ratio"] for r in results if r["op"] == op]
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"{op:<17} geomean ratio {geo:.2f}x over {len(ratios)} cases (min {min(ratios):.2f}x, max {max(ratios):.2f}x)")


def plot(results, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for op in dict.fromkeys(r["op"] for r in results):
        rows = [r for r in results if r["op"] == op]
        fig, ax = plt.subplots(figsize=(10, 0.35 * len(rows) + 1.5))
        ax.barh([f"{r['case']} {r['dtype']}" for r in rows], [r["ratio"] for r in rows])
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xlabel(f"speed-up over {rows[0]['headline_peer']} (peer time / our time)")
        ax.set_title(f"torch_grouped.{op}")
        ax.invert_yaxis()
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"{op}.png"), dpi=100)
        plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda when available)")
    parser.add_argument("--ops", default=",".join(SCRIPTS), help="comma-separated subset of " + ",".join(SCRIPTS))
    parser.add_argument("--out", default="bench_out", help="folder for results.json and the plots")
    args = parser.parse_args(argv)
    device = make_device(args.device)
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    limits = ceilings(device)
    name = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    print(f"torch_grouped benchmark on {name} ({device}), torch {torch.__version__}")
    if device == "cuda":  # whose fitted Stream-K models streamk_mm plans with here
        p = torch.cuda.get_device_properties(device)
        source = torch.ops.grouped._calibration_source(name, p.major, p.minor, p.multi_processor_count)
        print(f"streamk_mm's Stream-K models: {'those calibrated on ' + source if source else 'the defaults (no GPU of this kind calibrated)'}")
    results, by_script = [], {}
    for op in args.ops.split(","):
        cases = list(SCRIPTS[op].cases(device))
        for case in tqdm(cases, desc=op, file=sys.stdout, dynamic_ncols=True):
            by_script.setdefault(op, []).append(run_case(case, device))
            if device == "cuda":
                torch.cuda.empty_cache()  # the next case's inputs may be large
        results += by_script.get(op, [])
    print_table(results, limits)
    for op in args.ops.split(","):  # per-script summaries (the Stream-K corpus, the layout targets)
        if hasattr(SCRIPTS[op], "summarize"):
            SCRIPTS[op].summarize(by_script.get(op, []), args.out)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"device": name, "torch": torch.__version__, "ceilings": limits, "results": results}, f, indent=1)
    plot(results, args.out)
    failed = [f"{r['op']} {r['case']} {r['dtype']}" for r in results if not r["ok"]]
    print(f"\nresults in {args.out}/results.json and {args.out}/*.png")
    if failed:
        print("CHECK FAILED: " + "; ".join(failed))
        return 1
    print(f"all {len(results)} results checked against their peers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
