"""Compile one .cu of the extension for sm_90a with the flags of setup.py and print the resource
usage (registers, spills, shared memory), without building the whole extension:
    python tools/nvcc_check.py torch_grouped/csrc/cuda/permute_copy.cu [--sass] [--loops]
--mix OPCODE: per kernel, the instruction mix of the smallest loop whose body issues OPCODE 16 times
or more (a DMMA kernel's K-block loop: DMMA; a WGMMA one's: HGMMA), opcodes counted without their
modifiers, so that two builds' K loops compare instruction by instruction.
--loops: where the spills (STL/LDL) of each kernel sit, by the innermost loop around them whose body
issues TMA loads, WGMMAs or cp.async (hot_loop_spills): a spill in a loop of a few hundred
instructions runs every K block, one in a loop of thousands once a tile (a loop is the address range
of a backward branch, out-of-line code placed inside it included; session 30's unit ring:
76 bytes of producer spill inside the K-block loop of the clustered kernels, 8-20% slower).
CSRC=<another tree>/torch_grouped/csrc: its headers instead of this checkout's (ptxas of an older revision);
pass that tree's .cu as well, since a .cu's own relative includes ("../kernels/...") resolve next to it.
"""
import glob
import os
from collections import Counter
import re
import subprocess
import sys
import sysconfig

import torch
from torch.utils import cpp_extension

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


HOT = ("HGMMA", "UTMALDG", "LDGSTS")  # a loop doing these is the kernel's K loop (or inside one)
_INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_BRANCH = re.compile(r"\bBRA[\w.]*\s+(?:\S+,\s*)?0x([0-9a-f]+)")


def loops_of(code):
    """The backward branches' ranges [target, branch] of a kernel's (address, text) list."""
    for address, text in code:
        branch = _BRANCH.search(text)
        if branch and int(branch.group(1), 16) <= address:
            yield int(branch.group(1), 16), address


def hot_loop_spills(sass):
    """Per kernel of a `cuobjdump --dump-sass` text: for each local-memory access (STL/LDL: a
    spill), the innermost hot loop around it — a backward branch's range [target, branch] whose
    body issues one of HOT — as {kernel: {(first, last, instructions) or None: count}}, None
    counting the spills outside every hot loop."""
    found = {}
    for chunk in re.split(r"^\s*Function : ", sass, flags=re.M)[1:]:
        name = chunk.split()[0]
        code = [(int(m.group(1), 16), m.group(2)) for m in map(_INSTRUCTION.match, chunk.splitlines()) if m]
        loops = []
        for first, last in loops_of(code):
            body = [t for a, t in code if first <= a <= last]
            if any(op in t for t in body for op in HOT):
                loops.append((first, last, len(body)))
        counts = {}
        for address, text in code:
            if re.search(r"\b(STL|LDL)\b", text):
                around = [loop for loop in loops if loop[0] <= address <= loop[1]]
                key = min(around, key=lambda loop: loop[2]) if around else None
                counts[key] = counts.get(key, 0) + 1
        if counts:
            found[name] = counts
    return found


def print_hot_loop_spills(sass):
    for name, counts in hot_loop_spills(sass).items():
        print(f"spills of {name[:100]}:")
        for loop, count in sorted(counts.items(), key=lambda kv: kv[0][2] if kv[0] else 1 << 30):
            where = f"in the hot loop 0x{loop[0]:x}-0x{loop[1]:x} ({loop[2]} instructions)" if loop else "outside hot loops"
            print(f"  {count:4d} {where}")


def loop_mix(sass, opcode, least=16):
    """{kernel: (first, last, Counter of opcodes)} for each kernel's smallest loop issuing `opcode`
    at least `least` times."""
    found = {}
    for chunk in re.split(r"^\s*Function : ", sass, flags=re.M)[1:]:
        name = chunk.split()[0]
        code = [(int(m.group(1), 16), m.group(2)) for m in map(_INSTRUCTION.match, chunk.splitlines()) if m]
        best = None
        for first, last in loops_of(code):
            ops = Counter(re.sub(r"^@!?U?P\w+\s+", "", t).split()[0].split(".")[0]
                          for a, t in code if first <= a <= last)
            if ops[opcode] >= least and (best is None or sum(ops.values()) < sum(best[2].values())):
                best = (first, last, ops)
        if best:
            found[name] = best
    return found


def print_loop_mix(sass, opcode):
    for name, (first, last, ops) in loop_mix(sass, opcode).items():
        print(f"{name[:110]}: loop 0x{first:x}-0x{last:x}, {sum(ops.values())} instructions, {ops[opcode]} {opcode}")
        print("   " + " ".join(f"{op} {n}" for op, n in ops.most_common()))


def main(source, sass=False, loops=False, mix=None):
    home = os.environ.get("CUDA_HOME") or f"/usr/local/cuda-{torch.version.cuda}"
    includes = cpp_extension.include_paths(device_type="cuda") + [os.path.join(home, "include")]
    import cutlass_library  # noqa: F401  (headers for the matmul kernels)

    cutlass = os.path.join(os.path.dirname(cutlass_library.__file__), "source")
    includes += [os.path.join(cutlass, "include"), os.path.join(cutlass, "tools/util/include")]
    out = f"/tmp/nvcc_check.{os.getpid()}.o"  # per process: two checks may run at once
    cmd = [os.path.join(home, "bin/nvcc"), "-c", source, "-o", out, "-gencode=arch=compute_90a,code=sm_90a",
           "-O3", "-std=c++20", "--expt-relaxed-constexpr", "-Xptxas=-v", "-DNDEBUG", "-DTORCH_GROUPED_WITH_CUDA",
           *(["-DTORCH_GROUPED_TIMELINE"] if os.environ.get("TORCH_GROUPED_TIMELINE") == "1" else []),
           "--compiler-options", "-fPIC", "-I", os.environ.get("CSRC", os.path.join(ROOT, "torch_grouped/csrc")),
           "-I", sysconfig.get_paths()["include"]] + [f"-I{i}" for i in includes]
    try:  # the CUDA libraries' headers (cuBLAS), after the toolkit's, as setup.py passes them
        import nvidia

        for root in nvidia.__path__:
            for d in sorted(glob.glob(os.path.join(root, "*/include/cublas_v2.h"))):
                cmd += ["-Xcompiler", f"-idirafter{os.path.dirname(d)}"]
    except ImportError:
        pass
    r = subprocess.run(cmd, capture_output=True, text=True)
    keep = ("error", "Used", "spill", "Compiling entry", "Performance Loss")  # (C7515: serialized WGMMAs)
    lines = [l for l in r.stderr.splitlines() if any(k in l for k in keep)]
    print("\n".join(lines) if r.returncode == 0 else r.stderr[:6000])
    if r.returncode == 0 and (sass or loops or mix):
        tool = glob.glob(os.path.join(os.path.dirname(__import__("triton").__file__), "backends/nvidia/bin/cuobjdump"))[0]
        dump = subprocess.run([tool, "--dump-sass", out], capture_output=True, text=True).stdout
        if loops:
            print_hot_loop_spills(dump)
        if mix:
            print_loop_mix(dump, mix)
        if sass:
            print(dump)
    return r.returncode


if __name__ == "__main__":
    mix = sys.argv[sys.argv.index("--mix") + 1] if "--mix" in sys.argv else None
    sys.exit(main(sys.argv[1], "--sass" in sys.argv, "--loops" in sys.argv, mix))
