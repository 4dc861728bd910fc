"""Fits the Stream-K model's constants for this GPU (csrc/sched/streamk_model.h):

    time = a + b·[peers > 1] + c·iters_per_cta + d·(reads − 1) + e·[Stream-K cut] + f·extra_partial_mb   (µs)

(reads: the partials the fixup's slowest path reads one after another, FixupTree::serial_reads;
sweeps saved before the two-level fixup hold peers − 1 there, and times of the flat fixup.)

to the measured times of every explicit configuration of streamk_sweep.py, and shows, per shape,
what `auto` would choose with the fitted constants against the best measured configuration.

    python benchmarks/calibrate_streamk.py [--sweep FILE.json | --out FILE.json [--rep MS]]
                                           [--write-header [--header PATH]]

--sweep reads a saved sweep (streamk_sweep.py --out) instead of measuring again. --write-header
rewrites this GPU's entry of torch_grouped/csrc/sched/streamk_calibration.h, keeping the other
GPUs' entries (rebuild to use it). On a CPU it fits tiny shapes, to check the script itself; it
then writes a header only to an explicit --header path.
"""
import argparse
import datetime
import itertools
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import streamk_sweep  # noqa: E402
from common import make_device  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "torch_grouped/csrc/sched/streamk_calibration.h")
TERMS = ("a", "b", "c", "d", "e", "f")


def nnls(rows, targets):
    """Least squares with non-negative coefficients. With six unknowns every subset of free
    coefficients can be tried (64 small solves): exact, and no scipy needed."""
    x = torch.tensor(rows, dtype=torch.float64)
    y = torch.tensor(targets, dtype=torch.float64).unsqueeze(1)
    best, best_residual = [0.0] * x.shape[1], float(y.square().sum())
    for size in range(1, x.shape[1] + 1):
        for free in itertools.combinations(range(x.shape[1]), size):
            coef = torch.linalg.lstsq(x[:, list(free)], y, driver="gelsd").solution.squeeze(1)
            if (coef < 0).any():
                continue
            residual = float((x[:, list(free)] @ coef.unsqueeze(1) - y).square().sum())
            if residual < best_residual:
                best, best_residual = [0.0] * x.shape[1], residual
                for i, c in zip(free, coef.tolist()):
                    best[i] = c
    return best


def predict(coef, f):
    return sum(c * x for c, x in zip(coef, f))


def fit(points, weighting):
    """'absolute': minimise squared µs (large shapes dominate); 'relative': each point divided
    by its measured time, so a 10 µs shape counts as much as a 1 ms one."""
    scale = [1.0 / p["us"] if weighting == "relative" else 1.0 for p in points]
    return nnls([[v * s for v in p["features"]] for p, s in zip(points, scale)],
                [p["us"] * s for p, s in zip(points, scale)])


def picks(coef, shapes):
    """Per shape: (best measured, the model's pick, auto as measured) records. The best is over
    every grid swept; the model picks only among the configurations `auto` weighs, as the C++ does."""
    out = []
    for shape, rows in shapes.items():
        good, choosable = streamk_sweep.candidates(rows), streamk_sweep.candidates(rows, auto_only=True)
        if choosable:
            auto = next((r for r in rows if r["label"] == "auto"), None)
            out.append((shape, min(good, key=lambda r: r["us"]),
                        min(choosable, key=lambda r: predict(coef, r["features"])), auto))
    return out


def pick_loss(coef, shapes):
    """Geomean of (time of the model's pick / best time): what a calibration is for."""
    return streamk_sweep.geomean(chosen["us"] / best["us"] for _, best, chosen, _ in picks(coef, shapes))


def print_points(coef, points):
    print(f"\n{'shape':<18}{'config':<9}{'reads':>6}{'iters':>7}{'measured':>10}{'model':>9}{'rel.err':>9}")
    errors = []
    for p in points:
        model = predict(coef, p["features"])
        errors.append(abs(model - p["us"]) / p["us"])
        print(f"{'x'.join(map(str, p['shape'])):<18}{p['label']:<9}{int(p['features'][3]) + 1:>6}"
              f"{int(p['features'][2]):>7}{p['us']:>10.1f}{model:>9.1f}{errors[-1]:>9.2f}")
    errors.sort()
    print(f"relative error over {len(errors)} points: median {errors[len(errors) // 2]:.2f}, "
          f"90th percentile {errors[int(0.9 * (len(errors) - 1))]:.2f}, max {errors[-1]:.2f}")


