"""Fits the Stream-K model's constants for this GPU (csrc/sched/streamk_model.h), per tile:

    time = a_t + b·[peers > 1] + c_t·iters_per_cta + d·(reads − 1) + e·[Stream-K cut] + f·extra_partial_mb   (µs)

(t: the tile, 128 x 256, 128 x 128 or 192 x 128 on the GPU: a CTA's fixed cost and an iteration's cost
differ per tile, the fixup's terms are shared; reads: the partials the fixup's slowest path reads
one after another, FixupTree::serial_reads; sweeps saved before the two-level fixup hold peers − 1
there, and times of the flat fixup.)

to the measured times of every explicit configuration of streamk_sweep.py, and shows, per shape,
what `auto` would choose with the fitted constants (tile and plan) against the best measured
configuration.

    python benchmarks/calibrate_streamk.py [--sweep FILE.json [FILE.json ...] | --out PREFIX [--rep MS]]
                                           [--rows FILE.json] [--unaligned FILE.json FILE.json] [--leave-one-out]
                                           [--write-header [--header PATH]]

--sweep reads saved sweeps (streamk_sweep.py --out; one per tile, --tile) instead of measuring
again; measuring on a GPU sweeps the three tiles (--out PREFIX saves PREFIX_128x256.json,
PREFIX_128x128.json and PREFIX_192x128.json). The 192 x 128 tile is optional: its model is fitted
jointly with the other two where its sweep is given (sweeps of all three tiles from one run, so
that the models compare the tiles as they ran side by side: a 192 x 128 model fitted alone on a
fresh sweep, beside the two tiles' models of session 12's sweeps, took the tall tile on 16384² x
256 and 384² x 128 at 1.14-1.3x the best; H100, session 44), and `auto` weighs that tile only on
GPUs whose entry has its model. --rows FILE.json fits a third model, alone (all six constants), on a sweep of
the row-copy kernel (`TORCH_GROUPED_ROW_COPIES=1 streamk_sweep.py --tile 128x128` over shapes whose
operands it reads: kernels/row_copy.cuh), which `auto` weighs the plans of that kernel with: an
iteration of it costs about 2.5 times one of the TMA kernel's (H100, session 26), so the TMA
tile's model took data-parallel plans where Stream-K was up to 1.3x faster. --unaligned fits the two
tiles' models again on sweeps (one per tile, `TORCH_GROUPED_ROW_COPIES=0`) of shapes the TMA kernel
cannot read and write in place (K or N not a multiple of 8: pitched copies, shifted output rows),
which `auto` weighs such shapes with: fitted on the anchors' aligned shapes, the models took the
128 x 128 tile on long-K unaligned shapes where 128 x 256 was up to 1.2x faster (858 x 4901 x
10339, 6839 x 249 x 24823, 1126 x 980 x 40163; H100, session 28). Take them from a draw of the
benchmark's corpus distribution with another seed (`bench_streamk.corpus(seed=...)`), not the
corpus the benchmark judges by. Each fit's picks are printed beside those of the constants the
shipped header holds for the sweep's GPU: write a refit only where it picks better. --write-header
rewrites this GPU's entry of torch_grouped/csrc/sched/streamk_calibration.h, keeping the other
GPUs' entries (rebuild to use it); it needs both tiles measured, and writes the rows model where
--rows gave one (else the entry keeps the default, sched::kDefaultRowsModel) and the unaligned ones
where --unaligned gave them (after the rows model: --rows too). On a CPU it fits
tiny shapes (the CPU path's one tile), to check the script itself; it then writes a header only
to an explicit --header path.
"""
import argparse
import datetime
import itertools
import math
import os
import re
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import streamk_sweep  # noqa: E402
from common import geomean, make_device, on_gpu  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "torch_grouped/csrc/sched/streamk_calibration.h")
TERMS = ("a", "b", "c", "d", "e", "f")
PER_TILE = (0, 2)  # a and c: one per tile; b, d, e, f shared
WIDE, NARROW = 256, 128  # the GPU's tile widths, as the header orders them
ROWS = "rows"  # the key of the row-copy kernel's model (128 x 128 tiles), after the two tiles'
WIDE_UNALIGNED, NARROW_UNALIGNED = "wide_unaligned", "narrow_unaligned"  # (--unaligned), after those
TALL = "tall"  # the 192 x 128 tile's model, after those
HEADER_ORDER = (WIDE, NARROW, ROWS, WIDE_UNALIGNED, NARROW_UNALIGNED, TALL)
TILES = (WIDE, NARROW, TALL)  # the joint fit's tiles, in the header's order


