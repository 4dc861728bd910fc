#!/usr/bin/env bash
# One call on a GPU machine (no network): install the build dependencies from the wheels in .whl/,
# build with MAX_JOBS=16 (or reuse the .so carried in .device/ when the sources are unchanged),
# read the SASS, run the tests (GPU ones included), compute-sanitizer on the GPU kernels' tests,
# and the benchmarks. Everything lands in $OUT (default ./gpu_out):
#   gpu_check.log  the whole log          results.json  benchmark results      plots.tar  PNG plots
#   pytest.log     the tests               _C.abi3.so.xz, build.sha  the build, to carry in .device/ next time
#                  (xz, not gzip: gzip's 16 MB passed the device's 16 MiB limit on files coming back, session 43)
# Environment: BENCH_OPS (default all), SANITIZE (pytest -k expression, default $DEFAULT_SANITIZE below,
#              made of the SANITIZE_AREAS given: layout rank2k streamk grouped),
#              RACECHECK (the expression for racecheck, default $SANITIZE or else $DEFAULT_RACECHECK, by the same areas),
#              SANITIZE_TOOLS (default "memcheck racecheck"), SANITIZE_TIMEOUT (s per tool, default 300), TEST_TIMEOUT (s per test file, default 240), TESTS (test files, default test/test_*.py), SKIP_TESTS=1, SKIP_SANITIZE=1, SKIP_BENCH=1, SKIP_SASS=1 (host-only changes: ~65 s),
#              SWEEP (sections of tools/sweep_tiles.py to run last, e.g. wgrad; SWEEP_TIMEOUT s, default 200),
#              AB (an A/B of this build against AB_BASE, default .device/base.so.xz: tools/time_cases.py
#              argument lists separated by ';', each optionally led by NAME=value settings of its
#              environment, run AB_ROUNDS times (default 2), each build in turn).
set -uo pipefail
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu_check.log") 2>&1
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-16} PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
step() { echo; echo "=== $* ($(date +%T))"; }
# The GPU kernels' tests that compute-sanitizer runs by default, by area; all four take about
# nine minutes under memcheck on an H100 (the layout area is half of them): more than one call
# with a build, so SANITIZE_AREAS picks some (default: all).
# Tests that ask the profiler which kernel ran skip under the sanitizers, which hide the kernels
# from it (test/harness.py's kernels_launched); the `not takes_its_kernel` terms only save their time.
declare -A SANITIZE_AREA=(
  [layout]="(gpu and (layout or permute) and not huge and not takes_its_kernel)"
  [rank2k]="(test_rank2k_kernel and not takes_its_kernel) or test_gpu_large_fp32_fp64 or (test_symmetric_sum and cuda and not takes_its_kernel) or (test_syr2k_tf32 and not takes_its_kernel)"
  [streamk]="(test_streamk_kernel and (grids or graph or transposed_a_matches or (a_m_major_read_in_place and (stream_k or split_k)) or 130-250 or unaligned or tma_store_epilogue or row_copies or (clusters and not by_default and (stream_k or split_k or cuda_graph)) or (forced_small_tile and (290 or 708 or 65536)) or (wide_row_copies_match and 708 and (stream_k or data_parallel))) and not takes_its_kernel) or (test_streamk_tf32 and (operand_layouts or offset_views or grids or cuda_graph))"
  [grouped]="(test_ragged_rows and 72-136) or test_list_api or (test_transposed_operands_of_a_list and not take_their) or (test_a_m_major_list_read_in_place and host) or test_a_m_major_list_every_tile or test_ragged_columns or test_misaligned or test_many_misaligned or test_unaligned or (test_every_tile_configuration and (128x256c2 or tma)) or test_clustered_kernel or (test_k_grouped and not takes_its_kernel) or test_moe_layer or (test_gemm_tf32 and (accurate_by_default or cuda_graph)) or (test_grouped_mm_tf32 and not takes_its_kernel) or (test_f64_kernel and not takes_its_kernel)"
)
# racecheck's default, by area as well: the kernels that share memory between threads, a few cases
# each (check a new expression with `pytest --collect-only -q -k ...`: a -k term that matches
# nothing selects nothing). Built from the same SANITIZE_AREAS: the whole set ran past a call's
# 600 s after memcheck and the tests (session 12).
declare -A RACECHECK_AREA=(
  [layout]="(test_gpu_transposes and (float16-tma or float16-tile2d) and not bfloat16)"
  [rank2k]="(test_symmetric_sum and cuda and bfloat16) or (test_rank2k_kernel and (graph or ((streamk_units or 128x256_tiles) and 300-712 and (stream_k or split_k)) or (clusters_give and sizes1))) or (test_syr2k_tf32 and (cuda_graph or (every_decomposition and 300-712 and (stream_k or data_parallel))))"
  [streamk]="(test_streamk_kernel and graph) or (test_transposed_a_matches and 300-520 and True) or (test_a_m_major_read_in_place and 1000-264 and stream_k) or (test_tma_store_epilogue and 136-264) or (test_dependent_launch_chain and stream_k) or (test_row_copies_match_mm and stream_k) or (test_clusters_match_mm and 300-520 and (stream_k or split_k)) or (test_forced_small_tile and (708 or 65536) and stream_k) or (test_wide_row_copies_match and 708 and stream_k) or (test_streamk_tf32 and cuda_graph)"
  [grouped]="(test_ragged_rows and 72-136) or (test_every_tile_configuration and (bfloat16-128x256+tma or (bfloat16 and 128x256c2))) or (test_a_m_major_list_read_in_place and True-host-bfloat16) or (test_a_m_major_list_every_tile and 128x256c2) or test_clustered_kernel or (test_k_grouped_tiles and bfloat16) or (test_k_grouped_many_tiles_per_cta and 128x256c2) or (test_gemm_tf32 and cuda_graph) or (test_grouped_mm_tf32 and cuda_graph) or (test_f64_kernel and (cuda_graph or many_small or (gemm_matches_float64 and host) or syr2k_matches))"
)
DEFAULT_SANITIZE="" DEFAULT_RACECHECK=""
for area in ${SANITIZE_AREAS:-layout rank2k streamk grouped}; do
  [ -n "${SANITIZE_AREA[$area]:-}" ] || { echo "SANITIZE_AREAS: no area '$area' (layout, rank2k, streamk, grouped)"; exit 1; }
  DEFAULT_SANITIZE="${DEFAULT_SANITIZE:+$DEFAULT_SANITIZE or }${SANITIZE_AREA[$area]}"
  DEFAULT_RACECHECK="${DEFAULT_RACECHECK:+$DEFAULT_RACECHECK or }${RACECHECK_AREA[$area]}"
