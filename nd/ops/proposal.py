"""Proposal and MultiProposal (MXNet 1.9.1, src/operator/contrib/proposal*, multi_proposal*):
Faster R-CNN's region proposal layer.

Per image: anchors (every ratio x scale of a feature_stride box, MXNet's rounding) are laid
on the score map's grid, moved by the predicted deltas (center/size deltas, or corner
deltas with `iou_loss`), clipped to the image; anchors outside the image's real extent
(im_info height, width / feature_stride) and boxes smaller than rpn_min_size * im_info scale
get score -1 (the small ones also grow by min_size / 2 each side, as MXNet does). The
rpn_pre_nms_top_n best (stable descending order) go through greedy NMS (IoU > threshold
suppresses, the "+1" pixel convention) until rpn_post_nms_top_n are kept; fewer kept boxes
are repeated cyclically to fill the output. Rows are (image index, x1, y1, x2, y2); the
hidden (or, with output_score, visible) second output holds the scores. Arithmetic is
float32, statement by statement as MXNet's CPU code, so near-threshold IoU decisions match.
The gradient is zero for every input, as in MXNet. Proposal takes one image; MultiProposal
a batch.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..backend import to_numpy
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import ZERO_GRAD, register, shape_known

_F = np.float32
_ATTRS = {
    "rpn_pre_nms_top_n": Attr("int", 6000, "Number of top scoring boxes to keep before applying NMS to RPN "
                                           "proposals"),
    "rpn_post_nms_top_n": Attr("int", 300, "Number of top scoring boxes to keep after applying NMS to RPN "
                                           "proposals"),
    "threshold": Attr("float", 0.7, "NMS value, below which to suppress."),
    "rpn_min_size": Attr("int", 16, "Minimum height or width in proposal"),
    "scales": Attr("floats", (4.0, 8.0, 16.0, 32.0), "Used to generate anchor windows by enumerating scales"),
    "ratios": Attr("floats", (0.5, 1.0, 2.0), "Used to generate anchor windows by enumerating ratios"),
    "feature_stride": Attr("int", 16, "The size of the receptive field each unit in the convolution layer of "
                                      "the rpn,for example the product of all stride's prior to this layer."),
    "output_score": Attr("bool", False, "Add score to outputs"),
    "iou_loss": Attr("bool", False, "Usage of IoU Loss"),
}


def _anchors(a) -> np.ndarray:
    """(ratios * scales, 4) float32 base anchors, ratio-major as MXNet's GenerateAnchors."""
    fs = _F(a.feature_stride)
    w = h = fs - _F(1) - _F(0) + _F(1)
    x_ctr = _F(0.0 + 0.5 * (float(w) - 1.0))
    y_ctr = _F(0.0 + 0.5 * (float(h) - 1.0))
    size = _F(w * h)
    out = []
    for ratio in a.ratios:
        for scale in a.scales:
            ratio, scale = _F(ratio), _F(scale)
            size_ratios = np.floor(_F(size / ratio))
            new_w = _F(np.floor(_F(np.sqrt(size_ratios)) + _F(0.5)) * scale)
            new_h = _F(np.floor(_F(_F(new_w / scale) * ratio) + _F(0.5)) * scale)
            half_w, half_h = _F(_F(0.5) * _F(new_w - _F(1))), _F(_F(0.5) * _F(new_h - _F(1)))
            out.append([x_ctr - half_w, y_ctr - half_h, x_ctr + half_w, y_ctr + half_h])
    return np.array(out, dtype=_F)


