"""Shape manipulation in mx.np: split / array_split (MXNet's `_split_v2` rules), the stacking
operators, append, concatenate with empty dimensions, 0-d squeeze / argmax; eagerly and
hybridized (expected behaviour read off real MXNet 1.9.1)."""
from __future__ import annotations

import numpy as onp
import pytest

import hybridgraph as mx
from hybridgraph import autograd, np, npx
from hybridgraph.nd.errors import MXNetError, ShapeError

from .fn_block import FnBlock as _Fn


pytestmark = pytest.mark.usefixtures("np_mode")


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("fn,shape,arg", [
    ("hsplit", (10,), (2, 4)), ("hsplit", (3, 8, 5), (3, 3)), ("hsplit", (3, 0, 5), 2),
    ("vsplit", (0, 3), 2), ("dsplit", (2, 4, 6), (3, 3)), ("split", (0,), [1]), ("array_split", (7,), 3),
    ("split", (6,), 1),
])
def test_splits_match_numpy(hybridize, fn, shape, arg):
    x_np = onp.arange(float(onp.prod(shape))).reshape(shape)
    want = getattr(onp, fn)(x_np, arg)
    net = _Fn(lambda F, a: getattr(F.np, fn)(a, arg))
    if hybridize:
        net.hybridize()
    x = np.array(x_np)
    x.attach_grad()
    with autograd.record():
        got = net(x)
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        onp.testing.assert_array_equal(g.asnumpy(), w)
    autograd.backward(got)
    onp.testing.assert_array_equal(x.grad.asnumpy(), onp.ones(shape))


def test_split_rules():
    with pytest.raises(ValueError, match="equal division"):
        np.split(np.ones((7,)), 3)
    with pytest.raises(ShapeError, match="must not decrease"):
        np.split(np.ones((7,)), [4, 2])


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("fn,shapes", [
    ("hstack", [(), ()]), ("hstack", [(2,), (3,)]), ("hstack", [(2, 1), (2, 3)]),
    ("vstack", [(), ()]), ("vstack", [(3,), (2, 3)]), ("dstack", [(), (1,)]), ("dstack", [(2, 0, 1), (2, 0, 3)]),
    ("column_stack", [(3,), (3, 2)]), ("column_stack", [(), ()]),
])
def test_stacking_matches_numpy_with_gradients(hybridize, fn, shapes):
    xs_np = [onp.random.default_rng(i).standard_normal(s) for i, s in enumerate(shapes)]
    want = getattr(onp, fn)(xs_np)
    net = _Fn(lambda F, *a: getattr(F.np, fn)(list(a)))
    if hybridize:
        net.hybridize()
    xs = [np.array(x, dtype="float64") for x in xs_np]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        out = net(*xs)
    out.backward(np.array(onp.arange(float(want.size)).reshape(want.shape)))
    onp.testing.assert_allclose(out.asnumpy(), want)
    g = onp.arange(float(want.size)).reshape(want.shape)
    lifted = [getattr(onp, fn)([x]) for x in xs_np]
    axis = {"vstack": 0, "dstack": 2, "column_stack": 1}.get(fn, 0 if want.ndim == 1 else 1)
    pieces = onp.split(g, onp.cumsum([p.shape[axis] for p in lifted])[:-1], axis=axis)
    for x, p, x_np in zip(xs, pieces, xs_np):
        onp.testing.assert_allclose(x.grad.asnumpy(), p.reshape(x_np.shape))


def test_append_flattens_without_axis_and_differentiates():
    a, b = np.ones((2, 3)), np.ones((4,))
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = np.append(a, b)
    y.backward(np.arange(10.0))
    assert y.shape == (10,)
    onp.testing.assert_array_equal(a.grad.asnumpy(), onp.arange(6.0).reshape(2, 3))
    onp.testing.assert_array_equal(b.grad.asnumpy(), onp.arange(6.0, 10.0))


def test_concatenate_empty_dimensions_are_real_sizes_when_hybridized():
    net = _Fn(lambda F, a, b: F.np.concatenate([a, b], axis=1))
    net.hybridize()
    a, b = np.ones((2, 0)), np.ones((2, 1))
    a.attach_grad()
    with autograd.record():
        y = net(a, b)
    y.backward()
    assert y.shape == (2, 1) and a.grad.shape == (2, 0)
    with pytest.raises(ShapeError, match="zero-dimensional"):
        np.concatenate([np.array(1.0), np.array(2.0)])


def test_zero_dim_squeeze_and_argmax_take_axis_0_or_minus_1():
    x = np.array(3.0)
    assert np.squeeze(x, -1).shape == () and np.squeeze(x, 0).shape == ()
    assert int(np.argmax(x, axis=-1)) == 0 and int(np.argmin(x, axis=0)) == 0
    with pytest.raises(MXNetError):
        np.argmax(x, axis=1)
    with pytest.raises(MXNetError):
        np.argmax(np.ones((5, 0, 3)), axis=1)
    assert np.argmax(np.ones((5, 0, 3)), axis=0).shape == (0, 3)


