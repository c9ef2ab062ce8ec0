"""`_contrib_box_decode` (MXNet 1.9.1's src/operator/contrib/bounding_box-inl.h, box_decode).

Decodes (B, N, 4) offsets against (1, N, 4) anchors into corner boxes
[xmin, ymin, xmax, ymax]: anchors given as corners or as centers ([x, y, w, h]); width and
height offsets are scaled by std2/std3, clipped above at `clip` when clip > 0, and
exponentiated. Computed in the input's dtype, as MXNet's kernel.
"""
from __future__ import annotations

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import ZERO_GRAD, register

_ATTRS = {f"std{i}": Attr("float", 1.0, f"value to be divided from the {n} encoded values")
          for i, n in enumerate(("1st", "2nd", "3rd", "4th"))}
_ATTRS["clip"] = Attr("float", -1.0, "If larger than 0, bounding box target will be clipped to this value.")
_ATTRS["format"] = Attr("str", "center", "The box encoding type of the anchors: corner [xmin, ymin, xmax, ymax] "
                        "or center [x, y, width, height].", choices=("center", "corner"))


def _shape(a, data, anchors):
    if data is not None and (len(data) != 3 or data[-1] != 4):
        raise ShapeError(f"operator _contrib_box_decode: data must have shape (B, N, 4), got {tuple(data)}")
    if anchors is not None and (len(anchors) < 3 or anchors[-1] != 4):
        raise ShapeError(f"operator _contrib_box_decode: anchors must have shape (1, N, 4), got {tuple(anchors)}")
    return None if data is None else ([data, anchors], [tuple(data)])


@register("_contrib_box_decode", inputs=("data", "anchors"), attrs=_ATTRS, gradient=ZERO_GRAD, infer_shape=_shape)
def _contrib_box_decode(xp, a, data, anchors):
    """Corner boxes from offsets `data` (B, N, 4) and `anchors` (1, N, 4)."""
    _shape(a, data.shape, anchors.shape)
    dt = data.dtype.type
    anc = anchors.reshape(1, -1, 4).astype(data.dtype, copy=False)
    ax, ay, aw, ah = (anc[..., i] for i in range(4))
    if a.format == "corner":
        aw, ah = aw - ax, ah - ay
        ax, ay = ax + aw * dt(0.5), ay + ah * dt(0.5)
    ox = data[..., 0] * dt(a.std0) * aw + ax
    oy = data[..., 1] * dt(a.std1) * ah + ay
    dw, dh = data[..., 2] * dt(a.std2), data[..., 3] * dt(a.std3)
    if a.clip > 0:
        dw, dh = xp.minimum(dw, dt(a.clip)), xp.minimum(dh, dt(a.clip))
    ow, oh = xp.exp(dw) * aw * dt(0.5), xp.exp(dh) * ah * dt(0.5)
    return (xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1).astype(data.dtype, copy=False),)
