"""The SSD operators `_contrib_MultiBoxPrior`, `_contrib_MultiBoxTarget` and
`_contrib_MultiBoxDetection` (MXNet 1.9.1's src/operator/contrib/multibox_*.cc, CPU kernels).

Each follows MXNet's CPU procedure step by step, including its order of float32 arithmetic
(MultiBoxPrior, the regression targets), its stable sorts and greedy matching, so outputs
agree bit for bit in float32. None of them has a gradient in MXNet (all zeros). Matching and
suppression are sequential per image: they run on the host (numpy).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, ShapeError
from ..registry import ZERO_GRAD, register
from .box_nms import _device, _host, real_types

_F32 = np.float32
_VARIANCES = Attr("floats", (0.1, 0.1, 0.2, 0.2), "Variances to be encoded in box regression target.")


def _variances(op: str, a) -> tuple:
    v = tuple(a.variances)
    if len(v) != 4:
        raise AttrError(f"operator {op}: variances must have 4 values, got {v}")
    return tuple(_F32(x) for x in v)


# ---------------------------------------------------------------------------
# MultiBoxPrior

def _prior_check(a) -> None:
    op = "_contrib_MultiBoxPrior"
    if len(a.sizes) < 1 or len(a.ratios) < 1:
        raise AttrError(f"operator {op}: sizes and ratios need at least one value each, got "
                        f"sizes={tuple(a.sizes)} ratios={tuple(a.ratios)}")
    if len(a.steps) != 2 or len(a.offsets) != 2:
        raise AttrError(f"operator {op}: steps and offsets need two values (y, x), got "
                        f"steps={tuple(a.steps)} offsets={tuple(a.offsets)}")
    if not all(0.0 <= o <= 1.0 for o in a.offsets):
        raise AttrError(f"operator {op}: offsets must lie in [0, 1], got {tuple(a.offsets)}")
    if a.steps[0] * a.steps[1] < 0:
        raise AttrError(f"operator {op}: give both step_y and step_x (or neither), got {tuple(a.steps)}")


def _prior_shape(a, dshape):
    _prior_check(a)
    if dshape is None:
        return None
    if len(dshape) < 4:
        raise ShapeError(f"operator _contrib_MultiBoxPrior: input data should be 4D (batch, channel, y, x), "
                         f"got shape {tuple(dshape)}")
    h, w = dshape[2], dshape[3]
    return [tuple(dshape)], [(1, h * w * (len(a.sizes) + len(a.ratios) - 1), 4)]


@register("_contrib_MultiBoxPrior", aliases=("_npx_multibox_prior",), inputs=("data",),
          attrs={"sizes": Attr("floats", (1.0,), "List of sizes of generated MultiBoxPriores."),
                 "ratios": Attr("floats", (1.0,), "List of aspect ratios of generated MultiBoxPriores."),
                 "clip": Attr("bool", False, "Whether to clip out-of-boundary boxes."),
                 "steps": Attr("floats", (-1.0, -1.0), "Priorbox step across y and x, -1 for auto calculation."),
                 "offsets": Attr("floats", (0.5, 0.5), "Priorbox center offsets, y and x respectively")},
          infer_shape=_prior_shape, infer_type=real_types("_contrib_MultiBoxPrior", 1), gradient=ZERO_GRAD,
          hint="multiboxprior")
def _contrib_MultiBoxPrior(xp, a, data):  # noqa: N802
    """Anchor boxes (1, H*W*(sizes+ratios-1), 4) in corner form, per pixel: every size with the
    first ratio, then the first size with every other ratio."""
    _, (oshape,) = _prior_shape(a, tuple(data.shape))
    h, w = int(data.shape[2]), int(data.shape[3])
    step_y, step_x = (_F32(s) for s in a.steps)
    if step_y <= 0 or step_x <= 0:
        step_y, step_x = _F32(1) / _F32(h), _F32(1) / _F32(w)
    sizes = [_F32(s) for s in a.sizes]
    ratios = [_F32(r) for r in a.ratios]
    fh, fw, two = _F32(h), _F32(w), _F32(2)
    pairs = [(s, np.sqrt(ratios[0])) for s in sizes] + [(sizes[0], np.sqrt(r)) for r in ratios[1:]]
    half_w = np.array([s * fh / fw * r / two for s, r in pairs], dtype=_F32)
    half_h = np.array([s / r / two for s, r in pairs], dtype=_F32)
    cy = (np.arange(h, dtype=_F32) + _F32(a.offsets[0])) * step_y
    cx = (np.arange(w, dtype=_F32) + _F32(a.offsets[1])) * step_x
    cy, cx = cy[:, None, None], cx[None, :, None]
    out = np.stack(np.broadcast_arrays(cx - half_w, cy - half_h, cx + half_w, cy + half_h), axis=-1)
    if a.clip:
        out = np.clip(out, _F32(0), _F32(1))
    return (_device(xp, out.reshape(oshape).astype(data.dtype)),)


# ---------------------------------------------------------------------------
# MultiBoxTarget

def _target_shape(a, ashape, lshape, pshape):
    op = "_contrib_MultiBoxTarget"
    if ashape is None or lshape is None or pshape is None:
        return None
    if len(ashape) != 3 or ashape[0] != 1 or ashape[2] != 4 or ashape[1] < 1:
        raise ShapeError(f"operator {op}: anchor must have shape (1, num_anchors, 4) shared across the batch, "
                         f"got {tuple(ashape)}")
    if len(lshape) != 3 or lshape[1] < 1 or lshape[2] < 5:
        raise ShapeError(f"operator {op}: label must have shape (batch, num_labels, width >= 5), got {tuple(lshape)}")
    if len(pshape) != 3 or pshape[2] != ashape[1]:
        raise ShapeError(f"operator {op}: cls_pred must have shape (batch, num_classes, {ashape[1]}) "
                         f"(one column per anchor), got {tuple(pshape)}")
    loc = (lshape[0], ashape[1] * 4)
    return [tuple(ashape), tuple(lshape), tuple(pshape)], [loc, loc, (lshape[0], ashape[1])]


def _overlaps(anchors, gts):
    """IoU (A, L) of corner anchors with corner ground truths, in their dtype; 0 for empty unions."""
    al, at, ar, ab = (anchors[:, None, i] for i in range(4))
    gl, gt, gr, gb = (gts[None, :, i] for i in range(4))
    zero = anchors.dtype.type(0)
    inter = np.maximum(zero, np.minimum(ar, gr) - np.maximum(al, gl)) * \
        np.maximum(zero, np.minimum(ab, gb) - np.maximum(at, gt))
    union = (ar - al) * (ab - at) + (gr - gl) * (gb - gt) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union == 0, zero, inter / union)


def _loc_target(anchor, gt, v):
    """AssignLocTargets, in float32 as MXNet."""
    al, at, ar, ab = (_F32(x) for x in anchor)
    gl, gt_, gr, gb = (_F32(x) for x in gt)
    aw, ah, gw, gh = ar - al, ab - at, gr - gl, gb - gt_
    half = _F32(0.5)
    ax, ay, gx, gy = (al + ar) * half, (at + ab) * half, (gl + gr) * half, (gt_ + gb) * half
    with np.errstate(divide="ignore", invalid="ignore"):
        return [(gx - ax) / aw / v[0], (gy - ay) / ah / v[1], np.log(gw / aw) / v[2], np.log(gh / ah) / v[3]]


def _num_valid_labels(op: str, labels) -> int:
    for i, row in enumerate(labels):
        if float(row[0]) == -1.0:
            if any(float(x) != -1.0 for x in row[1:5]):
                raise ShapeError(f"operator {op}: label row {i} has class -1 (padding) but coordinates "
                                 f"{[float(x) for x in row[1:5]]}; padding rows must be all -1")
            return i
    return len(labels)


def _match_one(ov, a, cls_pred, op: str):
    """Anchor flags (1 positive, 0 negative, -1 ignored) and each anchor's matched label."""
    n_anchor, n_gt = ov.shape
    flags = np.full(n_anchor, -1, dtype=np.int8)
    best_iou = np.full(n_anchor, -1.0, dtype=np.float64)
    best = np.full(n_anchor, -1, dtype=np.int64)
    ovf = ov.astype(_F32).astype(np.float64)   # MXNet keeps overlaps as float
    gt_done = np.zeros(n_gt, dtype=bool)
    num_pos = 0
    while not gt_done.all():          # bipartite stage: the best remaining (anchor, gt) pair
        masked = np.where((flags[:, None] == 1) | gt_done[None, :], -np.inf, ovf)
        j, k = divmod(int(np.argmax(masked)), n_gt)
        if not masked[j, k] > float(_F32(1e-6)):
            break
        best_iou[j], best[j] = masked[j, k], k
        num_pos += 1
        gt_done[k] = True
        flags[j] = 1
    free = flags != 1
    if a.overlap_threshold > 0 or a.negative_mining_ratio > 0:
        rest = free & (best_iou < 0) if a.overlap_threshold <= 0 else free
        best[rest] = np.argmax(ovf[rest], axis=1)
        best_iou[rest] = ovf[rest, best[rest]]
    if a.overlap_threshold > 0:
        pos = free & (best_iou > float(_F32(a.overlap_threshold)))
        flags[pos] = 1
        num_pos += int(pos.sum())
    if a.negative_mining_ratio <= 0:
        flags[flags != 1] = 0
        return flags, best
    num_neg = min(int(_F32(num_pos) * _F32(a.negative_mining_ratio)), n_anchor - num_pos)
    if num_neg <= 0:
        return flags, best
    cand = np.nonzero((flags == -1) & (best_iou < float(_F32(a.negative_mining_thresh))))[0]
    if len(cand) < num_neg:
        raise ShapeError(f"operator {op}: negative mining needs {num_neg} negative anchors but only "
                         f"{len(cand)} have an overlap below negative_mining_thresh")
    p = cls_pred[:, cand]
    top = p.max(axis=0)
    prob = np.exp(p[0] - top) / np.exp(p - top).sum(axis=0, dtype=p.dtype)
    flags[cand[np.argsort(prob.astype(_F32), kind="stable")[:num_neg]]] = 0
    return flags, best