done

step "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

step "dependencies from .whl"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

# The builds travel compressed: xz where the machine has it, else Python's lzma (same format);
# a .gz from older sessions is still read.
pack() { if command -v xz >/dev/null; then xz -T0 -6 -c "$1"; else python3 -c 'import lzma,sys; sys.stdout.buffer.write(lzma.compress(open(sys.argv[1],"rb").read()))' "$1"; fi; }
unpack() { case "$1" in *.gz) gunzip -c "$1" ;; *) python3 -c 'import lzma,sys; sys.stdout.buffer.write(lzma.decompress(open(sys.argv[1],"rb").read()))' "$1" ;; esac; }
carried=$(ls .device/_C.abi3.so.xz .device/_C.abi3.so.gz 2>/dev/null | head -1)

step "build"
# The image's default g++ (/opt/gcc/bin, a wrapper) links a static libstdc++ into the extension,
# a second copy beside the shared one torch uses: formatting a number in an error message then
# crashes inside the extension (seen on the H100 image, 2026-11-22). Build with the system g++.
if [ -x /usr/bin/g++ ]; then export CC=/usr/bin/gcc CXX=/usr/bin/g++; fi
sha=$(cat setup.py $(find torch_grouped/csrc -type f | LC_ALL=C sort) | sha256sum | cut -c1-16)  # (C order: the same on every machine)
if [ -n "$carried" ] && [ "$(cat .device/build.sha 2>/dev/null)" = "$sha" ]; then
  echo "sources unchanged ($sha): reusing the carried build"
  unpack "$carried" > torch_grouped/_C.abi3.so
else
  t0=$(date +%s)
  TORCH_GROUPED_CUDA=1 python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
  echo "built in $(( $(date +%s) - t0 )) s with MAX_JOBS=$MAX_JOBS"
  grep -E "warning|registers|spill" "$OUT/build.log" | grep -v "Py_LIMITED" | head -40
  # ptxas's C7515: a kernel's WGMMAs serialized (each waited for before the next), because some
  # other instruction defines their accumulators inside the pipeline: 6-15% of the long-K
  # kernels in session 23, reported only as "info"
  echo "kernels with serialized WGMMAs (ptxas C7515, want 0): $(grep -c C7515 "$OUT/build.log")"
fi
echo "libstdc++ symbols defined inside the extension (want 0): $(nm -D --defined-only torch_grouped/_C.abi3.so | grep -c '_ZNSo9_M_insert')"
pack torch_grouped/_C.abi3.so > "$OUT/_C.abi3.so.xz" && echo "$sha" > "$OUT/build.sha"

