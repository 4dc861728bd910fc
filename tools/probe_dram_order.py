"""Does the order in which a split-K grid walks A's rows decide the DRAM rate of the deep-K shapes of
few tiles (128² x 65536, 256² x 131072: our matmul pulls ~1.65 TB/s on 33, 66 or 132 CTAs, cuBLAS
2.6-3.7; session 45's ncu)? A Triton kernel reads a [M, K] bf16 matrix the way a split-K matmul of
row tile BM reads its A, chunk by chunk of BK columns, in two orders:
  contiguous   program p reads chunks [p*per, (p+1)*per): at any moment the P programs are at P
               places 2*K*... apart in each row, every 128 B read opens another DRAM page;
  interleaved  program p reads chunks p, p+P, p+2P, ...: the P programs sweep each row side by side.
If the contiguous order is limited by DRAM page openings, the interleaved one reads faster at the
same P, BK and in-flight depth. Prints GB/s (median of do_bench, L2 flushed) against torch's sum of
the same matrix (a plain streaming read).
    PYTHONPATH=$PWD python3 tools/probe_dram_order.py"""
import torch
import triton
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def read_split_k(a_ptr, out_ptr, K, stride, per, P, BM: tl.constexpr, BK: tl.constexpr,
                 INTERLEAVED: tl.constexpr):
    pid = tl.program_id(0)
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    acc = tl.zeros([BM, BK], dtype=tl.float32)
    for i in range(per):
        if INTERLEAVED:
            chunk = i * P + pid
        else:
            chunk = pid * per + i
        cols = chunk * BK + tl.arange(0, BK)
        acc += tl.load(a_ptr + rows[:, None] * stride + cols[None, :]).to(tl.float32)
    tl.store(out_ptr + pid * tl.num_programs(1) + tl.program_id(1), tl.sum(acc))


def rate(m, k, p, bm, bk, interleaved, stages=4):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(p * (m // bm), device="cuda", dtype=torch.float32)
    per = k // bk // p
    grid = (p, m // bm)
    run = lambda: read_split_k[grid](a, out, k, a.stride(0), per, p, BM=bm, BK=bk,  # noqa: E731
                                     INTERLEAVED=interleaved, num_stages=stages, num_warps=8)
    run()
    # check the read covered what it claims: both orders sum the same elements
    ref = a[:, : per * p * bk].float().sum().item()
    assert abs(out.sum().item() - ref) <= 1e-3 * a[:, : per * p * bk].float().abs().sum().item(), "wrong sum"
    us = do_bench(run, warmup=25, rep=100, return_mode="median") * 1e3
    return m * per * p * bk * 2 / us / 1e3, us


def main():
    for m, k in ((128, 65536), (256, 131072)):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        us = do_bench(lambda: a.sum(dtype=torch.float32), warmup=25, rep=100, return_mode="median") * 1e3
        print(f"{m}x{k} torch sum: {a.numel() * 2 / us / 1e3:6.0f} GB/s ({us:.1f} µs)", flush=True)
        for bm in (128, 64):
            for bk in (64, 128):
                for p in (33, 66, 132):
                    if m // bm * p > 1056:
                        continue
                    line = []
                    for inter in (False, True):
                        gbs, us = rate(m, k, p, bm, bk, inter)
                        line.append(f"{'interleaved' if inter else 'contiguous'} {gbs:6.0f} GB/s {us:6.1f} µs")
                    print(f"{m}x{k} BM {bm:3d} BK {bk:3d} P {p:3d} (x{m // bm} row tiles): " + "   ".join(line), flush=True)


if __name__ == "__main__":
    main()