@register("_contrib_MultiBoxTarget", aliases=("_npx_multibox_target",), inputs=("anchor", "label", "cls_pred"),
          outputs=("loc_target", "loc_mask", "cls_target"),
          attrs={"overlap_threshold": Attr("float", 0.5, "Anchor-GT overlap threshold to be regarded as a "
                                           "positive match."),
                 "ignore_label": Attr("float", -1.0, "Label for ignored anchors."),
                 "negative_mining_ratio": Attr("float", -1.0, "Max negative to positive samples ratio, use -1 "
                                               "to disable mining"),
                 "negative_mining_thresh": Attr("float", 0.5, "Threshold used for negative mining."),
                 "minimum_negative_samples": Attr("int", 0, "Minimum number of negative samples."),
                 "variances": _VARIANCES},
          infer_shape=_target_shape, infer_type=real_types("_contrib_MultiBoxTarget", 3),
          gradient=ZERO_GRAD, hint="multiboxtarget")
def _contrib_MultiBoxTarget(xp, a, anchor, label, cls_pred):  # noqa: N802
    """SSD training targets: per anchor the regression target, its mask and the class target
    (0 background, label+1 matched, ignore_label neither). minimum_negative_samples is accepted and,
    as in MXNet's CPU kernel, not used."""
    op = "_contrib_MultiBoxTarget"
    _target_shape(a, tuple(anchor.shape), tuple(label.shape), tuple(cls_pred.shape))
    v = _variances(op, a)
    if a.negative_mining_ratio > 0 and not a.negative_mining_thresh > 0:
        raise AttrError(f"operator {op}: negative_mining_thresh must be > 0 when mining, got "
                        f"{a.negative_mining_thresh}")
    anchors = _host(anchor).reshape(-1, 4)
    labels, preds = _host(label), _host(cls_pred)
    dt = anchors.dtype
    batch, n_anchor = labels.shape[0], anchors.shape[0]
    loc = np.zeros((batch, n_anchor, 4), dtype=dt)
    mask = np.zeros((batch, n_anchor, 4), dtype=dt)
    cls = np.full((batch, n_anchor), a.ignore_label, dtype=dt)
    for b in range(batch):
        n_gt = _num_valid_labels(op, labels[b])
        if n_gt == 0:
            continue
        ov = _overlaps(anchors, labels[b, :, 1:5].astype(dt, copy=False))[:, :n_gt]
        flags, best = _match_one(ov, a, preds[b].astype(dt, copy=False), op)
        for i in np.nonzero(flags == 1)[0]:
            row = labels[b, best[i]]
            cls[b, i] = row[0] + dt.type(1)
            mask[b, i] = 1
            loc[b, i] = _loc_target(anchors[i], row[1:5], v)
        cls[b, flags == 0] = 0
    return tuple(_device(xp, x) for x in (loc.reshape(batch, -1), mask.reshape(batch, -1), cls))


