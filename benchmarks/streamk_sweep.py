"""Every decomposition of streamk_mm on a set of shapes, next to torch.mm and `auto`: the table
the Stream-K model is judged and fitted by (calibrate_streamk.py reads its JSON).

    python benchmarks/streamk_sweep.py [--device cuda|cpu] [--shapes 1024x1024x16384,...] [--out FILE.json]

Under TORCH_GROUPED_STREAMK_TILE=128x128 it sweeps the narrow tile's plans (the JSON says which);
under TORCH_GROUPED_ROW_COPIES=1 as well, on shapes with an operand TMA cannot address but whose
rows are 4-byte aligned, the row-copy kernel's plans (calibrate_streamk.py --rows fits its model).

Per shape and configuration: the median time (µs, common.time_ms) and the plan's model features
(from the private op _schedule_streamk, the plan the op runs). Each configuration's result is
checked against torch.mm once; a wrong or failing one is marked and left out of "best". On a CPU
it runs tiny shapes in seconds, to check the script itself.
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from tqdm import tqdm  # noqa: E402

import torch_grouped as tg  # noqa: E402
from common import geomean, make_device, on_gpu, rel_error, time_ms  # noqa: E402

# Anchors of ANCHORS.md plus a few between them: small/large K, few/many tiles, strong scaling.
GPU_SHAPES = [(384, 384, 128), (1664, 1664, 4096), (2304, 2304, 2048), (128, 128, 65536),
              (256, 256, 131072), (512, 1024, 32768), (1024, 1024, 16384), (4096, 4096, 4096),
              (16384, 16384, 256), (6144, 6144, 1024), (1408, 1408, 8192), (768, 3072, 12288),
              # Regimes the anchors miss: one ragged wave (165 tiles), 2.2 waves (288 tiles), 128
              # tiles on 132 SMs with a long K, a thin strong-scaling output, many waves, and an
              # unaligned corpus-like shape (pitched copies in front of the kernel).
              (1920, 2816, 4096), (3072, 3072, 2048), (2048, 2048, 8192), (256, 4096, 8192),
              (8192, 8192, 1024), (1000, 3000, 5000)]
CPU_SHAPES = [(128, 128, 512), (200, 96, 1000), (256, 320, 64)]
CPU_GRID = 8  # kCpuGrid of csrc/cpu/register_cpu.cpp: the CPU op's default grid
CPU_TOL, GPU_TOL = 1e-4, 2e-2  # fp32 on the CPU, bf16 with fp32 accumulation on the GPU


def fill_splits(sms, tiles):
    """sched::default_splits: the split count that gives every CTA work, 2..16."""
    return min(16, max(2, sms // max(tiles, 1)))


def configs(sms, tiles=None, walkers=None):
    """(label, decomposition, splits, grid): exactly the candidates `auto` weighs, in the order
    choose_streamk_plan (csrc/sched/streamk_model.h) tries them, so that a first-minimum pick in
    Python breaks ties as the C++ does and the fit sees every choice auto can make. `tiles`: the
    tiles of the shape's plan, which add the grid-filling split count ("splitfill") where that is
    no power of two (None: the shape-independent candidates only); the count fills `walkers`
    (the plan's walkers on the whole grid: the resident clusters where the call runs in clusters;
    default `sms`)."""
    full = [("dp", "data_parallel", 0, sms), (f"sk{sms}", "stream_k", 0, sms),
            ("dp1tsk", "dp_one_tile_sk", 0, sms), ("2tskdp", "two_tile_sk_dp", 0, sms)]
    part, g = [], sms // 2
    while g >= 8 and g >= sms // 4:
        part.append((f"sk{g}", "stream_k", 0, g))
        g //= 2
    splits = [(f"split{s}", "split_k", s, sms) for s in (2, 4, 8, 16)]
    fill = fill_splits(walkers or sms, tiles) if tiles is not None else 2
    if fill & (fill - 1):
        splits.append(("splitfill", "split_k", fill, sms))
    return full + part + splits


def extra_configs(sms):
    """Grids `auto` does not weigh (stream_k on 3/4 of the SMs), swept so that the best grid
    found by sweeping can be set against the model's choice; they enter the fit and "best",
    never the model's pick."""
    return [(f"sk{3 * sms // 4}", "stream_k", 0, 3 * sms // 4)]


def walk(a, b, grid=0):
    """(the plan's tile rows, its walkers) of streamk_mm(a, b, grid=grid): 256 and the resident
    clusters where the call runs in 2 x 1 clusters, else 128 (the CPU path's 64) and the grid."""
    return tuple(torch.ops.grouped._streamk_walk(a, b, grid))


def tile(a, b, grid=0):
    """(tile_m, tile_n, tile_k) of the kernel streamk_mm(a, b, grid=grid) runs: on the GPU `auto`'s
    choice of width per shape (or TORCH_GROUPED_STREAMK_TILE's), on the CPU the CPU path's tile."""
    return tuple(torch.ops.grouped._streamk_tile(a, b, grid))


def fixed_rule_tile(gpu, n):
    """The tile of the rule before session 12: 128 x 256 unless N <= 128 on the GPU, the CPU path's
    64 x 64 (sweeps saved without a tile ran it; the benchmark counts strong-scaling shapes by it)."""
    return (128, 128 if n <= 128 else 256, 64) if gpu else (64, 64, 32)


def saved_tile(data, m, n, k):
    """The tile of a record saved without one: the fixed rule, or the tile TORCH_GROUPED_STREAMK_TILE
    forced (the sweep's "streamk_tile")."""
    gpu = data["device_kind"] == "cuda"
    forced = {"128x128": (128, 128), "128x256": (128, 256), "192x128": (192, 128)}.get(data.get("streamk_tile", "")) if gpu else None
    return (*forced, 64) if forced else fixed_rule_tile(gpu, n)


def features(m, n, k, tile_mnk, decomposition, splits, grid, walk=None):
    """[1, peers > 1, iters_per_cta, reads - 1, a Stream-K tile cut, extra partial MB] of the plan
    the op runs on tile `tile_mnk` (predicted_time's terms; reads: the partials the fixup's slowest
    path reads; iters_per_cta as the model counts them; the fp32 partial tiles stored beyond one
    per cut tile), read from the plan's dump rather than re-derived, so the fit cannot drift from
    the C++. `walk`: (the plan's tile rows, its walkers) as _streamk_walk reports them for `grid`:
    in 2 x 1 clusters the plan deals 256-row pair tiles to the resident clusters (None: 128-row
    tiles over `grid` CTAs, as every call ran before clusters; sweeps saved without it)."""
    tm, tn, tk = tile_mnk
    if walk is not None:
        tm, grid = walk
    rows = torch.ops.grouped._schedule_streamk(m, n, k, tm, tn, tk, decomposition, max(splits, 1), grid).tolist()
    peers = max((row[6] + 1 for row in rows), default=1)  # (columns: csrc/cpu/schedule_dump.cpp)
    reads = max((row[13] for row in rows), default=1)
    iters, extra, cut = (rows[0][15], rows[0][16], rows[0][17]) if rows else (0, 0, 0)
    return [1.0, 1.0 if peers > 1 else 0.0, float(iters), float(max(reads, 1) - 1), float(cut),
            extra * tm * tn * 4 / 2**20]


# StreamKModel's defaults (csrc/sched/streamk_model.h): the model _schedule_streamk's `auto` uses.
DEFAULT_MODEL = (4.0, 3.0, 1.0, 1.5, 0.0, 0.0)


def features_agree(m, n, k, tile_mnk, sms, walk=None):
    """Whether a first-minimum pick over configs() with DEFAULT_MODEL on these features is the
    plan the C++ `auto` dumps for this tile: the check that features() computes predicted_time's
    terms. `walk`: the plan's (tile rows, walkers) on the whole grid, as features() takes it (the
    pick then runs over the plans of that walk, as `auto` does in clusters)."""
    tm, tn, tk = tile_mnk
    plan_tm, walkers = walk if walk is not None else (tm, sms)
    cfgs = configs(walkers, -(-m // plan_tm) * -(-n // tn))
    cost = lambda f: sum(c * x for c, x in zip(DEFAULT_MODEL, f))  # noqa: E731
    _, d, s, g = min(cfgs, key=lambda c: cost(features(m, n, k, (plan_tm, tn, tk), c[1], c[2], c[3])))
    auto = torch.ops.grouped._schedule_streamk(m, n, k, plan_tm, tn, tk, "auto", 1, walkers)
    mine = torch.ops.grouped._schedule_streamk(m, n, k, plan_tm, tn, tk, d, max(s, 1), g)
    return auto.shape == mine.shape and torch.equal(auto, mine)


def device_sms(device):
    return torch.cuda.get_device_properties(device).multi_processor_count if on_gpu(device) else CPU_GRID


def _measure(fn, ref, device, tol, rep_ms):
    """(µs, relative error, error text): NaN time for a result that fails or is wrong, so that a
    broken configuration can never be the "best"."""
    try:
        err = rel_error(fn(), ref)
        if not err <= tol:
            return math.nan, err, f"wrong (rel. error {err:.2g})"
        return 1e3 * time_ms(fn, device, rep_ms), err, ""
    except Exception as e:  # noqa: BLE001 - one bad configuration must not end the sweep
        return math.nan, math.nan, f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"


def sweep(shapes, device, records, rep_ms=100):
    """Appends one record per (shape, configuration), plus "mm" (torch.mm) and "auto" per shape
    (no features), to `records` as it goes: what was measured survives a crash."""
    gpu = on_gpu(device)
    sms, dtype, tol = device_sms(device), (torch.bfloat16 if gpu else torch.float32), (GPU_TOL if gpu else CPU_TOL)
    # The bar only on a terminal: in a captured log its redraws would crowd out the table.
    for m, n, k in tqdm(shapes, desc="shapes", file=sys.stdout, dynamic_ncols=True, disable=not sys.stdout.isatty()):
        a = torch.randn(m, k, device=device, dtype=dtype)
        b = torch.randn(k, n, device=device, dtype=dtype)
        ref = torch.mm(a, b)
        runs = [("mm", None, 0, 0, lambda: torch.mm(a, b)),
                ("auto", "auto", 0, 0, lambda: tg.streamk_mm(a, b))]
        tm, tn, _ = tile(a, b)
        plan_tm, walkers = walk(a, b)
        shape_configs = configs(sms, -(-m // plan_tm) * -(-n // tn), walkers)
        for label, d, s, g in shape_configs + extra_configs(sms):
            runs.append((label, d, s, g, lambda d=d, s=s, g=g: tg.streamk_mm(a, b, decomposition=d, splits=s, grid=g)))
        auto_labels = {c[0] for c in shape_configs}
        for label, d, s, g, fn in runs:
            us, err, problem = _measure(fn, ref, device, tol, rep_ms)
            tile_mnk = tile(a, b, g) if d is not None else None
            walk_g = walk(a, b, g) if d is not None else None
            feats = features(m, n, k, tile_mnk, d, s, g, walk_g) if d not in (None, "auto") else None
            records.append({"shape": [m, n, k], "label": label, "decomposition": d, "splits": s, "grid": g,
                            "us": us, "rel_error": err, "problem": problem, "features": feats,
                            "auto_candidate": label in auto_labels, "tile": tile_mnk, "walk": walk_g})
        del a, b, ref, runs
        if gpu:
            torch.cuda.empty_cache()  # split_k 16 on a large output holds a large workspace


def by_shape(records):
    shapes = {}
    for r in records:
        shapes.setdefault(tuple(r["shape"]), []).append(r)
    return shapes


def candidates(rows, auto_only=False):
    """The explicit configurations that ran correctly (not torch.mm, not auto); with auto_only,
    only those `auto` can choose (sweeps saved before extra_configs have every record so)."""
    return [r for r in rows if r["features"] is not None and not math.isnan(r["us"])
            and (r.get("auto_candidate", True) or not auto_only)]


def print_table(records):
    labels = list(dict.fromkeys(r["label"] for r in records))
    width = max(8, max(len(lb) for lb in labels) + 1)
    print("µs per call (median); '!' = failed or wrong (listed below). mm = torch.mm; dp = data_parallel;\n"
          "splitS = split_k with S slices (splitfill: the count that fills the grid, where it is no power\n"
          "of two; '-' elsewhere); skG = stream_k on G CTAs; dp1tsk = dp_one_tile_sk; 2tskdp =\n"
          "two_tile_sk_dp (all others on every SM; the last skG is a grid auto never weighs). mm/best =\n"
          "torch.mm time / best config's time (> 1: our best beats torch.mm); auto/best = auto's time /\n"
          "best config's time (1.00: auto picked the best)")
    header = f"{'shape':<18}" + "".join(f"{lb:>{width}}" for lb in labels) + f"  {'best':<10}{'mm/best':>8}{'auto/best':>10}"
    print(header)
    print("-" * len(header))
    problems, mm_ratios, auto_ratios = [], [], []
    for shape, rows in by_shape(records).items():
        cells = {r["label"]: r for r in rows}
        text = "x".join(map(str, shape))
        line = f"{text:<18}"
        for lb in labels:
            r = cells.get(lb)
            mark = "-" if r is None else ("!" if math.isnan(r["us"]) else None)  # (not run for this shape / failed)
            line += f"{mark:>{width}}" if mark else f"{r['us']:>{width}.1f}"
            if r is not None and r["problem"]:
                problems.append(f"{text} {lb}: {r['problem']}")
        good = candidates(rows)
        if good:
            best = min(good, key=lambda r: r["us"])
            mm, auto = cells["mm"]["us"], cells["auto"]["us"]
            mm_ratios.append(mm / best["us"])
            auto_ratios.append(auto / best["us"])
            line += f"  {best['label']:<10}{mm_ratios[-1]:>8.2f}{auto_ratios[-1]:>10.2f}"
        print(line)
    for p in problems:
        print("  ! " + p)
    ok = [x for x in mm_ratios if not math.isnan(x)]
    oka = [x for x in auto_ratios if not math.isnan(x)]
    if ok and oka:
        print(f"geomean mm/best {geomean(ok):.2f}x, geomean auto/best {geomean(oka):.2f}x "
              f"(worst {max(oka):.2f}x) over {len(ok)} shapes")


def parse_shapes(text):
    return [tuple(int(v) for v in s.split("x")) for s in text.split(",") if s]


def load(path):
    """A saved sweep. Records saved without a tile get the one they ran (saved_tile); records
    saved before the e and f terms (four features) get them from the plan's dump, which is the
    same plan as when they were measured (their other features are kept as saved: older sweeps
    counted the fixup's reads differently)."""
    with open(path) as f:
        data = json.load(f)
    for r in data["records"]:
        if r["decomposition"] is not None and not r.get("tile"):
            r["tile"] = list(saved_tile(data, *r["shape"]))
        if r["features"] is not None and len(r["features"]) == 4:
            m, n, k = r["shape"]
            r["features"] += features(m, n, k, r["tile"], r["decomposition"], r["splits"], r["grid"])[4:]
    return data


def run(device, shapes=None, out=None, rep_ms=100):
    """Sweeps, prints the table and the time it took, saves the JSON when asked; returns the data."""
    gpu = on_gpu(device)
    shapes = shapes or (GPU_SHAPES if gpu else CPU_SHAPES)
    name, sms = (torch.cuda.get_device_name() if gpu else "CPU"), device_sms(device)
    print(f"streamk_mm sweep on {name} ({sms} SMs): {len(shapes)} shapes x "
          f"{len(configs(sms)) + len(extra_configs(sms)) + 2} configurations")
    start, records, crash = time.perf_counter(), [], None
    try:
        sweep(shapes, device, records, rep_ms)
    except Exception as e:  # noqa: BLE001 - e.g. a sticky CUDA error: keep the shapes done so far
        crash = e
        print(f"SWEEP STOPPED at {records[-1]['shape'] if records else 'the first shape'}: {type(e).__name__}: {e}")
    took = time.perf_counter() - start
    print_table(records)
    # Meant to take 60-80 s on an H100 (18 shapes x 15 runs of ~0.25 s); say so when it does not.
    print(f"sweep took {took:.0f} s" + (" (over 90 s: --rep 50 about halves it)" if took > 90 else ""))
    data = {"device": name, "device_kind": "cuda" if gpu else "cpu", "sms": sms, "torch": torch.__version__,
            "seconds": took, "rep_ms": rep_ms, "records": records,
            "streamk_tile": os.environ.get("TORCH_GROUPED_STREAMK_TILE") or "default",
            # "1": every configuration ran the row-copy kernel where it can read the operands
            # (the sweep calibrate_streamk.py --rows fits that kernel's model on)
            "row_copies": os.environ.get("TORCH_GROUPED_ROW_COPIES") or "default"}
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            json.dump(data, f, indent=1)
        print(f"sweep saved to {out}")
    if crash is not None:
        raise crash
    return data


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda when available)")
    parser.add_argument("--shapes", default="", help="MxNxK,... instead of the built-in list")
    parser.add_argument("--out", default=None, help="save the measurements as JSON (for calibrate_streamk.py)")
    parser.add_argument("--rep", type=int, default=100, help="ms of timed calls per configuration (GPU)")
    parser.add_argument("--tile", choices=("128x256", "128x128", "192x128"), default=None,
                        help="sweep this tile's plans (TORCH_GROUPED_STREAMK_TILE); default: auto's tile per shape")
    args = parser.parse_args(argv)
    if args.tile:
        os.environ["TORCH_GROUPED_STREAMK_TILE"] = args.tile
    torch.manual_seed(0)
    run(make_device(args.device), parse_shapes(args.shapes), args.out, args.rep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
