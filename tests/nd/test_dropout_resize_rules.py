"""Dropout at p=1 and on integers, and BilinearResize2D's scaled sizes, as MXNet 1.9.1
computes them (each checked in .mxvenv)."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import autograd, nd
from hybridgraph.nd.errors import MXNetError


def test_dropout_of_everything_is_nan_as_in_mxnet():
    """MXNet scales the all-zero mask by 1/(1-p) = inf: 0 * inf is NaN, values and gradient."""
    x = nd.ones((2, 3))
    assert np.isnan(nd.Dropout(x, p=1.0, mode="always").asnumpy()).all()
    x.attach_grad()
    with autograd.record():
        y = nd.Dropout(x, p=1.0)
    y.backward()
    assert np.isnan(x.grad.asnumpy()).all()


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
def test_dropout_refuses_integers(p):
    with pytest.raises(MXNetError, match="only support floating point types, not int32"):
        nd.Dropout(nd.array([[1, 2]], dtype="int32"), p=p, mode="always")


@pytest.mark.parametrize("size,scale,want", [(10, 0.7, 7), (10, 0.3, 3), (20, 0.35, 7), (9, 1.7, 15)])
def test_bilinear_resize_scales_in_float32(size, scale, want):
    """int(float32(scale) * size): 0.7 * 10 gives 7 (6.99999988 in float64 arithmetic)."""
    out = nd.contrib.BilinearResize2D(nd.ones((1, 1, size, size)), scale_height=scale, scale_width=scale)
    assert out.shape == (1, 1, want, want)
