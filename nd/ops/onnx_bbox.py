"""ONNX lowering of `_contrib_box_decode` (nd/ops/bbox.py): elementwise ops on the four coordinates."""
from __future__ import annotations

from ..lowering import onnx_lowering
from . import bbox  # noqa: F401 - the op this lowering registers onto


@onnx_lowering("_contrib_box_decode")
def _box_decode(g, node):
    a, dt = node.attrs, g.in_dtypes[0]
    four = g.ints([1, 1, 1, 1], "split")
    x = g.op("Split", [g.inputs[0], four], n_out=4, axis=2)
    anchors = g.inputs[1] if g.in_dtypes[1] == dt else g.cast(g.inputs[1], dt)
    ax, ay, aw, ah = g.op("Split", [anchors, four], n_out=4, axis=2)
    half = g.scalar(0.5, dt)
    if a.format == "corner":
        aw, ah = g.op("Sub", [aw, ax]), g.op("Sub", [ah, ay])
        ax, ay = g.op("Add", [ax, g.op("Mul", [aw, half])]), g.op("Add", [ay, g.op("Mul", [ah, half])])

    def scaled(i):
        return g.op("Mul", [x[i], g.scalar(float(getattr(a, f"std{i}")), dt)])
    ox = g.op("Add", [g.op("Mul", [scaled(0), aw]), ax])
    oy = g.op("Add", [g.op("Mul", [scaled(1), ah]), ay])
    dw, dh = scaled(2), scaled(3)
    if a.clip > 0:
        clip = g.scalar(float(a.clip), dt)
        dw, dh = g.op("Min", [dw, clip]), g.op("Min", [dh, clip])
    ow = g.op("Mul", [g.op("Mul", [g.op("Exp", [dw]), aw]), half])
    oh = g.op("Mul", [g.op("Mul", [g.op("Exp", [dh]), ah]), half])
    return [g.op("Concat", [g.op("Sub", [ox, ow]), g.op("Sub", [oy, oh]), g.op("Add", [ox, ow]),
                            g.op("Add", [oy, oh])], axis=2)]
