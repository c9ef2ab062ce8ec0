"""Memoised attribute parsing keeps the type and the sign of zero of every value (issue 13,
item 4): `-0.0 == 0.0` and `1 == 1.0 == True` in Python, yet they are different attributes."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.nd.dispatch import typed_key


def _signs(x):
    return np.signbit(x.asnumpy()).tolist()


def test_negative_zero_scalar_after_positive_zero():
    a = mx.nd.array([1.0, -2.0])
    assert _signs(a * 0.0) == [False, True]
    assert _signs(a * -0.0) == [True, False]
    assert _signs(a * 0.0) == [False, True]


def test_negative_zero_attribute_after_positive_zero():
    a = mx.nd.array([1.0, -2.0])
    assert _signs(mx.nd.clip(a, 0.0, 0.0)) == [False, False]
    assert _signs(mx.nd.clip(a, -0.0, -0.0)) == [True, True]
    assert _signs(mx.nd.maximum(a, 0.0)) == [False, False]
    assert _signs(mx.nd.maximum(a, -0.0)) == [False, True]


@pytest.mark.parametrize("a, b", [(1, 1.0), (1, True), (1.0, True), (0.0, -0.0), (np.float32(0), np.float32(-0.0)),
                                  ((1, 2), (1.0, 2)), ((0.0,), (-0.0,)), (1.0, np.float32(1))])
def test_typed_key_separates_equal_values(a, b):
    assert a == b
    assert typed_key(a) != typed_key(b)
    assert typed_key(a) == typed_key(a)


def test_bool_scalar_operand_is_a_number_as_in_mxnet():
    b = mx.nd.array([1, 2], dtype="int32")
    assert (b * True).asnumpy().tolist() == [1, 2]
    assert (b + 1.5).asnumpy().tolist() == [2, 3]   # MXNet casts the scalar to the array's type
