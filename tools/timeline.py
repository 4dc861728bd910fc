"""Per-CTA timelines of one kernel launch, from a build with the unit timeline probe
(`TORCH_GROUPED_TIMELINE=1 python setup.py build_ext --inplace`; kernels/unit_timeline.cuh): for
each CTA, consumer warpgroup 0's stamps in µs from the launch's first start (the K loop of each
work unit with its tile and K blocks, the Stream-K fixup, the epilogue), the spread of the CTAs'
end times and the K loop's µs per block. Stamps taken after the first CTAs finished are stretched
by their printing.
    python3 tools/timeline.py syr2k N K        (the environment picks the tile and decomposition:
                                                TORCH_GROUPED_SYR2K_TILE, _DECOMPOSITION)
    python3 tools/timeline.py streamk_mm M N K [DECOMPOSITION [SPLITS]]   (default auto)
    python3 tools/timeline.py grouped_mm CASE  (a case of benchmarks/bench_grouped_mm.py whose name
                                                starts with CASE, e.g. small_64x or tiny_128x)
    python3 tools/timeline.py --log FILE       (lines "TL ..." that a run printed)"""
import collections
import os
import sys
import tempfile

EVENTS = {0: "start", 1: "k-loop", 2: "fixup", 3: "fixup (last)", 4: "store", 5: "first block", 6: "walked"}


def capture(run, launches=3):
    """The kernel's printf lines of `launches` calls of run() (stdout, file descriptor 1)."""
    import torch

    with tempfile.TemporaryFile(mode="w+") as f:
        saved = os.dup(1)
        os.dup2(f.fileno(), 1)
        try:
            for _ in range(launches):
                run()
                torch.cuda.synchronize()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        return f.read().splitlines()


def summarise(lines, show=24):
    # The last launch's stamps: a later line of the same (cta, warpgroup, index) replaces an earlier one.
    last = {}
    for line in lines:
        if line.startswith("TL "):
            _, cta, wg, i, t, event, tile, kb, dropped = line.split()
            last[(int(cta), int(wg), int(i))] = (int(t), int(event), int(tile), int(kb), int(dropped))
    ctas = collections.defaultdict(list)
    for (cta, wg, _), stamp in sorted(last.items()):
        if wg == 0:
            ctas[cta].append(stamp)
    if not ctas:
        sys.exit("no timeline lines: is the extension built with TORCH_GROUPED_TIMELINE=1?")
    t0 = min(s[0][0] for s in ctas.values())
    ends = sorted((s[-1][0] - t0) / 1e3 for s in ctas.values())
    q = lambda f: ends[min(len(ends) - 1, int(f * len(ends)))]
    print(f"{len(ctas)} CTAs; end µs: min {ends[0]:.1f}  p25 {q(0.25):.1f}  median {q(0.5):.1f}  p75 {q(0.75):.1f}  max {ends[-1]:.1f}")
    rates = sorted((s[1][0] - s[0][0]) / 1e3 / s[1][3] for stamps in ctas.values()
                   for s in zip(stamps, stamps[1:]) if s[1][1] == 1 and s[1][3] >= 8)
    if rates:
        print(f"K loop µs per block (units of 8 blocks or more): min {rates[0]:.3f}  median {rates[len(rates) // 2]:.3f}  max {rates[-1]:.3f}")
    def spans(after, before):  # µs from each stamp of event `after` to the next one, of event `before`
        return sorted((s[1][0] - s[0][0]) / 1e3 for stamps in ctas.values() for s in zip(stamps, stamps[1:])
                      if s[0][1] in after and s[1][1] == before)
    for label, values in (("walk to the next unit after the previous unit's end", spans((1, 2, 3, 4), 6)),
                          ("first block's wait after the walk", spans((6,), 5)),
                          ("epilogue", spans((1, 2, 3), 4))):
        if values:
            print(f"{label} µs: min {values[0]:.2f}  median {values[len(values) // 2]:.2f}  max {values[-1]:.2f}")
    if any(s[-1][4] for s in ctas.values()):
        print("some CTAs dropped stamps (more than UnitTimeline::kCapacity)")
    order = sorted(ctas, key=lambda c: ctas[c][-1][0])
    picks = order[: show // 3] + order[len(order) // 2: len(order) // 2 + show // 3] + order[-(show - 2 * (show // 3)):]
    for c in dict.fromkeys(picks):
        stamps, parts, prev = ctas[c], [], t0
        for t, event, tile, kb, _ in stamps:
            what = EVENTS.get(event, str(event)) + (f" t{tile}" if tile >= 0 else "") + (f" kb{kb}" if event == 1 else "")
            parts.append(f"{what} +{(t - prev) / 1e3:.1f}")
            prev = t
        print(f"cta {c:4d} ends {(stamps[-1][0] - t0) / 1e3:7.1f}: " + ", ".join(parts))


def main(args):
    if args[:1] == ["--log"]:
        with open(args[1]) as f:
            return summarise(f.read().splitlines())
    import torch
    import torch_grouped as tg

    op = args[0]
    if op == "grouped_mm":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
        import bench_grouped_mm

        case = next(c for c in bench_grouped_mm.cases("cuda") if c.name.startswith(args[1]))
        return summarise(capture(case.ours))
    sizes = [int(x) for x in args[1:4 if op == "streamk_mm" else 3]]
    if op == "syr2k":
        n, k = sizes
        a, b = (torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        run = lambda: tg.syr2k([a], [b], [])
    elif op == "streamk_mm":
        m, n, k = sizes
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        decomposition, splits = (args[4:5] or ["auto"])[0], int((args[5:6] or [0])[0])
        run = lambda: tg.streamk_mm(a, b, decomposition=decomposition, splits=splits)
    else:
        sys.exit(__doc__)
    summarise(capture(run))


if __name__ == "__main__":
    main(sys.argv[1:] or ["--help"])
