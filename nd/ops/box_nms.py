"""`_contrib_box_nms`, `_contrib_box_iou` and `_contrib_bipartite_matching` (MXNet 1.9.1's
src/operator/contrib/bounding_box-inl.h).

box_nms keeps MXNet's exact procedure: per batch, the boxes whose score exceeds `valid_thresh`
(and, with `id_index`, whose class is not `background_id`) are stably sorted by descending
score, only the first `topk` take part, a greedy pass drops any box whose IoU with a kept
higher-scoring box (of the same class unless `force_suppress`) exceeds `overlap_thresh`, and
the survivors are written first, in score order, the other rows filled with -1. A hidden
second output records which input row each output row came from; the gradient scatters the
head gradient back through it. Arithmetic is in the input's dtype, as MXNet's kernels.
The loops run on the host (numpy): the boxes per image are few and the pass is sequential.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import DTypeError, ShapeError
from ..registry import ZERO_GRAD, register, same_type

_FORMAT_DOC = ("The box encoding type: \"corner\" [xmin, ymin, xmax, ymax] or \"center\" "
               "[x, y, width, height].")
_FORMATS = ("corner", "center")

NMS_ATTRS = {
    "overlap_thresh": Attr("float", 0.5, "Overlapping(IoU) threshold to suppress object with smaller score."),
    "valid_thresh": Attr("float", 0.0, "Filter input boxes to those whose scores greater than valid_thresh."),
    "topk": Attr("int", -1, "Apply nms to topk boxes with descending scores, -1 to no restriction."),
    "coord_start": Attr("int", 2, "Start index of the consecutive 4 coordinates."),
    "score_index": Attr("int", 1, "Index of the scores/confidence of boxes."),
    "id_index": Attr("int", -1, "Optional, index of the class categories, -1 to disable."),
    "background_id": Attr("int", -1, "Optional, id of the background class which will be ignored in nms."),
    "force_suppress": Attr("bool", False, "Optional, if set false and id_index is provided, nms will only "
                           "apply to boxes belongs to the same category"),
    "in_format": Attr("str", "corner", "The input box encoding type. " + _FORMAT_DOC, choices=_FORMATS),
    "out_format": Attr("str", "corner", "The output box encoding type. " + _FORMAT_DOC, choices=_FORMATS),
}


def _host(x):
    """A numpy view of a kernel input (cupy arrays are copied to the host)."""
    return np.asarray(x.get() if hasattr(x, "get") else x)


def _device(xp, x):
    return x if xp is np else xp.asarray(x)


def _nms_check(a, shape) -> None:
    op = "_contrib_box_nms"
    if len(shape) < 2:
        raise ShapeError(f"operator {op}: input must have dim >= 2 (the last two dimensions are num_box "
                         f"and box_width), got shape {tuple(shape)}")
    width = shape[-1]
    need = 6 if a.id_index >= 0 else 5
    if width >= 0 and width < need:
        raise ShapeError(f"operator {op}: the last dimension must have at least {need} elements "
                         f"(score, 4 coordinates{', class id' if need == 6 else ''}), got {width}")
    cs, ce, si = a.coord_start, a.coord_start + 3, a.score_index
    if not 0 <= si < width:
        raise ShapeError(f"operator {op}: score_index {si} out of range [0, {width})")
    if cs <= si <= ce:
        raise ShapeError(f"operator {op}: score_index {si} conflicts with the coordinates [{cs}, {ce}]")
    if cs < 0 or ce >= width:
        raise ShapeError(f"operator {op}: coordinates [{cs}, {ce}] out of range [0, {width})")
    if a.id_index >= 0:
        ii = a.id_index
        if ii >= width:
            raise ShapeError(f"operator {op}: id_index {ii} out of range [0, {width})")
        if cs <= ii <= ce:
            raise ShapeError(f"operator {op}: id_index {ii} conflicts with the coordinates [{cs}, {ce}]")
        if ii == si:
            raise ShapeError(f"operator {op}: id_index {ii} conflicts with score_index {si}")


def _nms_shape(a, shape):
    if shape is None:
        return None
    _nms_check(a, shape)
    return [tuple(shape)], [tuple(shape), tuple(shape[:-1]) + (1,)]


def real_types(op: str, n_out: int):
    """One floating-point dtype for every input and output (MXNet's MSHADOW_REAL_TYPE_SWITCH)."""
    def rule(a, *dtypes):
        got = same_type(a, *dtypes)
        if got is None:
            return None
        t = got[1][0]
        if np.dtype(t).kind != "f":
            raise DTypeError(f"operator {op}: only floating point types are supported (as in MXNet), got {t}")
        return got[0], [t] * n_out
    return rule


def box_area(boxes, fmt: str):
    """Areas of (..., 4) boxes, 0 where width or height is negative (BoxArea)."""
    if fmt == "corner":
        w, h = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    else:
        w, h = boxes[..., 2], boxes[..., 3]
    return np.where((w < 0) | (h < 0), boxes.dtype.type(0), w * h)


def _overlap_1d(a_lo, a_x, b_lo, b_x, fmt: str):
    """Intersect(): the overlap along one axis, from (lo, hi) or (center, extent)."""
    if fmt == "corner":
        w = np.minimum(a_x, b_x) - np.maximum(a_lo, b_lo)
    else:
        half = a_lo.dtype.type(2)
        aw, bw = a_x / half, b_x / half
        w = np.minimum(b_lo + bw, a_lo + aw) - np.maximum(b_lo - bw, a_lo - aw)
    return np.maximum(w, w.dtype.type(0))


def intersection(a, b, fmt: str):
    """Intersection areas of boxes `a` and `b` (broadcast against each other)."""
    return (_overlap_1d(a[..., 0], a[..., 2], b[..., 0], b[..., 2], fmt)
            * _overlap_1d(a[..., 1], a[..., 3], b[..., 1], b[..., 3], fmt))


def _nms_one(x, a, topk: int, rows: np.ndarray):
    """The kept row indices of one image `x` (N, K), in output order."""
    dt = x.dtype.type
    valid = x[:, a.score_index] > dt(np.float32(a.valid_thresh))
    if a.id_index >= 0:
        valid &= x[:, a.id_index] != dt(a.background_id)
    idx = rows[valid]
    if idx.size == 0:
        return idx
    order = idx[np.argsort(-x[idx, a.score_index], kind="stable")][:topk]
    boxes = x[order, a.coord_start:a.coord_start + 4]
    areas = box_area(boxes, a.in_format)
    classes = x[order, a.id_index].astype(np.int64) if a.id_index >= 0 and not a.force_suppress else None
    thresh = float(np.float32(a.overlap_thresh))
    alive = np.ones(len(order), dtype=bool)
    for r in range(len(order) - 1):
        if not alive[r]:
            continue
        inter = intersection(boxes[r], boxes[r + 1:], a.in_format)
        with np.errstate(divide="ignore", invalid="ignore"):
            iou = inter / (areas[r] + areas[r + 1:] - inter)
        hit = iou.astype(np.float64) > thresh
        if classes is not None:
            hit &= classes[r + 1:] == classes[r]
        alive[r + 1:] &= ~hit
    return order[alive]


def _convert(out, a) -> None:
    """corner_to_center / center_to_corner on the output rows whose first coordinate is >= 0."""
    c = out[..., a.coord_start:a.coord_start + 4]
    p0, p1, p2, p3 = (c[..., i].copy() for i in range(4))
    two = out.dtype.type(2)
    go = p0 >= 0
    if a.out_format == "center":
        new = ((p0 + p2) / two, (p1 + p3) / two, p2 - p0, p3 - p1)
    else:
        w, h = p2 / two, p3 / two
        new = (p0 - w, p1 - h, p0 + w, p1 + h)
    for i, v in enumerate(new):
        c[..., i] = np.where(go, v, c[..., i])


@register("_contrib_box_nms",
          monitor_inputs="input", aliases=("_contrib_box_non_maximum_suppression",), inputs=("data",),
          outputs=("output0", "output1"), num_visible_outputs=1, attrs=NMS_ATTRS,
          infer_shape=_nms_shape, infer_type=real_types("_contrib_box_nms", 2))
def _contrib_box_nms(xp, a, data):
    """Non-maximum suppression of (..., N, K) box records; -1 rows pad the kept ones."""
    shape = tuple(data.shape)
    _nms_check(a, shape)
    x = _host(data)
    n, width = shape[-2], shape[-1]
    b = int(np.prod(shape[:-2], dtype=np.int64)) if len(shape) > 2 else 1
    x = x.reshape(b, n, width)
    topk = n if a.topk < 0 else min(n, a.topk)
    if topk < 1:
        record = np.arange(b * n).astype(x.dtype).reshape(shape[:-1] + (1,))
        return _device(xp, x.copy().reshape(shape)), _device(xp, record)
    out = np.full_like(x, -1)
    record = np.full((b, n), -1, dtype=x.dtype)
    rows = np.arange(n)
    for i in range(b):
        kept = _nms_one(x[i], a, topk, rows)
        out[i, :len(kept)] = x[i, kept]
        record[i, :len(kept)] = kept + i * n
    if a.in_format != a.out_format:
        _convert(out, a)
    return _device(xp, out.reshape(shape)), _device(xp, record.reshape(shape[:-1] + (1,)))


@_contrib_box_nms.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_contrib_box_nms(ograds[0], outputs[1], **a.values())]


