"""The SASS lines where a kernel's warps wait most, from Nsight Compute's source page exported as CSV
(`ncu --import R.ncu-rep --page source --csv --print-source sass > R.csv`, the report taken with
--section SourceCounters): the top lines by warp-stall samples with their main stall reasons, and
the samples summed over address windows, so a call brings back a few KB instead of the whole page.
    python3 tools/ncu_source_top.py R.csv [--top 40] [--window 256]"""
import argparse
import csv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--window", type=int, default=512, help="bytes of code per window in the summary")
    args = ap.parse_args()
    with open(args.csv) as f:
        rows = list(csv.reader(f))
    head = next(i for i, r in enumerate(rows) if r[:2] == ["Address", "Source"])
    names, lines = rows[head], [r for r in rows[head + 1:] if len(r) == len(rows[head])]
    col = {n: i for i, n in enumerate(names)}
    stalls = [n for n in names if n.startswith("stall_")]
    num = lambda r, n: float(r[col[n]] or 0)
    total = sum(num(r, "Warp Stall Sampling (All Samples)") for r in lines)
    print(f"{len(lines)} SASS lines, {total:.0f} samples")
    top = sorted(lines, key=lambda r: -num(r, "Warp Stall Sampling (All Samples)"))[: args.top]
    for r in top:
        s = num(r, "Warp Stall Sampling (All Samples)")
        why = sorted(((num(r, n), n[6:]) for n in stalls), reverse=True)[:3]
        print(f"{r[0]:>8s} {100 * s / total:5.1f}%  {' '.join(f'{w}:{v:.0f}' for v, w in why if v > 0):40s} {r[1][:70]}")
    print(f"\nsamples per {args.window}-byte window of code (>= 1%):")
    windows = {}
    for r in lines:
        w = int(r[0], 16) // args.window
        windows.setdefault(w, [0.0, r[1]])[0] += num(r, "Warp Stall Sampling (All Samples)")
    for w, (s, first) in sorted(windows.items()):
        if s >= 0.01 * total:
            print(f"  {w * args.window:#8x} {100 * s / total:5.1f}%  first: {first[:60]}")


if __name__ == "__main__":
    main()
