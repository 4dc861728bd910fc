"""The Stream-K corpus summary and plot again, from a saved run (no GPU needed):

    python benchmarks/streamk_report.py bench_out/results.json [--out DIR]

run.py already prints the summary and writes DIR/streamk_corpus.png when it runs streamk_mm; this
redoes both from its results.json, e.g. on a laptop after copying the file back.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_streamk  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", help="results.json written by run.py")
    parser.add_argument("--out", default=None, help="folder for streamk_corpus.png (default: the results' folder)")
    args = parser.parse_args(argv)
    with open(args.results) as f:
        data = json.load(f)
    out = args.out or os.path.dirname(os.path.abspath(args.results))
    os.makedirs(out, exist_ok=True)
    print(f"{args.results}: {data['device']}, torch {data['torch']}")
    summary = bench_streamk.summarize([r for r in data["results"] if r["op"] == "streamk_mm"], out)
    if summary is None:
        print("no streamk_mm corpus cases in this file")
        return 1
    print(f"plot in {os.path.join(out, 'streamk_corpus.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
