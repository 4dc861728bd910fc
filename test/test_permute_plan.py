"""The permute_copy planner (csrc/common/permute_plan.cpp) that picks the GPU kernel and its tile:
its decisions on the benchmark shapes, and its invariants on random permutations. CPU only: the
planner is host code."""
import math
import re

import expecttest
import torch
from hypothesis import given, settings, strategies as st

plan = torch.ops.grouped._permute_plan


def _contiguous_strides(shape):
    return [math.prod(shape[d + 1:]) for d in range(len(shape))]


def _plan(shape, perm, element_size=2, tile=8192, strides=None):
    strides = strides or _contiguous_strides(shape)
    return plan(list(shape), strides, list(perm), element_size, tile)


class TestPlanDumps(expecttest.TestCase):
    def test_nhwc_to_nchw_is_a_2d_box(self):
        self.assertExpectedInline(_plan((1, 384, 512, 128), (0, 3, 1, 2)), """\
shape 128@1 196608@128 | box | axes 0:64@128 1:128@1 | out_order 1 0 | pad 2 every 128 | elems 8192 smem 8320 boxes 3072""")

    def test_tiny_axes_fold_the_middle_axis_into_a_3d_box(self):
        self.assertExpectedInline(_plan((3, 1024, 1024, 7), (3, 1, 2, 0)), """\
shape 7@1 1048576@7 3@7340032 | box | axes 0:8@1024 1:256@4 2:4@1 | out_order 2 1 0 | pad 2 every 1024 | elems 8192 smem 8208 boxes 4096""")

    def test_inner_axis_that_stays_inner_is_a_row_copy(self):
        self.assertExpectedInline(_plan((32, 1024, 1024), (1, 0, 2)), """shape 1024@1024 32@1048576 1024@1 | rows""")

    def test_strided_input_without_unit_stride_gathers(self):
        self.assertExpectedInline(_plan((8, 6), (1, 0), strides=[12, 2]), """shape 6@2 8@12 | gather""")

    def test_size_one_axes_vanish_and_identity_is_one_row(self):
        self.assertExpectedInline(_plan((1, 5, 1, 300), (2, 1, 0, 3)), """shape 1500@1 | rows""")


_SHAPE = re.compile(r"shape((?: \d+@\d+)*) \| (\w+)")
_BOX = re.compile(r"axes((?: \d+:\d+@\d+)+) \| out_order((?: \d+)+) \| pad (\d+) every (\d+) \| "
                  r"elems (\d+) smem (\d+) boxes (\d+)")


@settings(max_examples=200, deadline=None)
@given(shape=st.lists(st.integers(1, 300), min_size=1, max_size=6), data=st.data(),
       element_size=st.sampled_from([1, 2, 4, 8, 16]))
