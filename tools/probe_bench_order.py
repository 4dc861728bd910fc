"""Does a callable's place in the benchmark's rounds move its time? gemm 8 x 4096³ ran its default
call 3-7% slower than "ours, unsorted", the same kernel on the same arguments for equal K, in
sessions 47 and 54 (1777 against 1689 µs; 1733 against 1678): either the default is measured in a
worse GPU state (it is timed first, right after the lighter case before it) or the two calls differ.
    PYTHONPATH=$PWD python3 tools/probe_bench_order.py [CASE ...]
(default case: 8x_4096x4096x4096; any gemm case name.) Prints, per case:
  1. the benchmark's own measurement (common.run_case, after the lighter seed-000 case), 3 times;
  2. common.time_in_turn with the default call listed last instead of first;
  3. six rounds whose order rotates (each callable takes each place), every sample with its place."""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import bench_gemm  # noqa: E402
import common  # noqa: E402


def gemm_cases(names):
    wanted = {"seed000_example_fp16", *names}
    found = {}
    for case in bench_gemm.cases("cuda"):
        if case.name in wanted:
            found[case.name] = case
        if len(found) == len(wanted):
            break
    return found


def main(names):
    cases = gemm_cases(names)
    light = cases["seed000_example_fp16"]
    for name in names:
        case = cases[name]
        print(f"== {name}: µs")
        for rep in range(3):
            common.run_case(light, "cuda")
            r = common.run_case(case, "cuda")
            print(f"  run_case {rep}: ours {r['ours_ms'] * 1e3:8.1f}  " +
                  "  ".join(f"{p} {ms * 1e3:8.1f}" for p, ms in r["peers_ms"].items()))
        fns = {**case.peers, "ours (default)": case.ours}
        common.run_case(light, "cuda")
        times = common.time_in_turn(fns, "cuda")
        print("  time_in_turn, default last: " + "  ".join(f"{p} {ms * 1e3:8.1f}" for p, ms in times.items()))
        fns = {"ours (default)": case.ours, **case.peers}
        names_in_order = list(fns)
        samples = {p: [] for p in names_in_order}
        for r in range(6):
            order = names_in_order[r % len(names_in_order):] + names_in_order[:r % len(names_in_order)]
            line = []
            for place, p in enumerate(order):
                ms = common.time_ms(fns[p], "cuda", max(1, 100 // common.GPU_ROUNDS), common.GPU_WARMUP_MS)
                samples[p].append(ms)
                line.append(f"{place}:{p} {ms * 1e3:.1f}")
            print(f"  round {r}: " + "  ".join(line))
        print("  rotated medians: " + "  ".join(f"{p} {statistics.median(v) * 1e3:8.1f}" for p, v in samples.items()))


if __name__ == "__main__":
    main(sys.argv[1:] or ["8x_4096x4096x4096"])