def _shape(multi: bool):
    def rule(a, cls, bbox, info):
        if not a.scales or not a.ratios or a.feature_stride < 1:
            raise AttrError(f"operator {_name(multi)}: scales and ratios must be non-empty and feature_stride "
                            f"positive, got scales={a.scales}, ratios={a.ratios}, feature_stride={a.feature_stride}")
        if cls is None or not shape_known(cls):
            return None
        if len(cls) != 4 or cls[1] != 2 * len(a.scales) * len(a.ratios):
            raise ShapeError(f"operator {_name(multi)}: cls_prob must be (N, 2 * num_anchors, H, W) with num_anchors "
                             f"= len(scales) * len(ratios) = {len(a.scales) * len(a.ratios)}, got {tuple(cls)}")
        if not multi and cls[0] != 1:
            raise ShapeError(f"operator _contrib_Proposal: takes one image (cls_prob's batch must be 1, got "
                             f"{cls[0]}); use MultiProposal for a batch")
        want_bbox, want_info = (cls[0], cls[1] * 2, cls[2], cls[3]), (cls[0], 3)
        for name, got, want in (("bbox_pred", bbox, want_bbox), ("im_info", info, want_info)):
            if got is not None and tuple(got) != want:
                raise ShapeError(f"operator {_name(multi)}: {name} must have shape {want}, got {tuple(got)}")
        rows = cls[0] * a.rpn_post_nms_top_n
        return [tuple(cls), want_bbox, want_info], [(rows, 5), (rows, 1)]
    return rule


def _name(multi: bool) -> str:
    return "_contrib_MultiProposal" if multi else "_contrib_Proposal"


def _type(multi: bool):
    def rule(a, *ts):
        for name, t in zip(("cls_prob", "bbox_pred", "im_info"), ts):
            if t is not None and t != np.dtype(_F):
                raise DTypeError(f"operator {_name(multi)}: {name} must be float32 (MXNet's kernel reads "
                                 f"float32 only), got {t}")
        return [np.dtype(_F)] * 3, [np.dtype(_F)] * 2
    return rule


def _decode(a, boxes, deltas, im_h, im_w):
    """Predicted boxes (..., 4) from anchors and deltas (..., 4), clipped to the image."""
    if a.iou_loss:
        pred = boxes + deltas
    else:
        width = boxes[..., 2] - boxes[..., 0] + _F(1)
        height = boxes[..., 3] - boxes[..., 1] + _F(1)
        ctr_x = (boxes[..., 0] + 0.5 * (width.astype(np.float64) - 1.0)).astype(_F)
        ctr_y = (boxes[..., 1] + 0.5 * (height.astype(np.float64) - 1.0)).astype(_F)
        pcx, pcy = deltas[..., 0] * width + ctr_x, deltas[..., 1] * height + ctr_y
        # expf as glibc rounds it: the float64 exponential rounded once (numpy's float32 exp can be 1 ulp off)
        pw = np.exp(deltas[..., 2].astype(np.float64)).astype(_F) * width
        ph = np.exp(deltas[..., 3].astype(np.float64)).astype(_F) * height
        hw = 0.5 * (pw.astype(np.float64) - 1.0)
        hh = 0.5 * (ph.astype(np.float64) - 1.0)
        pred = np.stack([(pcx - hw).astype(_F), (pcy - hh).astype(_F), (pcx + hw).astype(_F),
                         (pcy + hh).astype(_F)], axis=-1)
    limit = np.array([im_w, im_h, im_w, im_h], dtype=_F) - _F(1)
    return np.maximum(np.minimum(pred, limit), _F(0))


def _nms(dets, thresh, keep_max: int) -> list:
    """Greedy NMS over score-ordered dets (n, 4) float32: kept row indices, at most keep_max."""
    x1, y1, x2, y2 = (dets[:, i] for i in range(4))
    area = (x2 - x1 + _F(1)) * (y2 - y1 + _F(1))
    suppressed = np.zeros(len(dets), dtype=bool)
    keep, thresh = [], _F(thresh)
    for i in range(len(dets)):
        if len(keep) >= keep_max:
            break
        if suppressed[i]:
            continue
        keep.append(i)
        rest = slice(i + 1, None)
        w = np.maximum(_F(0), np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]) + _F(1))
        h = np.maximum(_F(0), np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]) + _F(1))
        inter = w * h
        suppressed[rest] |= inter / (area[i] + area[rest] - inter) > thresh
    return keep


