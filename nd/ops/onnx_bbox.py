"""ONNX lowerings of `_contrib_box_decode` (nd/ops/bbox.py: elementwise ops on the four coordinates)
and `_contrib_box_nms` (nd/ops/box_nms.py: exact, see below)."""
from __future__ import annotations

import numpy as np

from ..lowering import onnx_lowering
from . import bbox, box_nms  # noqa: F401 - the ops these lowerings register onto


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


# -- box_nms ------------------------------------------------------------------------------------
# Written exactly, not with ONNX's NonMaxSuppression (whose max_output_boxes_per_class limits the
# boxes kept, where MXNet's topk limits the candidates, and which cannot keep classes apart by an
# id column): TopK picks the candidates in MXNet's stable descending order, one IoU matrix holds
# every candidate pair, and MXNet's greedy pass is unrolled over the candidates (static count).
_MAX_CANDIDATES = 2048


def _coords(g, rows, fmt: str, dt):
    """(lo_x, lo_y, hi_x, hi_y) of boxes whose 4 coordinates are the last axis of `rows`, as
    MXNet's Intersect() reads them (corner: as given; center: center -+ extent / 2)."""
    four = g.op("Split", [rows, g.ints([1, 1, 1, 1], "split")], n_out=4, axis=-1)
    if fmt == "corner":
        return four
    two = g.scalar(2.0, dt)
    hw, hh = g.op("Div", [four[2], two]), g.op("Div", [four[3], two])
    return [g.op("Sub", [four[0], hw]), g.op("Sub", [four[1], hh]), g.op("Add", [four[0], hw]),
            g.op("Add", [four[1], hh])]


def _area(g, rows, fmt: str, dt):
    """BoxArea: width * height, 0 when either is negative."""
    four = g.op("Split", [rows, g.ints([1, 1, 1, 1], "split")], n_out=4, axis=-1)
    w, h = (four[2], four[3]) if fmt == "center" else (g.op("Sub", [four[2], four[0]]), g.op("Sub", [four[3], four[1]]))
    zero = g.scalar(0.0, dt)
    neg = g.op("Or", [g.op("Less", [w, zero]), g.op("Less", [h, zero])])
    return g.op("Where", [neg, zero, g.op("Mul", [w, h])])


def _pair_iou(g, cand, fmt: str, dt):
    """(B, K, K) IoU of every candidate pair (candidates (B, K, 4)), in the data's dtype."""
    lo_x, lo_y, hi_x, hi_y = _coords(g, cand, fmt, dt)            # each (B, K, 1)
    zero = g.scalar(0.0, dt)

    def overlap(lo, hi):
        lo_t, hi_t = (g.op("Transpose", [t], perm=[0, 2, 1]) for t in (lo, hi))
        w = g.op("Sub", [g.op("Min", [hi, hi_t]), g.op("Max", [lo, lo_t])])
        return g.op("Max", [w, zero])
    inter = g.op("Mul", [overlap(lo_x, hi_x), overlap(lo_y, hi_y)])
    area = _area(g, cand, fmt, dt)
    union = g.op("Sub", [g.op("Add", [area, g.op("Transpose", [area], perm=[0, 2, 1])]), inter])
    return g.op("Div", [inter, union])


def _convert_format(g, rows, a, width: int, dt):
    """corner <-> center on the coordinates of rows whose first coordinate is >= 0."""
    cs = a.coord_start

    def cols(lo, hi):
        return g.op("Slice", [rows, g.ints([lo]), g.ints([hi]), g.ints([-1], "axes")])
    c = [cols(cs + i, cs + i + 1) for i in range(4)]
    two = g.scalar(2.0, dt)
    if a.out_format == "center":
        new = [g.op("Div", [g.op("Add", [c[0], c[2]]), two]), g.op("Div", [g.op("Add", [c[1], c[3]]), two]),
               g.op("Sub", [c[2], c[0]]), g.op("Sub", [c[3], c[1]])]
    else:
        hw, hh = g.op("Div", [c[2], two]), g.op("Div", [c[3], two])
        new = [g.op("Sub", [c[0], hw]), g.op("Sub", [c[1], hh]), g.op("Add", [c[0], hw]), g.op("Add", [c[1], hh])]
    go = g.op("GreaterOrEqual", [c[0], g.scalar(0.0, dt)])
    parts = ([cols(0, cs)] if cs else []) + [g.op("Where", [go, v, o]) for v, o in zip(new, c)]
    parts += [cols(cs + 4, width)] if cs + 4 < width else []
    return g.op("Concat", parts, axis=-1)


@onnx_lowering("_contrib_box_nms", note="exact: MXNet's candidate order, topk and greedy pass, unrolled "
               f"over at most {_MAX_CANDIDATES} candidates (min(topk, boxes))")
