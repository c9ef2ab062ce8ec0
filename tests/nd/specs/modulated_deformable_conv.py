"""Specs for nd/ops/modulated_deformable_conv.py against a per-tap numpy loop under the v2 border
rule (MXNet 1.9.1's own values and gradients: tests/nd/ops/test_modulated_deformable_conv.py)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr


def _sample(plane, y, x):
    """Bilinear read that is zero unless -1 < y < H and -1 < x < W; neighbours outside read 0."""
    h, w = plane.shape
    if not (-1 < y < h and -1 < x < w):
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    ly, lx = y - y0, x - x0

    def at(i, j):
        return plane[i, j] if 0 <= i < h and 0 <= j < w else 0.0
    return ((1 - ly) * (1 - lx) * at(y0, x0) + (1 - ly) * lx * at(y0, x0 + 1)
            + ly * (1 - lx) * at(y0 + 1, x0) + ly * lx * at(y0 + 1, x0 + 1))


def _ref(data, offset, mask, weight, bias=None, *, kernel, stride, dilate, pad, num_filter, num_group,
         num_deformable_group, no_bias, im2col_step=64):
    n, c, h, w = data.shape
    kh, kw = kernel
    oh, ow = offset.shape[2:]
    cg, kk = c // num_deformable_group, kh * kw
    cols = np.zeros((n, c, kk, oh, ow))
    for b, ch, i, j, y, x in np.ndindex(n, c, kh, kw, oh, ow):
        k, g = i * kw + j, ch // cg
        dy, dx = offset[b, g * 2 * kk + 2 * k, y, x], offset[b, g * 2 * kk + 2 * k + 1, y, x]
        cols[b, ch, k, y, x] = mask[b, g * kk + k, y, x] * _sample(
            data[b, ch], y * stride[0] - pad[0] + i * dilate[0] + dy, x * stride[1] - pad[1] + j * dilate[1] + dx)
    fg, cpg = num_filter // num_group, c // num_group
    out = np.zeros((n, num_filter, oh, ow))
    for f in range(num_filter):
        gi = f // fg
        out[:, f] = np.einsum("nkyx,k->nyx", cols[:, gi * cpg:(gi + 1) * cpg].reshape(n, -1, oh, ow),
                              weight[f].reshape(-1))
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)


def _case(draw):
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 2)))
    st_, dil, pad = (draw(st.integers(1, 2)), 1), (1, draw(st.integers(1, 2))), (draw(st.integers(0, 1)), 0)
    ng, dg = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 2]))
    c, f = 2 * draw(st.integers(1, 2)), 2 * draw(st.integers(1, 2))
    n, h, w = draw(st.integers(1, 2)), draw(st.integers(3, 5)), draw(st.integers(3, 5))
    oh = (h + 2 * pad[0] - dil[0] * (k[0] - 1) - 1) // st_[0] + 1
    ow = (w + 2 * pad[1] - dil[1] * (k[1] - 1) - 1) // st_[1] + 1
    kk = k[0] * k[1]
    # whole pixels plus a fraction kept off the integers, where the interpolation and the borders have kinks
    offset = draw(st.sampled_from([-1.0, 0.0, 1.0])) + draw(arr((n, 2 * kk * dg, oh, ow), 0.15, 0.85))
    nb = draw(st.booleans())
    attrs = {"kernel": k, "stride": st_, "dilate": dil, "pad": pad, "num_filter": f, "num_group": ng,
             "num_deformable_group": dg, "no_bias": nb, "im2col_step": draw(st.sampled_from([1, 64]))}
    ins = [draw(arr((n, c, h, w))), offset, draw(arr((n, kk * dg, oh, ow), -1.0, 2.0)),
           draw(arr((f, c // ng) + k))] + ([] if nb else [draw(arr((f,)))])
    return ins, attrs


def _backward_case(draw):
    ins, attrs = _case(draw)
    return [draw(arr(_ref(*ins, **attrs).shape))] + ins, attrs


SPECS = [
    OpSpec("_contrib_ModulatedDeformableConvolution", case=_case, ref=_ref),
    OpSpec("_backward_ModulatedDeformableConvolution", case=_backward_case,
           nondiff="hidden backward op without a gradient of its own"),
]
