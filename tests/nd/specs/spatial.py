"""Specs for nd/ops/spatial.py: UpSampling, _contrib_BilinearResize2D,
_contrib_AdaptiveAvgPooling2D, Crop, ROIPooling and their hidden backward operators.

The references are per-pixel loops written from MXNet's CPU kernels (tiny
shapes); backward references are vector-Jacobian products of them.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from tests.nd.specs.conv import deconv_ref, vjp_ref
from tests.op_specs import OpSpec, arr, distinct

# ---------------------------------------------------------------------------
# references


def upsampling_ref(*xs, scale, sample_type, num_args=1, num_filter=0, multi_input_mode="concat", **_):
    if sample_type == "bilinear":
        k, p = 2 * scale - scale % 2, math.ceil((scale - 1) / 2)
        return deconv_ref(xs[0], xs[1], kernel=(k, k), stride=(scale, scale), pad=(p, p),
                          num_filter=num_filter, num_group=num_filter)
    oh, ow = xs[0].shape[2] * scale, xs[0].shape[3] * scale
    parts = [np.repeat(np.repeat(x, oh // x.shape[2], axis=2), ow // x.shape[3], axis=3) for x in xs]
    return sum(parts) if multi_input_mode == "sum" else np.concatenate(parts, axis=1)


def _src(n_in, n_out, dst, align):
    scale = 0.0 if n_out == 1 else ((n_in - 1) / (n_out - 1) if align else n_in / n_out)
    real = scale * dst if align else max(scale * (dst + 0.5) - 0.5, 0.0)
    i0 = int(real)
    return i0, i0 + (1 if i0 < n_in - 1 else 0), real - i0


def resize_ref(data, like=None, *, height=1, width=1, scale_height=None, scale_width=None, mode="size",
               align_corners=True):
    h, w = data.shape[2:]
    if mode == "like":
        oh, ow = like.shape[2:]
    elif mode == "size":
        oh = int(scale_height * h) if scale_height is not None else height
        ow = int(scale_width * w) if scale_width is not None else width
    else:
        even = {"to_even_down": lambda n: n - n % 2, "to_even_up": lambda n: n + n % 2,
                "to_odd_down": lambda n: n - (1 - n % 2), "to_odd_up": lambda n: n + (1 - n % 2)}[mode]
        oh, ow = even(h), even(w)
    out = np.zeros(data.shape[:2] + (oh, ow))
    for i in range(oh):
        h0, h1, lh = _src(h, oh, i, align_corners) if oh != h else (i, i, 0.0)
        for j in range(ow):
            w0, w1, lw = _src(w, ow, j, align_corners) if ow != w else (j, j, 0.0)
            out[:, :, i, j] = ((1 - lh) * ((1 - lw) * data[:, :, h0, w0] + lw * data[:, :, h0, w1])
                               + lh * ((1 - lw) * data[:, :, h1, w0] + lw * data[:, :, h1, w1]))
    return out


def adaptive_ref(data, *, output_size=()):
    size = tuple(output_size) or (1,)
    oh, ow = (size[0], size[0]) if len(size) == 1 else size
    h, w = data.shape[2:]
    out = np.zeros(data.shape[:2] + (oh, ow))
    for i in range(oh):
        hs, he = math.floor(i * h / oh), math.ceil((i + 1) * h / oh)
        for j in range(ow):
            ws, we = math.floor(j * w / ow), math.ceil((j + 1) * w / ow)
            out[:, :, i, j] = data[:, :, hs:he, ws:we].mean(axis=(2, 3))
    return out


def crop_ref(data, like=None, *, num_args=1, offset=(0, 0), h_w=(0, 0), center_crop=False):
    h, w = like.shape[2:] if like is not None else h_w
    top, left = ((data.shape[2] - h) // 2, (data.shape[3] - w) // 2) if center_crop else offset
    return data[:, :, top:top + h, left:left + w]


def roi_ref(data, rois, *, pooled_size, spatial_scale):
    """MXNet's ROIPoolForward, loop for loop; returns (output, maxidx)."""
    ph, pw = pooled_size
    _, c, height, width = data.shape
    out = np.zeros((len(rois), c, ph, pw))
    idx = np.full((len(rois), c, ph, pw), -1.0)

    def cround(v):
        return math.copysign(math.floor(abs(v) + 0.5), v)

    for r, roi in enumerate(rois.astype(np.float32)):
        b = int(roi[0])
        sw, sh, ew, eh = (int(cround(float(v) * np.float32(spatial_scale))) for v in roi[1:])
        bh, bw = max(eh - sh + 1, 1) / ph, max(ew - sw + 1, 1) / pw
        for i in range(ph):
            hs = min(max(math.floor(i * bh) + sh, 0), height)
            he = min(max(math.ceil((i + 1) * bh) + sh, 0), height)
            for j in range(pw):
                ws = min(max(math.floor(j * bw) + sw, 0), width)
                we = min(max(math.ceil((j + 1) * bw) + sw, 0), width)
                if he <= hs or we <= ws:
                    continue
                win = data[b, :, hs:he, ws:we].reshape(c, -1)
                k = win.argmax(axis=1)
                out[r, :, i, j] = win[np.arange(c), k]
                idx[r, :, i, j] = (hs + k // (we - ws)) * width + ws + k % (we - ws)
    return out, idx


# ---------------------------------------------------------------------------
# cases


def up_case(draw, with_ograd=False):
    scale = draw(st.integers(1, 3))
    if draw(st.booleans()):
        c = draw(st.integers(1, 2))
        k = 2 * scale - scale % 2
        inputs = [draw(arr((draw(st.integers(1, 2)), c, draw(st.integers(1, 3)), draw(st.integers(1, 3))))),
                  draw(arr((c, 1, k, k)))]
        attrs = {"scale": scale, "sample_type": "bilinear", "num_filter": c, "num_args": 2}
    else:
        n, h, w = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
        mode = draw(st.sampled_from(["concat", "sum"]))
        c0 = draw(st.integers(1, 2))
        inputs = [draw(arr((n, c0, h, w)))]
        for _ in range(draw(st.integers(0, 2))):
            f = draw(st.sampled_from([d for d in (1, 2, 3) if scale % d == 0]))
            c = c0 if mode == "sum" else draw(st.integers(1, 2))
            inputs.append(draw(arr((n, c, h * scale // f, w * scale // f))))
        attrs = {"scale": scale, "sample_type": "nearest", "num_args": len(inputs), "multi_input_mode": mode}
    if with_ograd:
        inputs = [draw(arr(upsampling_ref(*inputs, **attrs).shape))] + inputs
    return inputs, attrs


def resize_case(draw, with_ograd=False):
    x = draw(arr((draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 4)),
                  draw(st.integers(1, 4)))))
    mode = draw(st.sampled_from(["size", "size", "like", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up"]))
    attrs = {"mode": mode, "align_corners": draw(st.booleans())}
    inputs = [x]
    if mode == "size":
        if draw(st.booleans()):
            attrs.update(scale_height=draw(st.sampled_from([0.5, 1.0, 1.5, 2.0])),
                         scale_width=draw(st.sampled_from([0.5, 1.0, 2.5])))
            if int(attrs["scale_height"] * x.shape[2]) < 1 or int(attrs["scale_width"] * x.shape[3]) < 1:
                attrs.update(scale_height=2.0, scale_width=2.0)
        else:
            attrs.update(height=draw(st.integers(1, 5)), width=draw(st.integers(1, 5)))
    elif mode == "like":
        inputs.append(draw(arr((1, 1, draw(st.integers(1, 5)), draw(st.integers(1, 5))))))
    elif mode in ("to_even_down", "to_odd_down") and min(x.shape[2:]) < 2:
        attrs["mode"] = "to_even_up"
    if with_ograd:
        inputs = [draw(arr(resize_ref(*inputs, **attrs).shape))] + inputs
    return inputs, attrs


def adaptive_case(draw, with_ograd=False):
    x = draw(arr((draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 6)),
                  draw(st.integers(1, 6)))))
    size = draw(st.sampled_from([(), (1,), (2,), (3, 2), (2, 4)]))
    attrs = {"output_size": size} if size else {}
    inputs = [x]
    if with_ograd:
        inputs = [draw(arr(adaptive_ref(x, **attrs).shape))] + inputs
    return inputs, attrs


def crop_case(draw, with_ograd=False):
    n, c, h, w = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(2, 6)), draw(st.integers(2, 6))
    ch, cw = draw(st.integers(1, h)), draw(st.integers(1, w))
    inputs = [draw(arr((n, c, h, w)))]
    attrs = {"center_crop": draw(st.booleans())}
    if draw(st.booleans()):
        inputs.append(draw(arr((1, 1, ch, cw))))
        attrs["num_args"] = 2
    else:
        attrs.update(num_args=1, h_w=(ch, cw))
    if not attrs["center_crop"]:
        attrs["offset"] = (draw(st.integers(0, h - ch)), draw(st.integers(0, w - cw)))
    if with_ograd:
        inputs = [draw(arr((n, c, ch, cw)))] + inputs
    return inputs, attrs


def roi_case(draw):
    n, c, h, w = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(2, 6)), draw(st.integers(2, 6))
    data = draw(distinct(st.just((n, c, h, w))))
    rois = []
    for _ in range(draw(st.integers(1, 3))):
        x1, y1 = draw(st.integers(-1, w)), draw(st.integers(-1, h))
        rois.append([draw(st.integers(0, n - 1)), x1, y1, x1 + draw(st.integers(-1, w)), y1 + draw(st.integers(-1, h))])
    attrs = {"pooled_size": (draw(st.integers(1, 3)), draw(st.integers(1, 3))),
             "spatial_scale": draw(st.sampled_from([1.0, 0.5, 0.75]))}
    return [data, np.array(rois, dtype=np.float64)], attrs


def roi_back_case(draw):
    (data, rois), attrs = roi_case(draw)
    _, idx = roi_ref(data, rois, **attrs)
    return [draw(arr(idx.shape)), data, rois, idx], attrs


def roi_back_ref(ograd, data, rois, maxidx, **attrs):
    return vjp_ref(lambda d: roi_ref(d, rois, **attrs)[0], [data], ograd, (0,))[0]


def _vjp(forward, n_diff):
    """Reference of a hidden backward op: VJP for the first `n_diff` inputs, zeros after."""
    def ref(ograd, *inputs, **attrs):
        grads = vjp_ref(forward, list(inputs), ograd, tuple(range(n_diff)), **attrs)
        return grads + tuple(np.zeros(x.shape) for x in inputs[n_diff:])
    return ref


def _up_back_ref(ograd, *inputs, **attrs):
    return vjp_ref(upsampling_ref, list(inputs), ograd, tuple(range(len(inputs))), **attrs)


SPECS = [
    OpSpec("UpSampling", case=up_case, ref=upsampling_ref),
    OpSpec("_backward_UpSampling", case=lambda draw: up_case(draw, True), ref=_up_back_ref, grad_inputs=(0,)),
    OpSpec("_contrib_BilinearResize2D", case=resize_case, ref=resize_ref, grad_inputs=(0,)),
    OpSpec("_backward_contrib_BilinearResize2D", case=lambda draw: resize_case(draw, True),
           ref=_vjp(resize_ref, 1), grad_inputs=(0,)),
    OpSpec("_contrib_AdaptiveAvgPooling2D", case=adaptive_case, ref=adaptive_ref),
    OpSpec("_backward_contrib_AdaptiveAvgPooling2D", case=lambda draw: adaptive_case(draw, True),
           ref=_vjp(adaptive_ref, 1), grad_inputs=(0,)),
    OpSpec("Crop", case=crop_case, ref=crop_ref, grad_inputs=(0,)),
    OpSpec("_backward_Crop", case=lambda draw: crop_case(draw, True), ref=_vjp(crop_ref, 1), grad_inputs=(0,)),
    OpSpec("ROIPooling", case=roi_case, ref=lambda d, r, **kw: roi_ref(d, r, **kw)[0], grad_inputs=(0,)),
    OpSpec("_backward_ROIPooling", case=roi_back_case, ref=roi_back_ref,
           nondiff="hidden backward of ROIPooling: no gradient rule (as in MXNet)"),
]
