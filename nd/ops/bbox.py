"""`_contrib_box_decode` and `_contrib_box_encode` (MXNet 1.9.1's src/operator/contrib/bounding_box-inl.h).

Decodes (B, N, 4) offsets against (1, N, 4) anchors into corner boxes
[xmin, ymin, xmax, ymax]: anchors given as corners or as centers ([x, y, w, h]); width and
height offsets are scaled by std2/std3, clipped above at `clip` when clip > 0, and
exponentiated. Computed in the input's dtype, as MXNet's kernel.
"""
from __future__ import annotations

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import ZERO_GRAD, register
from .box_nms import real_types

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


def _encode_shape(a, sshape, mshape, ashape, rshape, meshape, stshape):
    op = "_contrib_box_encode"
    for name, s, cond, want in (("samples", sshape, lambda s: len(s) == 2, "(B, N)"),
                                ("matches", mshape, lambda s: len(s) >= 2, "(B, N)"),
                                ("anchors", ashape, lambda s: len(s) >= 3 and s[-1] == 4, "(B, N, 4)"),
                                ("refs", rshape, lambda s: len(s) >= 3 and s[-1] == 4, "(B, M, 4)")):
        if s is not None and not cond(s):
            raise ShapeError(f"operator {op}: {name} must have shape {want}, got {tuple(s)}")
    for name, s in (("means", meshape), ("stds", stshape)):
        if s is not None and tuple(s) != (4,):
            raise ShapeError(f"operator {op}: {name} must have shape (4,), got {tuple(s)}")
    if ashape is None:
        return None
    return [sshape, mshape, tuple(ashape), rshape, (4,), (4,)], [tuple(ashape), tuple(ashape)]


@register("_contrib_box_encode", inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
          outputs=("output0", "output1"), attrs={}, gradient=ZERO_GRAD, infer_shape=_encode_shape,
          infer_type=real_types("_contrib_box_encode", 2))
def _contrib_box_encode(xp, a, samples, matches, anchors, refs, means, stds):
    """Regression targets of corner `anchors` (B, N, 4) towards their matched corner `refs`
    (B, M, 4), normalised by `means`/`stds`, and the mask of positive samples (samples > 0.5)."""
    _encode_shape(a, samples.shape, matches.shape, anchors.shape, refs.shape, means.shape, stds.shape)
    dt = anchors.dtype.type
    b, n = anchors.shape[0], anchors.shape[1]
    idx = matches.reshape(b, n).astype(xp.int64)
    ref = xp.take_along_axis(refs.reshape(b, -1, 4).astype(anchors.dtype, copy=False), idx[..., None], axis=1)
    half = dt(0.5)
    rw, rh = ref[..., 2] - ref[..., 0], ref[..., 3] - ref[..., 1]
    aw, ah = anchors[..., 2] - anchors[..., 0], anchors[..., 3] - anchors[..., 1]
    m, s = means.astype(anchors.dtype, copy=False), stds.astype(anchors.dtype, copy=False)
    t = xp.stack([((ref[..., 0] + rw * half) - (anchors[..., 0] + aw * half)) / aw,
                  ((ref[..., 1] + rh * half) - (anchors[..., 1] + ah * half)) / ah,
                  xp.log(rw / aw), xp.log(rh / ah)], axis=-1)
    valid = samples.reshape(b, n, 1) > 0.5
    mask = xp.broadcast_to(valid, anchors.shape).astype(anchors.dtype)
    return xp.where(valid, (t - m) / s, dt(0)).astype(anchors.dtype, copy=False), mask
