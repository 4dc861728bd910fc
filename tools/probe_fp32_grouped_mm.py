"""Where the time of fp32 grouped_mm goes on the TF32 kernel: the staging kernel (tf32_operand_kernel)
against the grouped kernel, per GPU kernel (torch.profiler), for 3xTF32 and one TF32 pass, with the
expert weights K-major and N-major; beside the call's median time (do_bench) and torch._grouped_mm's.
    python tools/probe_fp32_grouped_mm.py"""
import torch
from triton.testing import do_bench

import torch_grouped as tg
from probe_rank2k import kernel_us  # (tools/ is the script's directory)

# (name, experts, N, K, tokens)
CASES = [("32x_256x4096x2048", 32, 4096, 2048, 8192), ("64x_128x1024x1024", 64, 1024, 1024, 8192)]


def kernels_by_part(fn):
    """GPU time per call (µs) of the staging kernel, the grouped kernel and anything else fn launches."""
    times = {}
    for key, us in kernel_us(fn, reps=5).items():
        name = "staging" if "tf32_operand" in key else ("grouped kernel" if "grouped_gemm" in key else key[:40])
        times[name] = times.get(name, 0.0) + us
    return times


def main():
    for name, g, n, k, tokens in CASES:
        a = torch.randn(tokens, k, device="cuda")
        offs = torch.arange(1, g + 1, device="cuda", dtype=torch.int32) * (tokens // g)
        for layout, b in (("K-major", torch.randn(g, n, k, device="cuda").mT), ("N-major", torch.randn(g, k, n, device="cuda"))):
            for tf32 in (False, True):
                torch.backends.cuda.matmul.allow_tf32 = tf32
                ours = lambda: tg.grouped_mm(a, b, offs)  # noqa: E731
                peer = lambda: torch._grouped_mm(a, b, offs=offs)  # noqa: E731
                t_ours = do_bench(ours, return_mode="median")
                try:
                    t_peer = do_bench(peer, return_mode="median")
                except RuntimeError:  # a layout torch does not take
                    t_peer = float("nan")
                parts = ", ".join(f"{k} {v:.0f} µs" for k, v in kernels_by_part(ours).items())
                mode = "one TF32 pass" if tf32 else "3xTF32"
                print(f"{name} B {layout} {mode:13s}: ours {t_ours * 1e3:7.0f} µs, torch._grouped_mm {t_peer * 1e3:7.0f} µs "
                      f"({t_peer / t_ours:.2f}x); kernels: {parts}")
        torch.backends.cuda.matmul.allow_tf32 = False


if __name__ == "__main__":
    main()
