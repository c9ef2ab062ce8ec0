"""mx.np functions and ndarray methods added for NumPy interoperability, against NumPy and the
behaviour of real MXNet 1.9.1 (read off it with `npx.set_np()`)."""
from __future__ import annotations

import math

import numpy as onp
import pytest

import hybridgraph as mx
from hybridgraph import np


pytestmark = pytest.mark.usefixtures("np_mode")


@pytest.mark.parametrize("n, sections", [(10, 3), (10, 4), (7, 3), (3, 5), (0, 2), (6, 6)])
def test_array_split_uneven_sections(n, sections):
    x = np.arange(n)
    got = np.array_split(x, sections)
    want = onp.array_split(onp.arange(n, dtype=onp.float32), sections)
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        onp.testing.assert_array_equal(g.asnumpy(), w)


def test_array_split_indices_may_repeat_and_be_empty():
    b = np.ones((2, 10))
    assert [p.shape for p in np.array_split(b, [0, 1, 2], axis=0)] == [(0, 10), (1, 10), (1, 10), (0, 10)]
    assert [p.shape for p in np.split(b, [3, 3, 10], axis=1)] == [(2, 3), (2, 0), (2, 7), (2, 0)]


def test_split_family_errors_as_mxnet():
    with pytest.raises(ValueError, match="equal division"):
        np.split(np.arange(10), 3)
    with pytest.raises(ValueError, match="2 or more"):
        np.vsplit(np.arange(4), 2)
    with pytest.raises(ValueError, match="1 or more"):
        np.hsplit(np.array(1.), 1)
    with pytest.raises(ValueError, match="3 or more"):
        np.dsplit(np.ones((2, 2)), 2)
    with pytest.raises(ValueError, match="equal division"):   # legacy split_v2 checks too
        mx.nd.split_v2(mx.nd.arange(10), 3)
    assert [p.shape for p in np.hsplit(np.ones((2, 6)), 3)] == [(2, 2)] * 3


def test_split_v2_op_uneven_sections_like_mxnet():
    pieces = mx.nd._internal._split_v2(mx.nd.arange(10), indices=(), sections=3, axis=0)
    assert [p.shape for p in pieces] == [(4,), (3,), (3,)]


def test_concatenate_axis_none_flattens():
    a, b = np.ones((2, 2)), np.arange(3)
    out = np.concatenate([a, b], axis=None)
    onp.testing.assert_array_equal(out.asnumpy(), onp.concatenate([onp.ones((2, 2)), onp.arange(3)], axis=None))
    with pytest.raises(mx.base.MXNetError):   # mixed dtypes: MXNet's type inference refuses them too
        np.concatenate([a, np.arange(3, dtype="int32")], axis=None)


@pytest.mark.parametrize("shape, target", [((), (0,)), ((1,), (0,)), ((1, 2), (0, 2)), ((2, 1), (2, 0))])
def test_broadcast_to_zero_size(shape, target):
    out = np.broadcast_to(np.ones(shape), target)
    assert out.shape == target
    with pytest.raises(ValueError):
        np.broadcast_to(np.ones((2,)), (0,))


def test_tensordot_with_empty_axes():
    out = np.tensordot(np.ones((3, 0)), np.ones((0, 4)), (1, 0))
    onp.testing.assert_array_equal(out.asnumpy(), onp.zeros((3, 4)))


def test_clip_integer_bounds_outside_the_dtype():
    x = onp.array([1, 200, 50], dtype=onp.uint8)
    got = np.clip(np.array(x, dtype="uint8"), -120, 100)
    assert got.dtype == onp.uint8
    onp.testing.assert_array_equal(got.asnumpy(), [1, 100, 50])


def test_unravel_index():
    got = np.unravel_index(np.array([22, 41, 37], dtype="int32"), (7, 6))
    assert isinstance(got, tuple) and all(g.dtype == onp.int32 for g in got)
    for g, w in zip(got, onp.unravel_index([22, 41, 37], (7, 6))):
        onp.testing.assert_array_equal(g.asnumpy(), w)
    assert np.unravel_index(5, (7, 6)) == (0, 5)
    two_d = np.unravel_index(np.array([[22, 41], [37, 1]], dtype="int64"), (7, 6))
    assert two_d[0].shape == (2, 2)
    with pytest.raises(TypeError, match="integer"):
        np.unravel_index(np.array([1.0]), (7, 6))
    with pytest.raises(ValueError):
        np.unravel_index(np.array([50], dtype="int64"), (7, 6))
    with pytest.raises(NotImplementedError):
        np.unravel_index(np.array([1], dtype="int64"), (7, 6), order="F")


def test_aliases_and_all_any_methods():
    x = np.array([[0., 1.], [0., 0.]])
    assert np.sometrue(x).item() is True and np.product(np.array([2., 3.])).item() == 6.0
    onp.testing.assert_array_equal(x.any(axis=1).asnumpy(), [True, False])
    onp.testing.assert_array_equal(x.all(axis=0, keepdims=True).asnumpy(), [[False, False]])
    out = np.zeros((), dtype="bool")
    assert np.any(x, out=out) is out and bool(out)


def test_round_floor_ceil_trunc_give_arrays():
    a, s = np.array([1.5, -2.5]), np.array(2.7)
    onp.testing.assert_array_equal(round(a).asnumpy(), [2., -2.])   # half to even
    assert isinstance(round(s, 0), np.ndarray) and round(s, 0).item() == 3.0
    assert math.floor(s).item() == 2.0 and math.ceil(s).item() == 3.0
    onp.testing.assert_array_equal(math.trunc(a).asnumpy(), [1., -2.])