def tile_of(record):
    """A record's model key: the tile's width for the 128-row tiles (WIDE, NARROW), TALL for 192 x 128."""
    return TALL if record["tile"][0] == 192 else record["tile"][1]


def expand(features, tile_n, tiles):
    """A record's features as the joint fit's columns: a and c in their tile's columns, the
    shared terms once (columns: a per tile, b, c per tile, d, e, f)."""
    row = []
    for i, v in enumerate(features):
        row += [v if t == tile_n else 0.0 for t in tiles] if i in PER_TILE else [v]
    return row


def split(coef, tiles):
    """The joint fit's columns back to one model (a..f) per tile."""
    models, i = {t: [] for t in tiles}, 0
    for term in range(len(TERMS)):
        for t in tiles:
            models[t].append(coef[i + (tiles.index(t) if term in PER_TILE else 0)])
        i += len(tiles) if term in PER_TILE else 1
    return models


def nnls(rows, targets):
    """Least squares with non-negative coefficients. With at most ten unknowns (three tiles) every
    subset of free coefficients can be tried (1023 small solves): exact, and no scipy needed. Each
    subset is solved on the normal equations (a k x k system of the Gram matrix, formed once), its
    residual read off them (|y|² - coefᵀ Xᵀy at the subset's least-squares solution); the winning
    subset is solved again by gelsd, the SVD least squares, for the coefficients returned: the
    result of a gelsd solve per subset, in a fraction of the time (the leave-one-shape-out checks
    refit a few hundred times)."""
    x = torch.tensor(rows, dtype=torch.float64)
    y = torch.tensor(targets, dtype=torch.float64).unsqueeze(1)
    gram, moment, total = x.T @ x, x.T @ y, float(y.square().sum())
    best_free, best_residual = (), total
    for size in range(1, x.shape[1] + 1):
        for free in itertools.combinations(range(x.shape[1]), size):
            index = list(free)
            try:
                coef = torch.linalg.solve(gram[index][:, index], moment[index])
            except RuntimeError:  # a singular subset: gelsd's minimum-norm solution
                coef = torch.linalg.lstsq(x[:, index], y, driver="gelsd").solution
            if (coef < 0).any():
                continue
            residual = total - float((coef * moment[index]).sum())
            if residual < best_residual:
                best_free, best_residual = free, residual
    best = [0.0] * x.shape[1]
    if best_free:
        coef = torch.linalg.lstsq(x[:, list(best_free)], y, driver="gelsd").solution.squeeze(1)
        for i, c in zip(best_free, coef.tolist()):
            best[i] = max(c, 0.0)  # (a coefficient the normal equations put at +0 may come back -1e-17)
    return best


def predict(coef, f):
    return sum(c * x for c, x in zip(coef, f))


def predict_record(models, record):
    return predict(models[tile_of(record)], record["features"])


def fit(points, weighting, tiles):
    """One model per tile in `tiles`, fitted jointly. 'absolute': minimise squared µs (large
    shapes dominate); 'relative': each point divided by its measured time, so a 10 µs shape counts
    as much as a 1 ms one."""
    scale = [1.0 / p["us"] if weighting == "relative" else 1.0 for p in points]
    coef = nnls([[v * s for v in expand(p["features"], tile_of(p), tiles)] for p, s in zip(points, scale)],
                [p["us"] * s for p, s in zip(points, scale)])
    return split(coef, tiles)