step "SASS: matrix instructions per kernel"
if [ "${SKIP_SASS:-0}" = 1 ]; then echo "skipped (SKIP_SASS=1)"; else
cuobjdump --dump-sass torch_grouped/_C.abi3.so > /tmp/sass.txt 2>/dev/null
# every matmul kernel (HGMMA), then the copy kernels' 16-byte accesses (the first 30)
awk '/Function :/{f=$3} /HGMMA/{h[f]++} END{for(k in h) print "HGMMA", h[k], k}' /tmp/sass.txt | sort
awk '/Function :/{f=$3} /LDG.E.128|STG.E.128/{v[f]++} END{for(k in v) print "16-byte LDG/STG", v[k], k}' /tmp/sass.txt | sort | head -30
fi

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  step "tests (one process per file, so that a crash hides nothing else; full log in pytest.log)"
  for f in ${TESTS:-test/test_*.py}; do
    timeout ${TEST_TIMEOUT:-240} python3 -X faulthandler -m pytest "$f" -v -p no:cacheprovider >> "$OUT/pytest.log" 2>&1
    echo "$f: exit $? $(grep -E '^(FAILED|ERROR)|Fatal Python' "$OUT/pytest.log" | wc -l) failures so far"
  done
  grep -E "passed|failed" "$OUT/pytest.log" | grep -E "^=+" ; grep -E "^(FAILED|ERROR)|Fatal Python" "$OUT/pytest.log" | head -30
  grep -B2 -A12 "Fatal Python" "$OUT/pytest.log" | head -60
fi
if [ "${SKIP_TESTS:-0}" != 1 ] && [ "${SKIP_SANITIZE:-0}" != 1 ]; then
  step "compute-sanitizer memcheck (-k '${SANITIZE:-$DEFAULT_SANITIZE}') and racecheck (-k '${RACECHECK:-${SANITIZE:-$DEFAULT_RACECHECK}}')"
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    # racecheck runs the kernels tens of times slower: a smaller set by default (RACECHECK)
    expr=${SANITIZE:-$DEFAULT_SANITIZE}
    [ "$tool" = racecheck ] && expr=${RACECHECK:-${SANITIZE:-$DEFAULT_RACECHECK}}
    # A time limit: racecheck can run for many minutes on a large set (the Stream-K fixup never
    # waits on another CTA, so a hang would be a bug, not the tool serialising CTAs).
    timeout ${SANITIZE_TIMEOUT:-300} compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 \
      python3 -m pytest test -q -x -p no:cacheprovider -k "$expr" 2>&1 | tail -6
    echo "$tool exit code: ${PIPESTATUS[0]}"
  done
fi

if [ "${SKIP_BENCH:-0}" != 1 ]; then
  step "benchmarks"
  python3 benchmarks/run.py --device cuda --ops "${BENCH_OPS:-grouped_mm,gemm,syr2k,streamk_mm,layout}" --out /tmp/bench 2>&1 | grep -v "it/s\]$"
  cp /tmp/bench/results.json "$OUT/" && tar -C /tmp/bench -cf "$OUT/plots.tar" $(cd /tmp/bench && ls *.png)
fi
if [ -n "${SWEEP:-}" ]; then
  # Under a time limit: a kernel that hangs cannot be interrupted from Python (a kernel of session
  # 10 that hung took two whole calls), and unbuffered, so the cases done still show.
  step "tools/sweep_tiles.py $SWEEP (at most ${SWEEP_TIMEOUT:-200} s)"
  timeout ${SWEEP_TIMEOUT:-200} python3 tools/sweep_tiles.py $SWEEP 2>&1 | grep -v "it/s\]$"
  echo "sweep exit code: ${PIPESTATUS[0]}"
fi
if [ -n "${AB:-}" ]; then
  # One process per build and argument list, the builds interleaved, so that the GPU's clocks
  # and temperature fall on both alike; the build under test goes back in place at the end.
  step "A/B: ${AB_BASE:-.device/base.so.xz} (base) against this build (new), ${AB_ROUNDS:-2} rounds"
  cp torch_grouped/_C.abi3.so /tmp/new.so && unpack "${AB_BASE:-.device/base.so.xz}" > /tmp/base.so || exit 1
  IFS=';' read -ra ab_lists <<< "$AB"
  for round in $(seq ${AB_ROUNDS:-2}); do
    # base first in odd rounds, new first in even ones: in a fixed order the first build took the
    # cooler place every round (session 56: ~1% a place on a heavy case); an even AB_ROUNDS is fair
    builds="base new"; [ $((round % 2)) = 0 ] && builds="new base"
    for build in $builds; do
      cp /tmp/$build.so torch_grouped/_C.abi3.so
      for args in "${ab_lists[@]}"; do
        read -ra words <<< "$args"
        envs=(AB_BUILD=$build)  # leading NAME=value words: the environment of this list's run
        while [ ${#words[@]} -gt 0 ] && [[ ${words[0]} == [A-Z]*=* ]]; do envs+=("${words[0]}"); words=("${words[@]:1}"); done
        timeout 300 env "${envs[@]}" python3 tools/time_cases.py "${words[@]}" 2>&1 | grep -v "it/s\]$" |
          sed "s/^/$build $round ${envs[*]:1} /"
      done
    done
  done
  cp /tmp/new.so torch_grouped/_C.abi3.so
fi
step "done"
