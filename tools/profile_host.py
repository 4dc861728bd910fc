"""Where the time of one small call goes: host (wall clock of the call without a sync) against the
GPU kernels (torch.profiler), ours beside the PyTorch call a user would make, for the cases where
the host decides the speed (many small groups, small odd matmuls, tiny permutations).
    python tools/profile_host.py [name filter]   ("autocast": what the autocast layer adds; "slope":
    a list call's host time against its group count)"""
import sys
import time

import torch

import torch_grouped as tg


def host_us(fn, reps=50):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    host = (time.perf_counter() - t0) / reps * 1e6
    torch.cuda.synchronize()
    return host


def rand(*shape, dtype=torch.bfloat16):
    return torch.randn(*shape, device="cuda", dtype=dtype)


def cases():
    """name -> (ours, the peer)"""
    a, b = [rand(64, 512) for _ in range(128)], [rand(512, 512) for _ in range(128)]
    yield "gemm 128x 64x512x512", lambda: tg.gemm(a, b), lambda: [torch.mm(x, y) for x, y in zip(a, b)]
    seed = [(1152, 768, 128), (1152, 768, 1024), (768, 1152, 128), (768, 1152, 1024)]  # seed 000's example
    a3, b3 = [rand(m, k) for m, n, k in seed], [rand(k, n) for m, n, k in seed]
    yield "gemm seed000 example", lambda: tg.gemm(a3, b3), lambda: [torch.mm(x, y) for x, y in zip(a3, b3)]
    a2, b2 = [rand(128, 1024) for _ in range(64)], [rand(1024, 1024) for _ in range(64)]
    yield "gemm 64x 128x1024x1024", lambda: tg.gemm(a2, b2), lambda: [torch.mm(x, y) for x, y in zip(a2, b2)]
    # small corpus shapes: odd sizes (operands copied, element stores) beside aligned ones
    for m, n, k in ((708, 830, 140), (704, 832, 144), (178, 455, 1095), (176, 456, 1096), (939, 167, 675),
                    (290, 136, 248), (1000, 3000, 250), (4000, 300, 5000)):
        x, y = rand(m, k), rand(k, n)
        yield f"streamk_mm {m}x{n}x{k}", lambda x=x, y=y: tg.streamk_mm(x, y), lambda x=x, y=y: torch.mm(x, y)
    s, t = [rand(1024, 1024)], [rand(1024, 1024)]
    yield "syr2k n1024 k1024", lambda: tg.syr2k(s, t), lambda: torch.addmm(s[0] @ t[0].T, t[0], s[0].T)
    for shape, perm in (((32, 48), (1, 0)), ((1024, 2, 32, 8), (3, 2, 0, 1)), ((7, 5, 3), (2, 0, 1)),
                        ((3, 1024, 1024, 7), (3, 1, 2, 0))):
        x = rand(*shape, dtype=torch.float16)
        yield (f"permute_copy {shape} {perm}", lambda x=x, perm=perm: tg.permute_copy(x, perm),
               lambda x=x, perm=perm: x.permute(perm).contiguous())
    x8 = rand(8, 8, 56, 56, 8, dtype=torch.float16)
    yield ("layout_transform NCHW8c->NHWC (8, 8, 56, 56, 8)", lambda: tg.layout_transform(x8, "NCHW8c", "NHWC"),
           lambda: x8.permute(0, 2, 3, 1, 4).reshape(8, 56, 56, 64))
    x4 = rand(8, 64, 56, 56, dtype=torch.float16)
    yield ("layout_transform NCHW->NCHW4c (8, 64, 56, 56)", lambda: tg.layout_transform(x4, "NCHW", "NCHW4c"),
           lambda: x4.reshape(8, 16, 4, 56, 56).permute(0, 1, 3, 4, 2).contiguous())