def _box_nms(g, node):
    a, dt = node.attrs, g.in_dtypes[0]
    shape = g.in_shapes[0]
    n, width = int(shape[-2]), int(shape[-1])
    k = n if a.topk < 0 else min(n, a.topk)
    if k < 1:
        return [g.op("Identity", [g.inputs[0]])]
    if k > _MAX_CANDIDATES:
        raise g.fail(f"{k} candidate boxes would unroll MXNet's greedy suppression into too large a graph",
                     f"set topk <= {_MAX_CANDIDATES} (the candidates kept before suppression)")
    # masks are compared in `ct` (MXNet compares thresholds as float); no bool or int constants,
    # so that the graph imports back with MXNet's float-valued comparisons
    ct = np.float64 if dt == np.float64 else np.float32
    x = g.reshape(g.inputs[0], [-1, n, width])

    def column(i):
        return g.op("Gather", [x, g.const(np.asarray(i, dtype=np.int64), hint="col")], axis=2)   # (B, N)

    def gather_rows(src, idx):
        rows = g.op("Expand", [g.op("Unsqueeze", [idx, g.ints([2], "axes")]), g.ints([1, 1, width])])
        return g.op("GatherElements", [src, rows], axis=1)

    def first(t, stop):
        return g.op("Slice", [t, g.ints([0]), g.ints([stop]), g.ints([1], "axes")])
    score = column(a.score_index)
    valid = g.op("Greater", [score, g.scalar(float(np.float32(a.valid_thresh)), dt)])
    if a.id_index >= 0:
        bg = g.op("Equal", [column(a.id_index), g.scalar(float(a.background_id), dt)])
        valid = g.op("And", [valid, g.op("Not", [bg])])
    ninf = g.scalar(-np.inf, dt)
    top, idx = g.op("TopK", [g.op("Where", [valid, score, ninf]), g.ints([n], "k")], n_out=2, axis=1,
                    largest=1, sorted=1)                          # MXNet's stable descending order
    ordered = gather_rows(x, idx)                                   # (B, N, W)
    rows = first(ordered, k) if k < n else ordered                  # the candidates
    alive = g.op("Greater", [g.cast(first(top, k) if k < n else top, ct), g.scalar(-np.inf, ct)])
    cand = g.op("Slice", [rows, g.ints([a.coord_start]), g.ints([a.coord_start + 4]), g.ints([2], "axes")])
    iou = _pair_iou(g, cand, a.in_format, dt)
    if np.dtype(ct) != np.dtype(dt):
        iou = g.cast(iou, ct)
    later = np.where(np.triu(np.ones((k, k), dtype=bool), 1), 0.0, -np.inf).astype(ct)   # only j > i suppress
    iou = g.op("Add", [iou, g.const(later, hint="later")])
    hit = g.op("Greater", [iou, g.scalar(float(np.float32(a.overlap_thresh)), ct)])
    if a.id_index >= 0 and not a.force_suppress:                    # classes compared as integers
        cls = g.op("Slice", [rows, g.ints([a.id_index]), g.ints([a.id_index + 1]), g.ints([2], "axes")])
        cls = g.cast(g.cast(cls, np.int64), ct)
        hit = g.op("And", [hit, g.op("Equal", [cls, g.op("Transpose", [cls], perm=[0, 2, 1])])])
    hit_rows = g.op("Split", [hit, g.ints([1] * k, "split")], n_out=k, axis=1) if k > 1 else [hit]
    for r in range(k - 1):                                          # MXNet's greedy pass, in order
        ref = g.op("Gather", [alive, g.ints([r], "ref")], axis=1)   # (B, 1)
        gone = g.op("And", [g.op("Squeeze", [hit_rows[r], g.ints([1], "axes")]), ref])
        alive = g.op("And", [alive, g.op("Not", [gone])])
    # the kept candidates first, in candidate order (key K - j for kept j, 0 for the others)
    key = g.op("Where", [alive, g.const(np.arange(k, 0, -1, dtype=ct), hint="rank"), g.scalar(0.0, ct)])
    _, perm = g.op("TopK", [key, g.ints([k], "k")], n_out=2, axis=1, largest=1, sorted=1)
    kept = g.op("Unsqueeze", [g.op("GatherElements", [alive, perm], axis=1), g.ints([2], "axes")])
    out = g.op("Where", [kept, gather_rows(rows, perm), g.scalar(-1.0, dt)])
    if k < n:                                                       # rows past the candidates: -1
        rest = g.op("Slice", [ordered, g.ints([k]), g.ints([n]), g.ints([1], "axes")])
        fill = g.op("Expand", [g.scalar(-1.0, dt), g.op("Shape", [rest])])
        out = g.op("Concat", [out, fill], axis=1)
    if a.in_format != a.out_format:
        out = _convert_format(g, out, a, width, dt)
    return [g.reshape_out(out, 0)]