def _nms_backward_shape(a, gshape, rshape):
    if gshape is None:
        return None
    return [tuple(gshape), tuple(gshape[:-1]) + (1,)], [tuple(gshape)]


def _nms_backward_type(a, gt, rt):
    t = gt or rt
    return None if t is None else ([t, t], [t])


@register("_backward_contrib_box_nms", inputs=("ograd", "record"), attrs=NMS_ATTRS,
          infer_shape=_nms_backward_shape, infer_type=_nms_backward_type, differentiable=False, fluent=False)
def _backward_contrib_box_nms(xp, a, ograd, record):
    """The gradient of box_nms: output row i's head gradient goes to input row record[i]."""
    shape = tuple(ograd.shape)
    g = _host(ograd)
    width = shape[-1]
    flat = g.reshape(-1, width)
    src = _host(record).reshape(-1).astype(np.int64)
    out = np.zeros_like(flat)
    keep = src >= 0
    out[src[keep]] = flat[keep]
    return (_device(xp, out.reshape(shape)),)


# ---------------------------------------------------------------------------
# box_iou

def _iou_shape(a, lshape, rshape):
    for name, s in (("lhs", lshape), ("rhs", rshape)):
        if s is not None and (len(s) < 2 or s[-1] not in (4, -1)):
            raise ShapeError(f"operator _contrib_box_iou: {name} must have dim >= 2 and a last dimension "
                             f"of 4, got shape {tuple(s)}")
    if lshape is None or rshape is None:
        return None
    return [tuple(lshape), tuple(rshape)], [tuple(lshape[:-1]) + tuple(rshape[:-1])]