def test_legacy_random_draws_a_0d_sample_under_numpy_shape():
    assert mx.nd.random.uniform(shape=()).shape == ()
    npx.reset_np()
    assert mx.nd.random.uniform(shape=(2,)).shape == (2,)


@pytest.mark.parametrize("hybridize", [False, True])
def test_diagonals_follow_numpy_beyond_the_matrix(hybridize):
    x_np = onp.arange(10.0).reshape(2, 5)
    for fn, args, want in [("diag", (-6,), onp.diag(x_np, -6)), ("diag", (2,), onp.diag(x_np, 2)),
                           ("diagonal", (1, 1, 0), onp.diagonal(x_np, 1, 1, 0)),
                           ("diagflat", (1,), onp.diagflat(x_np, 1))]:
        net = _Fn(lambda F, a, fn=fn, args=args: getattr(F.np, fn)(a, *args))
        if hybridize:
            net.hybridize()
        x = np.array(x_np)
        x.attach_grad()
        with autograd.record():
            y = net(x)
        y.backward(np.ones(want.shape))
        onp.testing.assert_array_equal(y.asnumpy(), want)
        mask = onp.zeros(x_np.size)   # the gradient of a selection is its indicator
        for i in range(x_np.size):
            e = onp.zeros(x_np.size)
            e[i] = 1
            mask[i] = getattr(onp, fn)(e.reshape(x_np.shape), *args).sum()
        onp.testing.assert_array_equal(x.grad.asnumpy(), mask.reshape(x_np.shape))


def test_eye_with_zero_columns_and_diag_indices():
    assert np.eye(4, 0).shape == (4, 0) and np.eye(3, None, 1).shape == (3, 3)
    with pytest.raises(MXNetError):
        np.eye(-1)
    rows, cols = np.diag_indices_from(np.ones((3, 3)))
    assert rows.asnumpy().tolist() == [0, 1, 2] == cols.asnumpy().tolist()


def test_reflected_scalar_arithmetic_on_integer_arrays():
    a = np.array([1, 2], dtype="int32")
    assert (5 - a).asnumpy().tolist() == [4, 3]
    assert (5 / a).asnumpy().tolist() == [5.0, 2.5] and (5 / a).dtype == onp.float32
    assert (2 ** a).asnumpy().tolist() == [2, 4] and (7 % a).asnumpy().tolist() == [0, 1]


def test_where_with_traced_arrays_and_broadcast_to_with_empty_axes():
    net = _Fn(lambda F, c, x, y: F.np.where(c, x, y))
    net.hybridize()
    got = net(np.array([1.0, 0.0]), np.ones((2, 2)), np.zeros((2,)))
    onp.testing.assert_array_equal(got.asnumpy(), [[1, 0], [1, 0]])
    net = _Fn(lambda F, a: F.np.broadcast_to(a, (2, 4, 0)))
    net.hybridize()
    x = np.ones((4, 1))
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward()
    assert y.shape == (2, 4, 0) and x.grad.asnumpy().tolist() == [[0.0]] * 4


def test_full_and_take_with_traced_arrays():
    net = _Fn(lambda F, v: F.np.full((2, 3), v, dtype="int32"))
    net.hybridize()
    out = net(np.array([1.0, 2.0, 3.0]))
    assert out.dtype == onp.int32 and out.asnumpy().tolist() == [[1, 2, 3]] * 2
    net = _Fn(lambda F, a, i: F.np.take(a, i, axis=1))
    net.hybridize()
    got = net(np.arange(6.0).reshape(2, 3), np.array([2, 0], dtype="int64"))
    assert got.asnumpy().tolist() == [[2.0, 0.0], [5.0, 3.0]]


def test_npx_reshape_reverse_reads_codes_right_to_left_and_softmax_of_empty():
    x = np.ones((8, 5, 4, 6))
    assert npx.reshape(x, (-4, -1, 3, -6), reverse=True).shape == (8, 5, 4, 2, 3)
    assert npx.reshape(np.ones((64, 1, 2, 3)), (-6, 16, -1, -4)).shape == (16, 4, 1, 2, 3)
    net = _Fn(lambda F, a: F.npx.softmax(a, axis=-1))
    net.hybridize()
    assert net(np.ones((3, 0, 4))).shape == (3, 0, 4)


def test_bool_arithmetic_stays_bool_as_mxnet():
    a, b = np.array([1, 0, 1], dtype="bool"), np.array([1, 1, 0], dtype="bool")
    assert (a + b).dtype == onp.bool_ and (a + b).asnumpy().tolist() == [True, True, True]
    assert (a * b).asnumpy().tolist() == [True, False, False]
    assert np.power(a, b).asnumpy().tolist() == [True, False, True]
    assert np.true_divide(a, np.array([1, 1, 1], dtype="bool")).dtype == onp.float32
