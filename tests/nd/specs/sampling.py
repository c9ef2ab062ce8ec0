"""Specs for nd/ops/sampling.py: GridGenerator, BilinearSampler, SpatialTransformer and their
hidden backward operators, against a per-point numpy reference (MXNet 1.9.1's own values and
gradients are checked in tests/nd/test_sampling.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr

_HIDDEN = "hidden backward op without a gradient of its own (as MXNet)"


def _affine_dst(h, w):
    i = np.arange(h * w)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([-1.0 + (i % w) * (2.0 / (w - 1)), -1.0 + (i // w) * (2.0 / (h - 1)), np.ones(h * w)])


def _grid_case(draw):
    if draw(st.booleans()):
        h, w = draw(st.integers(2, 4)), draw(st.integers(2, 4))
        theta = draw(arr((draw(st.integers(1, 2)), 6))).astype(np.float32)
        return [theta], {"transform_type": "affine", "target_shape": (h, w)}
    flow = draw(arr((draw(st.integers(1, 2)), 2, draw(st.integers(2, 4)), draw(st.integers(2, 4)))))
    return [flow.astype(np.float32)], {"transform_type": "warp"}


def _grid_ref(data, transform_type, target_shape=(0, 0)):
    if transform_type == "affine":
        h, w = target_shape
        return (data.reshape(-1, 3) @ _affine_dst(h, w)).reshape(data.shape[0], 2, h, w)
    _, _, h, w = data.shape
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    scale = np.array([(w - 1) / 2, (h - 1) / 2]).reshape(1, 2, 1, 1)
    return (data + np.stack([xs, ys])[None]) / scale - 1


def _sample_point(img, x, y):
    """Bilinear value of img (H, W) at pixel coordinates (x, y), 0 outside."""
    h, w = img.shape
    x0, y0 = int(np.floor(x)), int(np.floor(y))
    total = 0.0
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = y0 + dy, x0 + dx
            if 0 <= yy < h and 0 <= xx < w:
                total += img[yy, xx] * (1 - abs(y - yy)) * (1 - abs(x - xx))
    return total


def _sampler_ref(data, grid, **_):
    n, c, h, w = data.shape
    out = np.zeros((n, c) + grid.shape[2:])
    for b, ch, i, j in np.ndindex(out.shape):
        x = (grid[b, 0, i, j] + 1) * (w - 1) / 2
        y = (grid[b, 1, i, j] + 1) * (h - 1) / 2
        out[b, ch, i, j] = _sample_point(data[b, ch], x, y)
    return out


def _grid_values(draw, shape):
    # away from the pixel lattice, where bilinear sampling has kinks
    return draw(arr(shape, -1.2, 1.2)) + 0.013


def _sampler_case(draw):
    n, c, h, w = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(2, 4)),
                  draw(st.integers(2, 4)))
    grid = _grid_values(draw, (n, 2, draw(st.integers(1, 3)), draw(st.integers(1, 3))))
    return [draw(arr((n, c, h, w))), grid], {}


def _st_case(draw):
    (data, _), _ = _sampler_case(draw)
    loc = np.array([0.7, 0.1, 0.05, -0.1, 0.8, 0.02]) + draw(arr((data.shape[0], 6), -0.1, 0.1))
    return [data, loc], {"target_shape": (draw(st.integers(2, 3)), draw(st.integers(2, 3))),
                         "transform_type": "affine", "sampler_type": "bilinear"}


def _st_ref(data, loc, target_shape, **_):
    h, w = target_shape
    grid = (loc.reshape(-1, 2, 3) @ _affine_dst(h, w)).reshape(-1, 2, h, w)
    return _sampler_ref(data, grid)


def _with_head(case):
    def draw_case(draw):
        inputs, attrs = case(draw)
        return [draw(arr(_out_shape(inputs, attrs)))] + inputs, attrs
    return draw_case


def _out_shape(inputs, attrs):
    if "sampler_type" in attrs:
        return inputs[0].shape[:2] + tuple(attrs["target_shape"])
    return inputs[0].shape[:2] + inputs[1].shape[2:]


def _grid_backward_case(draw):
    (data,), attrs = _grid_case(draw)
    out = _grid_ref(data.astype(np.float64), **attrs).astype(np.float32)
    if attrs["transform_type"] == "affine":
        dst = _affine_dst(*attrs["target_shape"]).astype(np.float32)
    else:
        ys, xs = np.meshgrid(np.arange(data.shape[2]), np.arange(data.shape[3]), indexing="ij")
        dst = np.stack([xs, ys]).astype(np.float32)
    return [draw(arr(out.shape)).astype(np.float32), dst], attrs


SPECS = [
    OpSpec("GridGenerator", case=_grid_case, ref=_grid_ref, rtol=1e-5, atol=1e-5,
           nondiff="float32-only kernel (as MXNet's): the gradient is checked against MXNet 1.9.1 "
                   "in tests/nd/test_sampling.py"),
    OpSpec("_backward_GridGenerator", case=_grid_backward_case, nondiff=_HIDDEN),
    OpSpec("BilinearSampler", case=_sampler_case, ref=_sampler_ref),
    OpSpec("_backward_BilinearSampler", case=_with_head(_sampler_case), nondiff=_HIDDEN),
    OpSpec("SpatialTransformer", case=_st_case, ref=_st_ref),
    OpSpec("_backward_SpatialTransformer", case=_with_head(_st_case), nondiff=_HIDDEN),
]