def _one_image(a, anchors, fg, deltas, info):
    """(rows (post, 4), scores (post,)) of one image; fg (A, H, W), deltas (4A, H, W)."""
    n_anchor, height, width = fg.shape
    fs = a.feature_stride
    shift = np.stack(np.meshgrid(np.arange(width) * fs, np.arange(height) * fs), axis=-1).astype(_F)  # (H, W, 2)
    boxes = anchors[None, None] + np.concatenate([shift, shift], axis=-1)[:, :, None, :]               # (H, W, A, 4)
    d = deltas.reshape(n_anchor, 4, height, width).transpose(2, 3, 0, 1)
    boxes = _decode(a, boxes, d, info[0], info[1])
    score = fg.transpose(1, 2, 0).copy()
    real_h, real_w = int(_F(info[0] / _F(fs))), int(_F(info[1] / _F(fs)))
    if height < real_h or width < real_w:
        raise ShapeError(f"operator Proposal: im_info {info.tolist()} gives a {real_h} x {real_w} feature map, "
                         f"larger than the {height} x {width} score map")
    score[real_h:] = -1
    score[:, real_w:] = -1
    boxes, score = boxes.reshape(-1, 4), score.reshape(-1)
    min_size = _F(_F(a.rpn_min_size) * info[2])
    small = ((boxes[:, 2] - boxes[:, 0] + _F(1) < min_size) | (boxes[:, 3] - boxes[:, 1] + _F(1) < min_size))
    grow = (min_size / _F(2)) * np.array([-1, -1, 1, 1], dtype=_F)
    boxes = np.where(small[:, None], boxes + grow, boxes)
    score = np.where(small, _F(-1), score)
    count = len(score)
    pre = min(a.rpn_pre_nms_top_n if a.rpn_pre_nms_top_n > 0 else count, count)
    order = np.argsort(-score, kind="stable")[:pre]
    dets, scores = boxes[order], score[order]
    keep = _nms(dets, a.threshold, min(a.rpn_post_nms_top_n, pre))
    pick = [keep[i % len(keep)] for i in range(a.rpn_post_nms_top_n)]
    return dets[pick], scores[pick]


def _forward(a, cls_prob, bbox_pred, im_info):
    cls, deltas, info = (to_numpy(v).astype(_F, copy=False) for v in (cls_prob, bbox_pred, im_info))
    anchors = _anchors(a)
    n_anchor = anchors.shape[0]
    rows, scores = [], []
    for b in range(cls.shape[0]):
        boxes, score = _one_image(a, anchors, cls[b, n_anchor:], deltas[b], info[b])
        rows.append(np.concatenate([np.full((len(boxes), 1), b, dtype=_F), boxes], axis=1))
        scores.append(score[:, None])
    return np.concatenate(rows), np.concatenate(scores)


def _declare(multi: bool):
    name = _name(multi)

    def kernel(xp, a, cls_prob, bbox_pred, im_info):
        _shape(multi)(a, cls_prob.shape, bbox_pred.shape, im_info.shape)
        rows, scores = _forward(a, cls_prob, bbox_pred, im_info)
        return xp.asarray(rows), xp.asarray(scores)
    kernel.__doc__ = (f"{'MultiProposal' if multi else 'Proposal'}: region proposals (image index, x1, y1, "
                      "x2, y2) and their scores from RPN scores and box deltas (see the module doc).")
    return register(name, hint="multiproposal" if multi else "proposal", inputs=("cls_prob", "bbox_pred", "im_info"),
                    outputs=("output", "score"), num_visible_outputs=lambda a: 2 if a.output_score else 1,
                    attrs=dict(_ATTRS), gradient=ZERO_GRAD, infer_shape=_shape(multi), infer_type=_type(multi))(kernel)


Proposal = _declare(multi=False)
MultiProposal = _declare(multi=True)