# ---------------------------------------------------------------------------
# MultiBoxDetection

def _detection_shape(a, cshape, lshape, ashape):
    op = "_contrib_MultiBoxDetection"
    if cshape is None or lshape is None or ashape is None:
        return None
    if len(cshape) != 3 or len(lshape) != 2 or len(ashape) != 3 or ashape[2] != 4 or ashape[1] < 1:
        raise ShapeError(f"operator {op}: expected cls_prob (batch, classes, anchors), loc_pred "
                         f"(batch, anchors*4), anchor (1, anchors, 4); got {tuple(cshape)}, "
                         f"{tuple(lshape)}, {tuple(ashape)}")
    if cshape[2] != ashape[1] or cshape[2] * 4 != lshape[1]:
        raise ShapeError(f"operator {op}: number of anchors mismatch: cls_prob {tuple(cshape)}, "
                         f"loc_pred {tuple(lshape)}, anchor {tuple(ashape)}")
    return [tuple(cshape), tuple(lshape), tuple(ashape)], [(cshape[0], ashape[1], 6)]


def _decode(anchors, loc, clip: bool, v):
    """TransformLocations: corner boxes from center-offset predictions (float32 variances)."""
    dt = anchors.dtype.type
    al, at, ar, ab = (anchors[:, i] for i in range(4))
    aw, ah = ar - al, ab - at
    ax, ay = (al + ar) / dt(2), (at + ab) / dt(2)
    ox = (loc[:, 0] * dt(v[0]) * aw + ax).astype(anchors.dtype)
    oy = (loc[:, 1] * dt(v[1]) * ah + ay).astype(anchors.dtype)
    ow = (np.exp(loc[:, 2] * dt(v[2])) * aw / dt(2)).astype(anchors.dtype)
    oh = (np.exp(loc[:, 3] * dt(v[3])) * ah / dt(2)).astype(anchors.dtype)
    box = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=1)
    return np.clip(box, dt(0), dt(1)) if clip else box