def picks(models, shapes):
    """Per shape: (best measured, the model's pick, auto as measured) records. The best is over
    every grid and tile swept; the model picks only among the configurations `auto` weighs, over
    every tile it has a model for, as the C++ does (the tile whose best plan is predicted fastest,
    then that plan)."""
    out = []
    for shape, rows in shapes.items():
        good = streamk_sweep.candidates(rows)
        choosable = [r for r in streamk_sweep.candidates(rows, auto_only=True) if tile_of(r) in models]
        if choosable:
            auto = next((r for r in rows if r["label"] == "auto"), None)
            out.append((shape, min(good, key=lambda r: r["us"]),
                        min(choosable, key=lambda r: predict_record(models, r)), auto))
    return out


def pick_loss(models, shapes):
    """Geomean of (time of the model's pick / best time): what a calibration is for."""
    return geomean(chosen["us"] / best["us"] for _, best, chosen, _ in picks(models, shapes))


def print_features_check(points, sms):
    """Whether the features the records carry are predicted_time's terms of the plans that ran:
    per shape and tile (with its walk on the whole grid, where the sweep recorded one: in 2 x 1
    clusters the plans deal pair tiles to the resident clusters), a pick over them with the default
    model equals the op's `auto` under it."""
    checked = {(tuple(p["shape"]), tuple(p["tile"]), tuple(p["walk"]) if p.get("walk") else None)
               for p in points if p["grid"] == sms}
    disagree = [c for c in checked if not streamk_sweep.features_agree(*c[0], c[1], sms, c[2])]
    print(f"features check: the default model's pick equals the op's auto plan on "
          f"{len(checked) - len(disagree)} of {len(checked)} shapes and tiles" + (f" (NOT on {disagree})" if disagree else ""))
    return not disagree


def fit_both(points, tiles):
    """Both weightings' fits (main keeps the one whose picks lose least)."""
    return {w: fit(points, w, tiles) for w in ("absolute", "relative")}


def leave_one_out(shapes, tiles):
    """Geomean of (time of the pick / best time) per shape, each shape picked by a fit of the
    others (weighting chosen on the others too): how well the model carries to unseen shapes."""
    losses = []
    for held in shapes:
        others = {s: rows for s, rows in shapes.items() if s != held}
        points = [p for rows in others.values() for p in streamk_sweep.candidates(rows)]
        fits = fit_both(points, tiles)
        models = fits[min(fits, key=lambda w: pick_loss(fits[w], others))]
        losses += [chosen["us"] / best["us"] for _, best, chosen, _ in picks(models, {held: shapes[held]})]
    return geomean(losses)


def label(record):
    return f"{record['label']}/{tile_of(record)}"


def print_points(models, points):
    print(f"\n{'shape':<18}{'config/tile':<13}{'reads':>6}{'iters':>7}{'measured':>10}{'model':>9}{'rel.err':>9}")
    errors = []
    for p in points:
        model = predict_record(models, p)
        errors.append(abs(model - p["us"]) / p["us"])
        print(f"{'x'.join(map(str, p['shape'])):<18}{label(p):<13}{int(p['features'][3]) + 1:>6}"
              f"{int(p['features'][2]):>7}{p['us']:>10.1f}{model:>9.1f}{errors[-1]:>9.2f}")
    errors.sort()
    print(f"relative error over {len(errors)} points: median {errors[len(errors) // 2]:.2f}, "
          f"90th percentile {errors[int(0.9 * (len(errors) - 1))]:.2f}, max {errors[-1]:.2f}")


def print_picks(models, shapes):
    print(f"\n{'shape':<18}{'best':<13}{'µs':>8}  {'model':<13}{'µs':>8}{'pick/best':>10}  "
          f"{'auto then':>9}{'auto/best':>10}")
    for shape, best, chosen, auto in picks(models, shapes):
        auto_us = auto["us"] if auto else math.nan
        print(f"{'x'.join(map(str, shape)):<18}{label(best):<13}{best['us']:>8.1f}  {label(chosen):<13}"
              f"{chosen['us']:>8.1f}{chosen['us'] / best['us']:>10.2f}  {auto_us:>9.1f}{auto_us / best['us']:>10.2f}")
    print("pick/best: the fitted model's choice; auto then: the op as measured in the first sweep given "
          "(its build's header, its tile)")