def list_call_parts(groups=128, m=64, n=512, k=512):
    """The host cost of a gemm list call taken apart: the Python wrapper, the op call itself in each
    scheduler mode, and what PyTorch charges for the pieces a list call cannot avoid (a list of
    tensors through the dispatcher, one allocation per output)."""
    a, b = [rand(m, k) for _ in range(groups)], [rand(k, n) for _ in range(groups)]
    op = torch.ops.grouped.gemm.default

    def raw(schedule):
        def call():
            with torch._C._AutoDispatchBelowAutograd():
                return op(a, b, out_dtype=None, schedule=schedule, sort_by_k=True)
        return call

    parts = {
        "tg.gemm (the whole call)": lambda: tg.gemm(a, b),
        "op below autograd, host lists": raw("host"),
        "op below autograd, device visitor": raw("device"),
        "torch._C._any_requires_grad(a, b), for scale": lambda: torch._C._any_requires_grad(a, b),
        f"{groups} x torch.empty (one per output)": lambda: [torch.empty(m, n, device="cuda", dtype=a[0].dtype)
                                                              for _ in range(groups)],
        "torch._foreach_neg(a): a list in, a list out": lambda: torch._foreach_neg(a),
        "grouped_mm of the same sizes (one tensor each)": (
            lambda aa=torch.cat(a), bb=torch.stack(b), offs=torch.arange(1, groups + 1, device="cuda",
                                                                           dtype=torch.int32) * m:
            tg.grouped_mm(aa, bb, offs)),
    }
    print(f"gemm list call of {groups} x {m}x{n}x{k}, host us per call:")
    for name, fn in parts.items():
        print(f"  {name:50s} {host_us(fn):8.1f}")


def list_call_slope(m=64, n=64, k=64):
    """Host µs per gemm list call against the group count (tiny groups: the GPU is never the
    limit), in both scheduler modes, beside a list in / list out floor (torch._foreach_neg) and the
    loop of mm: the per-group slope and the fixed part of a call, each on its own."""
    op = torch.ops.grouped.gemm.default
    print(f"host us per call against groups ({m}x{n}x{k} each): "
          "tg.gemm / op host lists / op device visitor / _foreach_neg(a) / loop of mm")
    for groups in (1, 4, 16, 64, 256):
        a, b = [rand(m, k) for _ in range(groups)], [rand(k, n) for _ in range(groups)]

        def raw(schedule):
            def call():
                with torch._C._AutoDispatchBelowAutograd():
                    return op(a, b, out_dtype=None, schedule=schedule, sort_by_k=True)
            return call
        row = [host_us(f) for f in (lambda: tg.gemm(a, b), raw("host"), raw("device"), lambda: torch._foreach_neg(a),
                                     lambda: [torch.mm(x, y) for x, y in zip(a, b)])]
        print(f"  {groups:4d} groups " + " ".join(f"{t:8.1f}" for t in row))


def autocast_parts():
    """What the autocast kernels (csrc/common/autocast.cpp) add to a call's host time:
    the same calls outside and inside torch.autocast, with inputs already bf16 (nothing to cast)
    and with fp32 weights (a cast per call), beside torch.mm's C++ autocast."""
    x, w = rand(256, 512), rand(8, 512, 512)
    w32, offs = w.float(), torch.arange(1, 9, device="cuda", dtype=torch.int32) * 32
    a, b = [rand(64, 512) for _ in range(128)], [rand(512, 512) for _ in range(128)]
    calls = {
        "grouped_mm bf16": lambda: tg.grouped_mm(x, w, offs),
        "grouped_mm bf16 x, fp32 w (cast)": lambda: tg.grouped_mm(x, w32, offs),
        "gemm 128 x 64x512x512 bf16": lambda: tg.gemm(a, b),
        "torch.mm bf16": lambda: torch.mm(x, w[0]),
    }
    print("host us per call, outside / inside torch.autocast('cuda', bfloat16):")
    for name, fn in calls.items():
        outside = host_us(fn) if "cast)" not in name else float("nan")  # (mixed dtypes: only under autocast)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            inside = host_us(fn)
        print(f"  {name:40s} {outside:8.1f} {inside:8.1f}")


def profile(fn, reps=5):
    acts = [torch.profiler.ProfilerActivity.CUDA, torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=acts, acc_events=True) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    events = prof.key_averages()
    print("    GPU time per call:")
    for e in events:
        if e.device_time_total > 0:
            print(f"      {e.key[:80]:80s} {e.device_time_total / reps:8.1f} us x{e.count // reps}")
    print("    host time per call (self CPU, top 8):")
    for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[:8]:
        print(f"      {e.key[:80]:80s} {e.self_cpu_time_total / reps:8.1f} us x{e.count // reps}")


def main():
    wanted = sys.argv[1] if len(sys.argv) > 1 else ""
    if wanted in "gemm list parts":
        list_call_parts()
    if wanted in "gemm list slope":
        list_call_slope()
    if wanted in "autocast":
        autocast_parts()
    for name, ours, peer in cases():
        if wanted not in name:
            continue
        print(f"{name}: host {host_us(ours):.1f} us per call (peer: {host_us(peer):.1f} us)")
        profile(ours)


if __name__ == "__main__":
    main()
