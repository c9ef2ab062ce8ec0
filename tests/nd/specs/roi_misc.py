"""Specs for im2col / col2im, _histogram and _contrib_boolean_mask (nd/ops/im2col.py,
histogram.py, boolean_mask.py); MXNet 1.9.1's own values: tests/nd/ops/test_roi_misc.py."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr

_HIDDEN = "hidden backward op without a gradient of its own (as MXNet)"


def _window(draw, nsp: int) -> dict:
    k = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    return {"kernel": k, "stride": tuple(draw(st.integers(1, 2)) for _ in range(nsp)),
            "dilate": tuple(draw(st.integers(1, 2)) for _ in range(nsp)),
            "pad": tuple(draw(st.integers(0, 1)) for _ in range(nsp))}


def _out_sp(sp, kernel, stride, dilate, pad):
    return tuple((s + 2 * p - d * (k - 1) - 1) // st_ + 1 for s, k, st_, d, p in zip(sp, kernel, stride, dilate, pad))


def _im2col_ref(x, kernel, stride, dilate, pad):
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in pad))
    out = _out_sp(x.shape[2:], kernel, stride, dilate, pad)
    cols = np.zeros((x.shape[0], x.shape[1], *kernel, *out))
    for kidx in np.ndindex(*kernel):
        for oidx in np.ndindex(*out):
            src = tuple(o * s + k * d for o, s, k, d in zip(oidx, stride, kidx, dilate))
            cols[(slice(None), slice(None), *kidx, *oidx)] = xp[(slice(None), slice(None), *src)]
    return cols.reshape(x.shape[0], x.shape[1] * int(np.prod(kernel)), int(np.prod(out)))


def _col2im_ref(c, output_size, kernel, stride, dilate, pad):
    out = _out_sp(output_size, kernel, stride, dilate, pad)
    n, ck = c.shape[:2]
    ch = ck // int(np.prod(kernel))
    cols = c.reshape(n, ch, *kernel, *out)
    img = np.zeros((n, ch) + tuple(s + 2 * p for s, p in zip(output_size, pad)))
    for kidx in np.ndindex(*kernel):
        for oidx in np.ndindex(*out):
            dst = tuple(o * s + k * d for o, s, k, d in zip(oidx, stride, kidx, dilate))
            img[(slice(None), slice(None), *dst)] += cols[(slice(None), slice(None), *kidx, *oidx)]
    return img[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(pad, output_size))]


def _image(draw, attrs):
    ext = [d * (k - 1) + 1 - 2 * p for k, d, p in zip(attrs["kernel"], attrs["dilate"], attrs["pad"])]
    return (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *(max(e, 1) + draw(st.integers(0, 2)) for e in ext))


def _im2col_case(draw):
    attrs = _window(draw, draw(st.integers(1, 2)))
    return [draw(arr(_image(draw, attrs)))], attrs


def _col2im_case(draw):
    attrs = _window(draw, draw(st.integers(1, 2)))
    shape = _image(draw, attrs)
    cols = _im2col_ref(np.zeros(shape), **attrs).shape
    return [draw(arr(cols))], {"output_size": shape[2:], **attrs}


def _backward_im2col_case(draw):
    (x,), attrs = _im2col_case(draw)
    return [draw(arr(_im2col_ref(x, **attrs).shape)), x], attrs


def _histogram_case(draw):
    x = draw(arr(st.tuples(st.integers(1, 4), st.integers(1, 4)), -3.0, 3.0))
    if draw(st.booleans()):
        lo = draw(st.sampled_from([-2.5, -1.0, 0.0]))
        return [x], {"bin_cnt": draw(st.integers(1, 6)), "range": (lo, lo + draw(st.sampled_from([1.0, 2.5, 4.0])))}
    edges = np.sort(draw(arr((draw(st.integers(2, 5)),), -3.0, 3.0)))
    return [x, edges], {}


def _histogram_ref(x, bins=None, bin_cnt=None, range=None):  # noqa: A002
    edges = bins if bins is not None else np.linspace(range[0], range[1], bin_cnt + 1)
    return np.histogram(x, edges)


def _mask_case(draw):
    n = draw(st.integers(1, 5))
    data = draw(arr(st.tuples(st.just(n), st.integers(1, 3))))
    index = np.array([draw(st.sampled_from([0.0, 1.0, 2.0])) for _ in range(n)])
    return [data, index], {}


def _mask_backward_case(draw):
    (data, index), attrs = _mask_case(draw)
    return [draw(arr((int(np.count_nonzero(index)), *data.shape[1:]))), data, index], attrs


_DYN = "the output's length is the number of non-zero index entries"

SPECS = [
    OpSpec("im2col", case=_im2col_case, ref=_im2col_ref),
    OpSpec("col2im", case=_col2im_case, ref=_col2im_ref),
    OpSpec("_backward_im2col", case=_backward_im2col_case, nondiff=_HIDDEN,
           ref=lambda g, x, **kw: _col2im_ref(g, x.shape[2:], **kw)),
    OpSpec("_histogram", case=_histogram_case, ref=_histogram_ref,
           nondiff="counts are piecewise constant (MXNet has no gradient)"),
    OpSpec("_contrib_boolean_mask", case=_mask_case, ref=lambda d, i, **kw: d[i != 0], grad_inputs=(0,),
           dynamic_shape=_DYN),
    OpSpec("_backward_contrib_boolean_mask", case=_mask_backward_case, nondiff=_HIDDEN, dynamic_shape=_DYN),
]
