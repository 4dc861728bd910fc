"""tools/nvcc_check.py --loops and --mix: where a kernel's spills sit and what its K loop issues,
read from cuobjdump's SASS text (no GPU, no nvcc: the parser alone, on a hand-made listing in
cuobjdump's format)."""
import importlib.util
import pathlib

_PATH = pathlib.Path(__file__).resolve().parents[1] / "tools" / "nvcc_check.py"
_SPEC = importlib.util.spec_from_file_location("nvcc_check", _PATH)
nvcc_check = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(nvcc_check)


def listing(name, instructions):
    lines = [f"\t\tFunction : {name}", '\t.headerflags\t@"EF_CUDA_SM90"']
    for i, text in enumerate(instructions):
        lines.append(f"        /*{16 * i:04x}*/                   {text} ;      /* 0x000000000000 */")
        lines.append("                                                              /* 0x000000000000 */")
    return "\n".join(lines) + "\n"


# 0x00 prologue spill; 0x10-0x70 the tile loop, holding the K-block loop 0x20-0x50 (a WGMMA, one
# spill) and, after it, a barrier's spin loop 0x60 (no hot instruction) with a spill of its own.
KERNEL = [
    "STL [R1], R2",                           # 0x00: before any loop
    "MOV R3, RZ",                             # 0x10: tile loop head
    "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R4]",  # 0x20: K-block loop head
    "LDL R5, [R1+0x4]",                       # 0x30: a spill every K block
    "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24",  # 0x40
    "@!P1 BRA 0x20",                          # 0x50: K-block loop's back branch
    "STL [R1+0x8], R6",                       # 0x60: spin loop, once a tile
    "@!P0 BRA 0x60",                          # 0x70
    "@P2 BRA 0x10",                           # 0x80: tile loop's back branch
    "EXIT",                                   # 0x90
]


def test_spills_are_placed_in_their_innermost_hot_loop():
    found = nvcc_check.hot_loop_spills(listing("kernel_a", KERNEL) + listing("kernel_b", ["MOV R1, R2", "EXIT"]))
    assert found == {"kernel_a": {None: 1, (0x20, 0x50, 4): 1, (0x10, 0x80, 8): 1}}


def test_branch_forms_and_forward_branches():
    # BRA.U.ANY and BRA.DIV's register operand are read; a forward branch makes no loop
    code = ["LDGSTS.E [R2], [R4.64]", "LDL R5, [R1]", "@P0 BRA.U.ANY 0x0", "BRA.DIV UR8, 0x60", "STL [R1], R5", "EXIT", "EXIT"]
    assert nvcc_check.hot_loop_spills(listing("k", code)) == {"k": {(0x0, 0x20, 3): 1, None: 1}}


def test_loop_mix_takes_the_smallest_loop_with_enough_of_the_opcode():
    # a K loop of two DMMAs inside a tile loop: with least=2 the inner loop's mix, predicates and
    # modifiers stripped (the filler slot `@!UPT UIADD3` counts as UIADD3); with least=3 none
    body = ["DMMA.16x8x8 R8, R16, R24, R8", "@!UPT UIADD3 URZ, URZ, URZ, URZ", "@!P0 LDS.64 R16, [R4]",
            "DMMA.16x8x8 R12, R16, R26, R12", "@P1 BRA 0x10"]
    code = ["MOV R3, RZ", *body, "STG.E.64 [R2], R8", "@P2 BRA 0x0", "EXIT"]
    first, last, ops = nvcc_check.loop_mix(listing("k", code), "DMMA", least=2)["k"]
    assert (first, last) == (0x10, 0x50)
    assert dict(ops) == {"DMMA": 2, "UIADD3": 1, "LDS": 1, "BRA": 1}
    assert nvcc_check.loop_mix(listing("k", code), "DMMA", least=3) == {}
