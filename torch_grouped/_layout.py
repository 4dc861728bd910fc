"""Layout-string arithmetic for the fake implementation and autograd of layout_transform.

The C++ parser (csrc/common/layout.cpp) validates and raises the user-facing errors; this one
only computes shapes, in a form that works with symbolic sizes under torch.compile.
"""
import re
from typing import Dict, List, Sequence, Tuple

_TOKEN = re.compile(r"([A-Z])|(\d+)([a-z])")


def parse(layout: str) -> List[Tuple[str, int]]:
    """[(axis, factor)]: factor 0 for a primary axis, the split size for a sub-axis."""
    axes, pos = [], 0
    while pos < len(layout):
        m = _TOKEN.match(layout, pos)
        if m is None:
            raise ValueError(f"layout_transform: cannot parse layout {layout!r} at position {pos}")
        axes.append((m.group(1), 0) if m.group(1) else (m.group(3).upper(), int(m.group(2))))
        pos = m.end()
    return axes


def extents(sizes: Sequence, src: str) -> Dict[str, object]:
    """Logical extent of every primary axis of a tensor of `sizes` in layout `src`."""
    axes = parse(src)
    factors = {a: f for a, f in axes if f > 0}
    return {a: sizes[i] * factors.get(a, 1) for i, (a, f) in enumerate(axes) if f == 0}


def out_sizes(sizes: Sequence, src: str, dst: str) -> List:
    ext = extents(sizes, src)
    axes = parse(dst)
    factors = {a: f for a, f in axes if f > 0}
    return [f if f > 0 else (ext[a] + factors.get(a, 1) - 1) // factors.get(a, 1) for a, f in axes]