def print_picks(coef, shapes):
    print(f"\n{'shape':<18}{'best':<9}{'µs':>8}  {'model':<9}{'µs':>8}{'pick/best':>10}  "
          f"{'auto now':>9}{'auto/best':>10}")
    for shape, best, chosen, auto in picks(coef, shapes):
        auto_us = auto["us"] if auto else math.nan
        print(f"{'x'.join(map(str, shape)):<18}{best['label']:<9}{best['us']:>8.1f}  {chosen['label']:<9}"
              f"{chosen['us']:>8.1f}{chosen['us'] / best['us']:>10.2f}  {auto_us:>9.1f}{auto_us / best['us']:>10.2f}")
    print("pick/best: the fitted model's choice; auto now: the op as built (the header it was compiled with)")


def write_header(coef, name, path, command):
    """This GPU's entry replaced (or added), the other GPUs' entries kept."""
    entry = re.compile(r'\{"([^"]*)",\s*StreamKModel\{([^}]*)\}\}')
    entries = {}
    if os.path.exists(path):
        with open(path) as f:
            entries = {m.group(1): m.group(2) for m in entry.finditer(f.read())}
    entries[name] = ", ".join(f"{c:.4g}" for c in coef)
    lines = "\n".join(f'    {{"{n}", StreamKModel{{{v}}}}},' for n, v in entries.items())
    text = f'''// Fitted constants of the Stream-K model per GPU model (microseconds; c per MAC iteration of
// one CTA). GENERATED by `{command}`
// on {name}, {datetime.date.today().isoformat()}; rebuild to use it. GPUs not listed use StreamKModel's defaults.
#pragma once
#include "streamk_model.h"

namespace torch_grouped::sched {{

struct StreamKCalibration {{
  const char* device_name;  // as torch.cuda.get_device_name() reports it
  StreamKModel model;
}};

inline constexpr StreamKCalibration kStreamKCalibrations[] = {{
{lines}
}};

}}  // namespace torch_grouped::sched
'''
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="cuda or cpu, when measuring (default: cuda when available)")
    parser.add_argument("--sweep", default=None, help="a saved sweep (streamk_sweep.py --out) instead of measuring")
    parser.add_argument("--out", default=None, help="when measuring: save the sweep too (a later --sweep reuses it)")
    parser.add_argument("--rep", type=int, default=100, help="when measuring: ms of timed calls per configuration")
    parser.add_argument("--write-header", action="store_true")
    parser.add_argument("--header", default=None, help=f"where to write (default {os.path.relpath(HEADER, ROOT)})")
    args = parser.parse_args(argv)
    if args.sweep:
        data = streamk_sweep.load(args.sweep)
        print(f"sweep of {args.sweep}: {data['device']}, {len(data['records'])} records")
    else:
        torch.manual_seed(0)
        data = streamk_sweep.run(make_device(args.device), out=args.out, rep_ms=args.rep)
    shapes = streamk_sweep.by_shape(data["records"])
    points = [p for rows in shapes.values() for p in streamk_sweep.candidates(rows)]
    if len(points) < len(TERMS):
        print(f"only {len(points)} usable measurements: nothing to fit")
        return 1
    device = "cuda" if data["device_kind"] == "cuda" else "cpu"
    disagree = [shape for shape in shapes if not streamk_sweep.features_agree(*shape, device, data["sms"])]
    print(f"features check: the default model's pick equals the op's auto plan on "
          f"{len(shapes) - len(disagree)} of {len(shapes)} shapes" + (f" (NOT on {disagree})" if disagree else ""))
    # Two weightings; keep the one whose picks lose least against the best measured configuration.
    fits = {w: fit(points, w) for w in ("absolute", "relative")}
    for w, coef in fits.items():
        print(f"{w:>8} fit: " + " ".join(f"{t}={c:.4g}" for t, c in zip(TERMS, coef))
              + f" (µs); picks lose {pick_loss(coef, shapes):.3f}x geomean")
    weighting = min(fits, key=lambda w: pick_loss(fits[w], shapes))
    coef = fits[weighting]
    print(f"kept the {weighting} fit")
    print_points(coef, points)
    print_picks(coef, shapes)
    print(f"model's picks vs the best measured: {pick_loss(coef, shapes):.3f}x geomean (1.000: always the best)")
    if args.write_header:
        if data["device_kind"] != "cuda" and not args.header:
            print("not writing the header from a CPU sweep (it would replace a GPU's entry); pass --header PATH")
            return 1
        command = "python benchmarks/calibrate_streamk.py " + " ".join(argv if argv is not None else sys.argv[1:])
        write_header(coef, data["device"], args.header or HEADER, command.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