def _corner_iou(a, b):
    """CalculateOverlap: IoU of corner box a with boxes b, 0 for empty unions."""
    zero = a.dtype.type(0)
    w = np.maximum(zero, np.minimum(a[2], b[:, 2]) - np.maximum(a[0], b[:, 0]))
    h = np.maximum(zero, np.minimum(a[3], b[:, 3]) - np.maximum(a[1], b[:, 1]))
    i = w * h
    u = (a[2] - a[0]) * (a[3] - a[1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - i
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(u <= 0, zero, i / u)


def _detect_one(out, prob, loc, anchors, a, v) -> None:
    """Fills `out` (A, 6) for one image, as MultiBoxDetectionForward."""
    dt = out.dtype.type
    n_cls = prob.shape[0]
    cid, score = np.zeros(prob.shape[1], dtype=np.int64), np.full(prob.shape[1], dt(-1))
    if n_cls > 1:   # the first class (after the background, 0) with the highest score above -1
        best = prob[1:].max(axis=0)
        found = best > dt(-1)
        cid = np.where(found, np.argmax(prob[1:], axis=0) + 1, 0)
        score = np.where(found, best, score)
        cid = np.where((cid > 0) & (score < dt(np.float32(a.threshold))), 0, cid)
    rows = np.concatenate([(cid - 1).astype(out.dtype)[:, None], score[:, None],
                           _decode(anchors, loc, a.clip, v)], axis=1)
    rows = rows[rows[:, 0] >= 0]
    n = len(rows)
    out[:n] = rows
    if n < 1 or a.nms_threshold <= 0 or a.nms_threshold > 1:
        return
    order = np.argsort(-rows[:, 1], kind="stable")
    keep = n if a.nms_topk <= 0 or a.nms_topk >= n else a.nms_topk
    out[keep:n, 0] = -1
    out[:keep] = rows[order[:keep]]
    thresh = float(np.float32(a.nms_threshold))
    for i in range(keep):
        if out[i, 0] < 0:
            continue
        later = out[i + 1:keep]
        live = later[:, 0] >= 0
        if not a.force_suppress:
            live &= later[:, 0] == out[i, 0]
        iou = _corner_iou(out[i, 2:], later[:, 2:]).astype(np.float64)
        later[live & (iou >= thresh), 0] = -1


@register("_contrib_MultiBoxDetection", aliases=("_npx_multibox_detection",),
          inputs=("cls_prob", "loc_pred", "anchor"),
          attrs={"clip": Attr("bool", True, "Clip out-of-boundary boxes."),
                 "threshold": Attr("float", 0.01, "Threshold to be a positive prediction."),
                 "background_id": Attr("int", 0, "Background id."),
                 "nms_threshold": Attr("float", 0.5, "Non-maximum suppression threshold."),
                 "force_suppress": Attr("bool", False, "Suppress all detections regardless of class_id."),
                 "variances": Attr("floats", (0.1, 0.1, 0.2, 0.2), "Variances to be decoded from box "
                                   "regression output."),
                 "nms_topk": Attr("int", -1, "Keep maximum top k detections before nms, -1 for no limit.")},
          infer_shape=_detection_shape, infer_type=real_types("_contrib_MultiBoxDetection", 1),
          gradient=ZERO_GRAD, hint="multiboxdetection")
def _contrib_MultiBoxDetection(xp, a, cls_prob, loc_pred, anchor):  # noqa: N802
    """Detections (batch, anchors, 6) [class, score, xmin, ymin, xmax, ymax]: decoded, thresholded,
    sorted by score and suppressed; -1 class marks removed rows. (background_id is accepted and,
    as in MXNet's kernel, class 0 is always the background.)"""
    op = "_contrib_MultiBoxDetection"
    _detection_shape(a, tuple(cls_prob.shape), tuple(loc_pred.shape), tuple(anchor.shape))
    v = _variances(op, a)
    prob = _host(cls_prob)
    dt = prob.dtype
    loc = _host(loc_pred).astype(dt, copy=False).reshape(prob.shape[0], -1, 4)
    anchors = _host(anchor).astype(dt, copy=False).reshape(-1, 4)
    out = np.full((prob.shape[0], anchors.shape[0], 6), -1, dtype=dt)
    for b in range(prob.shape[0]):
        _detect_one(out[b], prob[b], loc[b], anchors, a, v)
    return (_device(xp, out),)