def header_entries(text):
    """The GPU entries of a streamk_calibration.h's text: {device name: (each model's constants as
    written, in HEADER_ORDER)}."""
    entry = re.compile(r'\{"([^"]*)",((?:\s*StreamKModel\{[^}]*\},?)+)\s*\}')
    return {m.group(1): tuple(re.findall(r"StreamKModel\{([^}]*)\}", m.group(2))) for m in entry.finditer(text)}


def header_provenance(text):
    """{device name: the comment above its entry in a streamk_calibration.h's text (the date and
    the command, with the sweeps it names, that fitted it), its lines joined}."""
    entry = re.compile(r'((?:[ \t]*//[^\n]*\n)+)[ \t]*\{"([^"]*)",')
    return {m.group(2): " ".join(line.strip()[2:].strip() for line in m.group(1).splitlines())
            for m in entry.finditer(text)}


def shipped_models(name, path=HEADER):
    """The models of GPU `name` in the header at `path` (default: the one the build compiles), as
    {HEADER_ORDER key: constants} for the keys its entry has; {} where it has no entry."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        entry = header_entries(f.read()).get(name, ())
    return {key: [float(v) for v in text.split(",")] for key, text in zip(HEADER_ORDER, entry)}


def print_shipped(shipped, keys, shapes, fitted, what):
    """The shipped constants' picks on these shapes beside the fit's (`keys`: the header's keys of
    the models, in the tiles' order), so that a refit is written only where it picks better: a
    refit on fresh sweeps can pick no better than the constants it would replace (session 37)."""
    if all(key in shipped for key in keys):
        tiles = [NARROW] if len(keys) == 1 else [WIDE, NARROW]
        models = {t: shipped[key] for t, key in zip(tiles, keys)}
        print(f"{what}: the shipped header's picks vs the best measured: {pick_loss(models, shapes):.3f}x geomean "
              f"(this fit's: {pick_loss(fitted, shapes):.3f}x)")


def write_header(models, name, path, command):
    """This GPU's entry (its 128 x 256 and 128 x 128 models, the row-copy kernel's where `models`
    has one, and the two tiles' on unaligned shapes where it has those, which need the row-copy
    kernel's before them) replaced or added, the other GPUs' entries kept."""
    if (WIDE_UNALIGNED in models or NARROW_UNALIGNED in models) and ROWS not in models:
        raise SystemExit("the unaligned shapes' models follow the row-copy kernel's in the header: fit that too (--rows)")
    if TALL in models and not (WIDE_UNALIGNED in models and NARROW_UNALIGNED in models):
        raise SystemExit("the 192 x 128 tile's model follows the unaligned shapes' in the header: fit those too (--unaligned)")
    entries, provenance = {}, {}
    if os.path.exists(path):
        with open(path) as f:
            existing = f.read()
        entries, provenance = header_entries(existing), header_provenance(existing)
    entries[name] = tuple(", ".join(f"{c:.4g}" for c in models[t]) for t in HEADER_ORDER if t in models)
    provenance[name] = f"{name}, {datetime.date.today().isoformat()}: {command}"
    # (each entry under the comment naming what fitted it, wrapped between words: the sweeps' paths
    # stay whole for test_shipped_header_is_the_fit_of_the_saved_sweeps)
    comment = lambda n: "".join(f"    // {line}\n" for line in textwrap.wrap(  # noqa: E731
        provenance[n], 96, break_long_words=False, break_on_hyphens=False)) if n in provenance else ""
    lines = "\n".join(comment(n) + f'    {{"{n}", ' + ",\n     ".join(f"StreamKModel{{{m}}}" for m in ms) + "},"
                      for n, ms in entries.items())
    text = f'''// Fitted constants of the Stream-K model per GPU model and tile (microseconds; c per MAC iteration
// of one CTA). GENERATED by benchmarks/calibrate_streamk.py --write-header: each entry's comment gives
// the date and the command (with the sweeps of benchmarks/data) that fitted it; rebuild to use it.
// GPUs not listed take the entry of a listed GPU of their kind (calibration_source.h; list the
// calibrated GPU there), else StreamKModel's defaults.
#pragma once
#include <optional>

#include "streamk_model.h"

namespace torch_grouped::sched {{

struct StreamKCalibration {{
  const char* device_name;  // as torch.cuda.get_device_name() reports it
  StreamKModel wide;        // 128 x 256 tiles
  StreamKModel narrow;      // 128 x 128 tiles
  // 128 x 128 tiles with operands read by row copies (kernels/row_copy.cuh); an entry without
  // one of its own takes the default
  StreamKModel rows = kDefaultRowsModel;
  // The two tiles on shapes the TMA kernel cannot read and write in place (K or N not a multiple
  // of 8 elements: pitched copies of the operands in front, shifted staging of the output rows),
  // fitted on a draw of such shapes (calibrate_streamk.py --unaligned): there the wide tile wins
  // more often than on the aligned shapes the first two are fitted on. An entry without them uses
  // `wide` and `narrow`.
  std::optional<StreamKModel> wide_unaligned{{}}, narrow_unaligned{{}};
  // 192 x 128 tiles (three consumer warpgroups), fitted jointly with the first two on sweeps of
  // the three tiles from one run: `auto` weighs the tile only on GPUs whose entry has it (after
  // the unaligned models).
  std::optional<StreamKModel> tall{{}};
}};

inline constexpr StreamKCalibration kStreamKCalibrations[] = {{
{lines}
}};

}}  // namespace torch_grouped::sched
'''
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")


def measure(device, out, rep_ms):
    """Sweeps on `device`: on a GPU one sweep per tile (forced through TORCH_GROUPED_STREAMK_TILE),
    their records together."""
    if not on_gpu(device):
        return streamk_sweep.run(device, out=f"{out}.json" if out else None, rep_ms=rep_ms)
    data, before = None, os.environ.get("TORCH_GROUPED_STREAMK_TILE")
    try:
        for tile in ("128x256", "128x128", "192x128"):
            os.environ["TORCH_GROUPED_STREAMK_TILE"] = tile
            swept = streamk_sweep.run(device, out=f"{out}_{tile}.json" if out else None, rep_ms=rep_ms)
            data = swept if data is None else {**data, "records": data["records"] + swept["records"]}
    finally:  # the caller's setting back
        if before is None:
            del os.environ["TORCH_GROUPED_STREAMK_TILE"]
        else:
            os.environ["TORCH_GROUPED_STREAMK_TILE"] = before
    return data


def rows_fits(data):
    """A row-copy sweep's shapes, points, both weightings' fits, and the fit kept (the one whose
    picks lose least), as {NARROW: constants}."""
    shapes = streamk_sweep.by_shape(data["records"])
    points = [p for rows in shapes.values() for p in streamk_sweep.candidates(rows)]
    tiles = sorted({tile_of(p) for p in points})
    if tiles != [NARROW]:
        raise SystemExit(f"--rows: the row-copy kernel has 128 x {NARROW} tiles; the sweep has {tiles}")
    fits = fit_both(points, tiles)
    return shapes, points, fits, fits[min(fits, key=lambda w: pick_loss(fits[w], shapes))]


def fit_rows(path, leave_out, shipped=None):
    """The row-copy kernel's model: all six constants fitted on its own sweep (the weighting whose
    picks lose least), with its points and picks printed as for the tiles' (and the picks of
    `shipped`'s, the header's models, where it has one)."""
    data = streamk_sweep.load(path)
    print(f"\nrow-copy sweep {path}: {data['device']}, {len(data['records'])} records, "
          f"TORCH_GROUPED_ROW_COPIES={data.get('row_copies', '(not recorded)')}")
    if data.get("row_copies", "1") != "1":
        print("warning: this sweep was not taken with TORCH_GROUPED_ROW_COPIES=1")
    shapes, points, fits, models = rows_fits(data)
    for w, fitted in fits.items():
        print(f"{w:>8} fit of the row copies: " + " ".join(f"{n}={c:.4g}" for n, c in zip(TERMS, fitted[NARROW]))
              + f" (µs); picks lose {pick_loss(fitted, shapes):.3f}x geomean")
    if leave_out:
        print(f"leave-one-shape-out picks vs the best measured: {leave_one_out(shapes, [NARROW]):.3f}x geomean")
    print_points(models, points)
    print_picks(models, shapes)
    print(f"row copies: the model's picks vs the best measured: {pick_loss(models, shapes):.3f}x geomean")
    print_shipped(shipped or {}, [ROWS], shapes, models, "row copies")
    return models[NARROW]


def in_place(m, n, k):
    """Whether the TMA kernel reads the sweep's contiguous bf16 operands and writes the output where
    they lie (streamk_cuda.cpp's in_place_shape): rows of K and of N elements 16-byte aligned."""
    return k % 8 == 0 and n % 8 == 0


def unaligned_fits(loaded):
    """The unaligned shapes of the loaded sweeps, both weightings' fits, and the fit kept (the one
    whose picks lose least)."""
    shapes = streamk_sweep.by_shape([r for d in loaded for r in d["records"] if not in_place(*r["shape"])])
    points = [p for rows in shapes.values() for p in streamk_sweep.candidates(rows)]
    tiles = sorted({tile_of(p) for p in points}, reverse=True)
    if tiles != [WIDE, NARROW]:
        raise SystemExit(f"--unaligned: needs both tiles measured (128x256 and 128x128); the sweeps have {tiles}")
    fits = fit_both(points, tiles)
    return shapes, fits, fits[min(fits, key=lambda w: pick_loss(fits[w], shapes))]


def fit_unaligned(paths, leave_out, shipped=None):
    """The two tiles' models on shapes the TMA kernel cannot read and write in place: fitted as
    the main ones (jointly, the weighting whose picks lose least) on those shapes of the sweeps at
    `paths` (one per tile, taken with TORCH_GROUPED_ROW_COPIES=0: a 128 x 128 record that the
    row-copy kernel ran belongs to its own model), the shapes read in place left out; `shipped`:
    the header's models, whose picks are printed beside the fit's."""
    loaded = [streamk_sweep.load(path) for path in paths]
    for path, d in zip(paths, loaded):
        print(f"\nunaligned sweep {path}: {d['device']}, {len(d['records'])} records")
    shapes, fits, models = unaligned_fits(loaded)
    print_features_check([p for rows in shapes.values() for p in streamk_sweep.candidates(rows)], loaded[0]["sms"])
    tiles = [WIDE, NARROW]
    for w, fitted in fits.items():
        print(f"{w:>8} fit on {len(shapes)} unaligned shapes: " + "; ".join(
            f"tile {t}: " + " ".join(f"{n}={c:.4g}" for n, c in zip(TERMS, fitted[t])) for t in tiles)
              + f" (µs); picks lose {pick_loss(fitted, shapes):.3f}x geomean")
    if leave_out:
        print(f"leave-one-shape-out picks vs the best measured: {leave_one_out(shapes, tiles):.3f}x geomean")
    print_picks(models, shapes)
    print(f"unaligned shapes: the model's picks vs the best measured: {pick_loss(models, shapes):.3f}x geomean")
    print_shipped(shipped or {}, [WIDE_UNALIGNED, NARROW_UNALIGNED], shapes, models, "unaligned shapes")
    return {WIDE_UNALIGNED: models[WIDE], NARROW_UNALIGNED: models[NARROW]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="cuda or cpu, when measuring (default: cuda when available)")
    parser.add_argument("--sweep", nargs="+", default=None, help="saved sweeps (streamk_sweep.py --out) instead of measuring")
    parser.add_argument("--out", default=None, help="when measuring: save the sweeps too, as PREFIX_<tile>.json")
    parser.add_argument("--rep", type=int, default=100, help="when measuring: ms of timed calls per configuration")
    parser.add_argument("--rows", default=None,
                        help="a sweep of the row-copy kernel (TORCH_GROUPED_ROW_COPIES=1, --tile 128x128): fit its model too")
    parser.add_argument("--unaligned", nargs="+", default=None,
                        help="sweeps (one per tile, TORCH_GROUPED_ROW_COPIES=0) whose shapes the TMA kernel cannot read "
                             "and write in place (K or N not a multiple of 8): fit those shapes' models too")
    parser.add_argument("--leave-one-out", action="store_true",
                        help="also fit without each shape in turn and judge the pick on it (a fit per shape: slow)")
    parser.add_argument("--write-header", action="store_true")
    parser.add_argument("--header", default=None, help=f"where to write (default {os.path.relpath(HEADER, ROOT)})")
    args = parser.parse_args(argv)
    if args.sweep:
        loaded = [streamk_sweep.load(path) for path in args.sweep]
        data = {**loaded[0], "records": [r for d in loaded for r in d["records"]]}
        for path, d in zip(args.sweep, loaded):
            print(f"sweep of {path}: {d['device']}, {len(d['records'])} records")
    else:
        torch.manual_seed(0)
        data = measure(make_device(args.device), args.out, args.rep)
    shapes = streamk_sweep.by_shape(data["records"])
    points = [p for rows in shapes.values() for p in streamk_sweep.candidates(rows)]
    swept = {tile_of(p) for p in points}
    tiles = [t for t in TILES if t in swept] + sorted(swept - set(TILES))  # (the CPU's one tile: its width)
    if len(points) < len(TERMS) + len(tiles):
        print(f"only {len(points)} usable measurements: nothing to fit")
        return 1
    print_features_check(points, data["sms"])
    fits = fit_both(points, tiles)
    for w, models in fits.items():
        print(f"{w:>8} fit: " + "; ".join(f"tile {t}: " + " ".join(f"{n}={c:.4g}" for n, c in zip(TERMS, models[t]))
                                           for t in tiles) + f" (µs); picks lose {pick_loss(models, shapes):.3f}x geomean")
    weighting = min(fits, key=lambda w: pick_loss(fits[w], shapes))
    models = fits[weighting]
    print(f"kept the {weighting} fit")
    if args.leave_one_out:
        print(f"leave-one-shape-out picks vs the best measured: {leave_one_out(shapes, tiles):.3f}x geomean")
    print_points(models, points)
    print_picks(models, shapes)
    print(f"model's picks vs the best measured: {pick_loss(models, shapes):.3f}x geomean (1.000: always the best)")
    if TALL in tiles:
        print(f"the same fit without the 192 x 128 tile (auto on a GPU without its model): "
              f"{pick_loss({t: models[t] for t in tiles if t != TALL}, shapes):.3f}x")
    shipped = shipped_models(data["device"])
    print_shipped(shipped, [WIDE, NARROW], shapes, models, "the two tiles")
    if args.rows:
        models[ROWS] = fit_rows(args.rows, args.leave_one_out, shipped)
    if args.unaligned:
        models.update(fit_unaligned(args.unaligned, args.leave_one_out, shipped))
    if args.write_header:
        if data["device_kind"] != "cuda" and not args.header:
            print("not writing the header from a CPU sweep (it would replace a GPU's entry); pass --header PATH")
            return 1
        if data["device_kind"] == "cuda" and tiles[:2] != [WIDE, NARROW]:
            print(f"not writing the header: it needs both 128-row tiles measured (128x256 and 128x128), the sweeps have {tiles}")
            return 1
        if data["device_kind"] != "cuda":  # the CPU's one tile stands for both (a check of the script)
            models = {**{t: m for t, m in models.items() if t not in tiles}, WIDE: models[tiles[0]], NARROW: models[tiles[0]]}
        command = "python benchmarks/calibrate_streamk.py " + " ".join(argv if argv is not None else sys.argv[1:])
        write_header(models, data["device"], args.header or HEADER, command.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