def test_box_plans_keep_their_invariants(shape, data, element_size):
    perm = data.draw(st.permutations(range(len(shape))))
    tile = 16384 // element_size
    text = _plan(shape, perm, element_size, tile)
    m = _SHAPE.match(text)
    axes = [tuple(map(int, a.split("@"))) for a in m.group(1).split()]
    sizes, in_strides = [a for a, _ in axes], [b for _, b in axes]
    assert math.prod(sizes) == math.prod(shape)
    # merged output axes are never contiguous in the input as well
    assert all(in_strides[d] != in_strides[d + 1] * sizes[d + 1] for d in range(len(sizes) - 1))
    if m.group(2) != "box":
        return
    b = _BOX.search(text)
    slots = [tuple(int(v) for v in re.split("[:@]", s)) for s in b.group(1).split()]
    out_order = [int(v) for v in b.group(2).split()]
    pad, every, elems, smem, boxes = (int(b.group(i)) for i in range(3, 8))
    ext = {axis: e for axis, e, _ in slots}
    assert in_strides[slots[0][0]] == 1                        # loads run along the unit-stride axis
    assert slots[out_order[0]][0] == len(sizes) - 1            # stores along the output-inner axis
    assert all(e & (e - 1) == 0 and e <= 2 * sizes[a] for a, e in ext.items())  # powers of two, no waste
    assert elems == math.prod(ext.values()) <= tile
    assert boxes == math.prod(-(-s // ext.get(d, 1)) for d, s in enumerate(sizes))
    # tile positions: output order, innermost first
    step = 1
    for slot in out_order:
        assert slots[slot][2] == step
        step *= slots[slot][1]
    scatter_bytes = slots[0][2] * element_size  # the load phase's scatter stride
    if pad:  # padded: consecutive lanes change bank
        assert every == slots[0][2] and smem == elems + elems // every * pad
        words = (every + pad) * element_size // 4
        assert scatter_bytes > 4 and (element_size > 4 or words % 2 == 1)
    else:  # loads along the output-inner axis, or a scatter of at most one word (no conflict)
        assert (slots[0][0] == len(sizes) - 1 or scatter_bytes <= 4) and smem == elems


def _widen(shape, perm, element_size, strides=None, base=0):
    strides = strides or _contiguous_strides(shape)
    return torch.ops.grouped._permute_widen(list(shape), strides, list(perm), element_size, base)


class TestWidenDumps(expecttest.TestCase):
    """widen_elements (the default CUDA path since run 22): whole runs of the output-inner axis move as wider elements."""

    def test_nchw8c_to_nhwc_fp16_moves_16_byte_elements(self):
        # (8, 8, 56, 56, 8) -> (0, 2, 3, 1, 4): simplified 8 x 3136 x 8 x 8 with the 8-wide c8 inner
        self.assertExpectedInline(_widen((8, 8, 56, 56, 8), (0, 2, 3, 1, 4), 2), """16 bytes | shape 8@25088 3136@1 8@3136 | numel 200704""")

    def test_a_32_byte_run_stays_two_16_byte_elements(self):
        self.assertExpectedInline(_widen((8, 8, 56, 56, 8), (0, 2, 3, 1, 4), 4), """16 bytes | shape 8@50176 3136@2 8@6272 2@1 | numel 401408""")

    def test_a_misaligned_base_or_stride_narrows_the_element(self):
        self.assertExpectedInline(_widen((8, 8, 56, 56, 8), (0, 2, 3, 1, 4), 2, base=4), """4 bytes | shape 8@100352 3136@4 8@12544 4@1 | numel 802816""")
        strides = [8 * 56 * 56 * 8 + 2, 56 * 56 * 8, 56 * 8, 8, 1]  # batch stride off by one int16 pair
        self.assertExpectedInline(_widen((8, 8, 56, 56, 8), (0, 2, 3, 1, 4), 2, strides=strides), """4 bytes | shape 8@100353 3136@4 8@12544 4@1 | numel 802816""")

    def test_inner_axis_that_moves_is_not_widened(self):
        self.assertExpectedInline(_widen((1, 384, 512, 128), (0, 3, 1, 2), 2), """2 bytes | shape 128@1 196608@128 | numel 25165824""")


@settings(max_examples=100, deadline=None)
@given(shape=st.lists(st.sampled_from([1, 2, 3, 4, 8, 16]), min_size=1, max_size=4), data=st.data(),
       element_size=st.sampled_from([1, 2, 4, 8]), base=st.sampled_from([0, 1, 2, 4, 8]))
def test_widened_shape_addresses_the_same_bytes(shape, data, element_size, base):
    """Every output byte comes from the same input byte before and after widening."""
    perm = data.draw(st.permutations(range(len(shape))))
    strides = _contiguous_strides(shape)
    text = _widen(shape, perm, element_size, strides, base * element_size)
    wide = int(text.split(" bytes")[0])
    sizes_strides = [tuple(map(int, a.split("@"))) for a in text.split("| shape")[1].split("|")[0].split()]
    assert wide % element_size == 0 and wide <= 16 and (base * element_size) % wide == 0

    def source_bytes(axes, esize):
        # input byte offsets in output order: nested loops over the axes, `esize` bytes each
        offs = [0]
        for size, stride in axes:
            offs = [o + i * stride * esize for o in offs for i in range(size)]
        return [o + b for o in offs for b in range(esize)]

    before = [(shape[d], strides[d]) for d in perm]
    assert source_bytes(sizes_strides, wide) == source_bytes(before, element_size)