@register("_contrib_box_iou", inputs=("lhs", "rhs"),
          attrs={"format": Attr("str", "corner", _FORMAT_DOC, choices=_FORMATS)},
          infer_shape=_iou_shape, infer_type=real_types("_contrib_box_iou", 1), gradient=ZERO_GRAD)
def _contrib_box_iou(xp, a, lhs, rhs):
    """Pairwise IoU of every lhs box with every rhs box: shape lhs[:-1] + rhs[:-1]."""
    _iou_shape(a, lhs.shape, rhs.shape)
    lb = _host(lhs).reshape(-1, 1, 4)
    rb = _host(rhs).astype(lb.dtype, copy=False).reshape(1, -1, 4)
    inter = intersection(lb, rb, a.format)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (box_area(lb, a.format) + box_area(rb, a.format) - inter)
    iou = np.where(inter <= 0, lb.dtype.type(0), iou)
    return (_device(xp, iou.reshape(tuple(lhs.shape[:-1]) + tuple(rhs.shape[:-1]))),)


# ---------------------------------------------------------------------------
# bipartite_matching

def _match_shape(a, shape):
    if shape is None:
        return None
    if len(shape) < 2:
        raise ShapeError(f"operator _contrib_bipartite_matching: the score matrix must have dim >= 2, "
                         f"got shape {tuple(shape)}")
    return [tuple(shape)], [tuple(shape[:-1]), tuple(shape[:-2]) + (shape[-1],)]


@register("_contrib_bipartite_matching", monitor_inputs="input", inputs=("data",), outputs=("output0", "output1"),
          attrs={"is_ascend": Attr("bool", False, "Use ascend order for scores instead of descending. "
                                   "Please set threshold accordingly."),
                 "threshold": Attr("float", doc="Ignore matching when score < thresh, if is_ascend=false, "
                                   "or ignore score > thresh, if is_ascend=true."),
                 "topk": Attr("int", -1, "Limit the number of matches to topk, set -1 for no limit")},
          infer_shape=_match_shape, infer_type=real_types("_contrib_bipartite_matching", 2),
          gradient=ZERO_GRAD)
def _contrib_bipartite_matching(xp, a, data):
    """Greedy matching on (..., rows, cols) scores: the matched column of each row and the
    matched row of each column, -1 where unmatched (MXNet's exact greedy order)."""
    shape = tuple(data.shape)
    _match_shape(a, shape)
    rows, cols = shape[-2], shape[-1]
    s = _host(data).reshape(-1, rows * cols)
    rmark = np.full((s.shape[0], rows), -1, dtype=s.dtype)
    cmark = np.full((s.shape[0], cols), -1, dtype=s.dtype)
    thresh = float(np.float32(a.threshold))
    for b in range(s.shape[0]):
        key = s[b] if a.is_ascend else -s[b]
        count = 0
        for j in np.argsort(key, kind="stable"):
            r, c = divmod(int(j), cols)
            if rmark[b, r] != -1 or cmark[b, c] != -1:
                continue
            score = float(s[b, j])
            if not (score < thresh if a.is_ascend else score > thresh):
                break
            rmark[b, r], cmark[b, c] = c, r
            count += 1
            if 0 < a.topk < count:
                break
    return (_device(xp, rmark.reshape(shape[:-1])),
            _device(xp, cmark.reshape(shape[:-2] + (cols,))))
