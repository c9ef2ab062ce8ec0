"""Specs for nd/ops/image.py (`_image_*`). Forward references are direct numpy
formulas; the OpenCV-exact resize and the colour kernels are also checked against
MXNet's own outputs in tests/data_io/test_image_ops.py.

MXNet gives every image augmentation the gradient `_copy` (the head gradient
unchanged), which is the derivative only for shifts such as lighting; the flips and
colour jitters keep MXNet's rule and skip the finite-difference check.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr

_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]])
_COPY_GRAD = "MXNet's gradient for image augmentations is _copy of the head gradient, not the derivative"
_RANDOM = "random augmentation"


def hwc(draw, c=None, low=0.0, high=255.0):
    h, w = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    return draw(arr((h, w, c or draw(st.sampled_from([1, 3]))), low, high))


def chw_case(draw):
    c = draw(st.sampled_from([1, 3]))
    x = draw(arr((c, draw(st.integers(1, 4)), draw(st.integers(1, 4)))))
    mean = tuple(draw(st.floats(-1, 1)) for _ in range(draw(st.sampled_from([1, c]))))
    std = tuple(draw(st.floats(0.5, 2)) for _ in range(draw(st.sampled_from([1, c]))))
    return [x], {"mean": mean, "std": std}


def normalize_ref(x, mean, std):
    c = x.shape[0]
    return (x - np.broadcast_to(mean, (c,))[:, None, None]) / np.broadcast_to(std, (c,))[:, None, None]


def crop_case(draw, backward=False):
    x = hwc(draw)
    h, w = x.shape[:2]
    y0, x0 = draw(st.integers(0, h - 1)), draw(st.integers(0, w - 1))
    attrs = {"x": x0, "y": y0, "height": draw(st.integers(1, h - y0)), "width": draw(st.integers(1, w - x0))}
    if backward:
        return [draw(arr((attrs["height"], attrs["width"], x.shape[2]))), x], attrs
    return [x], attrs


def crop_back_ref(g, x, x0, y, width, height):
    out = np.zeros_like(x)
    out[y:y + height, x0:x0 + width] = g
    return out


def resize_case(draw):
    x = hwc(draw)
    return [x], {"size": (draw(st.integers(1, 6)), draw(st.integers(1, 6))), "interp": 0}


def resize_nearest_ref(x, size, interp):
    ow, oh = size
    rows = np.minimum(np.floor(np.arange(oh) * x.shape[0] / oh).astype(int), x.shape[0] - 1)
    cols = np.minimum(np.floor(np.arange(ow) * x.shape[1] / ow).astype(int), x.shape[1] - 1)
    return x[rows][:, cols]


def _rand_case(attrs):
    return lambda draw: ([hwc(draw, 3)], dict(attrs))


SPECS = [
    OpSpec("_image_to_tensor", case=lambda draw: ([hwc(draw)], {}),
           ref=lambda x: (x.transpose(2, 0, 1) / 255.0).astype(np.float32), nondiff="MXNet: no gradient"),
    OpSpec("_image_normalize", case=chw_case, ref=normalize_ref),
    OpSpec("_backward_image_normalize", case=chw_case,
           ref=lambda g, mean, std: normalize_ref(g, 0.0, std), nondiff="hidden backward operator"),
    OpSpec("_image_resize", case=resize_case, ref=resize_nearest_ref, nondiff="MXNet: no gradient"),
    OpSpec("_image_crop", case=crop_case, grad_inputs=(0,),
           ref=lambda *a, **kw: a[0][kw["y"]:kw["y"] + kw["height"], kw["x"]:kw["x"] + kw["width"]]),
    OpSpec("_backward_image_crop", case=lambda draw: crop_case(draw, True),
           ref=lambda *a, **kw: crop_back_ref(a[0], a[1], kw["x"], kw["y"], kw["width"], kw["height"]),
           nondiff="hidden backward operator"),
    OpSpec("_image_flip_left_right", case=lambda draw: ([hwc(draw)], {}), ref=lambda x: x[:, ::-1],
           nondiff=_COPY_GRAD),
    OpSpec("_image_flip_top_bottom", case=lambda draw: ([hwc(draw)], {}), ref=lambda x: x[::-1], nondiff=_COPY_GRAD),
    OpSpec("_image_adjust_lighting", case=lambda draw: ([hwc(draw, 3)], {"alpha": (0.1, -0.2, 0.3)}),
           ref=lambda x, alpha: x + _EIG @ np.array(alpha), rtol=1e-5, atol=1e-4,
           nondiff="computed in float32 whatever the input dtype, as MXNet's kernel (too coarse for finite "
                   "differences); its gradient is _copy, exact for this shift"),
    OpSpec("_image_random_flip_left_right", case=_rand_case({}), nondiff=_RANDOM),
    OpSpec("_image_random_flip_top_bottom", case=_rand_case({}), nondiff=_RANDOM),
    *[OpSpec(f"_image_random_{k}", case=_rand_case({"min_factor": 0.5, "max_factor": 1.5}), nondiff=_RANDOM)
      for k in ("brightness", "contrast", "saturation", "hue")],
    OpSpec("_image_random_color_jitter", case=_rand_case({"brightness": 0.1, "contrast": 0.1, "saturation": 0.1,
                                                          "hue": 0.1}), nondiff=_RANDOM),
    OpSpec("_image_random_lighting", case=_rand_case({"alpha_std": 0.1}), nondiff=_RANDOM),
]
