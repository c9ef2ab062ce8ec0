"""contrib.allclose against MXNet 1.9.1 (tests/data/allclose_ref.npz from
tests/data/gen_allclose_ref.py): results, the 0-d uint8 output, NaN handling."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd

REF = np.load(pathlib.Path(__file__).parent.parent / "data" / "allclose_ref.npz")


@pytest.mark.parametrize("i", range(9))
def test_matches_mxnet(i):
    a, b = REF[f"{i}_a"], REF[f"{i}_b"]
    out = nd.contrib.allclose(nd.array(a, dtype=a.dtype), nd.array(b, dtype=b.dtype), rtol=1e-4, atol=1e-6)
    assert out.shape == () and out.dtype == np.uint8
    assert out.asnumpy() == REF[f"{i}_res"]


def test_nan_and_symbol():
    x = nd.array([1.0, np.nan])
    assert nd.contrib.allclose(x, x).asnumpy() == 1
    assert nd.contrib.allclose(x, x, equal_nan=False).asnumpy() == 0
    sym = mx.sym.contrib.allclose(mx.sym.var("a"), mx.sym.var("b"))
    assert sym.infer_shape(a=(2, 3))[1] == [()]
