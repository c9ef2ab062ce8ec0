"""mx.np / mx.npx front end: the ndarray type, dtype rules, indexing, autograd, functions.

Expected dtypes and shapes were read off real MXNet 1.9.1 with `npx.set_np()`.
"""
from __future__ import annotations

import numpy as onp
import pytest

import hybridgraph as mx
from hybridgraph import autograd, np, npx


@pytest.fixture(autouse=True)
def _np_mode():
    npx.set_np()
    yield
    npx.reset_np()


def test_import_paths_and_mode():
    import hybridgraph.numpy as np2  # noqa: PLC0415
    from hybridgraph.util import is_np_array  # noqa: PLC0415
    assert np2 is np and is_np_array() and npx.is_np_array() and npx.is_np_shape()
    npx.reset_np()
    assert not npx.is_np_array()
    with mx.util.np_array(True):
        assert npx.is_np_array()
    with pytest.raises(ValueError):
        npx.set_np(shape=False, array=True)


@pytest.mark.parametrize("lhs,rhs,want", [
    ("int32", "float32", "float32"), ("int32", "float64", "float64"), ("int32", "int64", "int64"),
    ("uint8", "int8", "int32"), ("bool", "bool", "bool"), ("float32", "float64", "float64"),
    ("bool", "int32", "int32"), ("float32", "float32", "float32"),
])
def test_binary_type_promotion(lhs, rhs, want):
    a = np.array([1, 0, 1], dtype=lhs)
    b = np.array([1, 1, 0], dtype=rhs)
    assert (a + b).dtype == onp.dtype(want)
    assert (a * b).dtype == onp.dtype(want)


def test_scalar_and_unary_dtypes():
    i = np.array([1, 2, 3], dtype="int32")
    b = np.array(onp.array([True, False, True]))
    assert (i / i).dtype == onp.float32
    assert (i * 2.5).dtype == onp.int32 and (i + 1).dtype == onp.int32
    assert (b + 1).dtype == onp.float32
    assert np.exp(i).dtype == onp.int32
    assert np.sum(i).dtype == onp.int32 and np.sum(i).shape == ()
    assert np.sum(b).dtype == onp.float32
    assert np.mean(i).dtype == onp.float32 and np.mean(i).item() == 2.0
    assert np.argmax(np.array([1.0, 3.0, 2.0])).dtype == onp.int64
    assert (np.array([1.0, 2.0]) == 1).dtype == onp.bool_


def test_creation_defaults():
    assert np.array([1, 2]).dtype == onp.float32
    assert np.array([True, False]).dtype == onp.float32   # Python bools become float32 (MXNet)
    assert np.array(onp.arange(3)).dtype == onp.int64     # numpy arrays keep their dtype
    assert np.arange(5).dtype == onp.float32
    assert np.full((2,), 3).dtype == onp.float32
    assert np.zeros((2, 3)).shape == (2, 3) and np.eye(3).shape == (3, 3)
    assert np.linspace(0, 1, 5).shape == (5,)
    z = np.array(3.0)
    assert z.shape == () and (z + 1).item() == 4.0
    assert np.ones((0, 3)).sum(axis=0).shape == (3,)


def test_repr_and_conversion():
    assert repr(np.array([1, 2, 3], dtype="int32")) == "array([1, 2, 3], dtype=int32)"
    assert repr(np.array([1.0, 2.0])) == "array([1., 2.])"
    assert repr(np.array([1.0, 2.0], dtype="float64")) == "array([1., 2.], dtype=float64)"
    x = np.array([[1.0, 2.0]])
    nd_x = x.as_nd_ndarray()
    assert type(nd_x) is mx.nd.NDArray and nd_x._data is x._data
    back = nd_x.as_np_ndarray()
    assert isinstance(back, np.ndarray) and back._data is x._data
    assert x[0, 1].item() == 2.0 and isinstance(x[0, 1].item(), float)
    assert x.ctx == mx.cpu() and x.context == mx.cpu()


def test_indexing_numpy_semantics():
    f = np.array([1.0, 2.0, 3.0])
    assert f[0].shape == ()
    mask = np.array(onp.array([True, False, True]))
    assert f[mask].asnumpy().tolist() == [1.0, 3.0]
    assert f[[0, 2]].shape == (2,)
    m = np.arange(12).reshape(3, 4)
    assert m[None].shape == (1, 3, 4) and m[1, ::2].asnumpy().tolist() == [4.0, 6.0]
    m[m > 5] = 0
    assert m.asnumpy().max() == 5
    m[0] = np.array([9.0, 9, 9, 9])
    assert m[0].asnumpy().tolist() == [9.0] * 4


def test_operands_mxnet_refuses():
    with pytest.raises(TypeError):
        _ = np.ones(3) + onp.ones(3)


def test_autograd_through_np_ops():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with autograd.record():
        y = (x * x + 2 * x).sum()
        z = x[0].sum() + np.dot(x, x).mean()
    y.backward()
    assert isinstance(x.grad, np.ndarray)
    onp.testing.assert_allclose(x.grad.asnumpy(), 2 * x.asnumpy() + 2)
    z.backward()
    xn = x.asnumpy()
    want = onp.array([[1.0, 1.0], [0.0, 0.0]]) + (onp.ones((2, 2)) @ xn.T + xn.T @ onp.ones((2, 2))) / 4
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6)


def test_inplace_and_recorded_indexing():
    a = np.ones((2, 2))
    a += 1
    a *= np.array([1.0, 2.0])
    assert a.asnumpy().tolist() == [[2.0, 4.0], [2.0, 4.0]]
    x = np.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x[1] * 3 + x[np.array([0, 2], dtype="int32")].sum()
    y.backward()
    assert x.grad.asnumpy().tolist() == [1.0, 3.0, 1.0]


def test_functions():
    a = np.arange(6).reshape(2, 3)
    assert np.concatenate([a, a], axis=0).shape == (4, 3)
    assert np.stack([a, a]).shape == (2, 2, 3)
    assert [p.shape for p in np.split(a, 3, axis=1)] == [(2, 1)] * 3
    assert np.where(a > 2, a, np.zeros_like(a)).asnumpy().tolist() == [[0, 0, 0], [3, 4, 5]]
    assert np.clip(a, 1, 3).asnumpy().max() == 3
    assert np.matmul(a, a.T).shape == (2, 2) and np.tensordot(a, a, ([1], [1])).shape == (2, 2)
    onp.testing.assert_allclose(np.linalg.norm(a).item(), onp.linalg.norm(a.asnumpy()), rtol=1e-6)
    onp.testing.assert_allclose(np.std(a).item(), a.asnumpy().std(), rtol=1e-6)
    assert np.expand_dims(a, 0).shape == (1, 2, 3) and np.squeeze(np.ones((1, 3, 1))).shape == (3,)
    assert np.broadcast_to(np.ones(3), (2, 3)).shape == (2, 3)
    assert np.maximum(a, 2).asnumpy().min() == 2 and np.exp(0.0) == 1.0


def test_random_signatures():
    mx.random.seed(7)
    u = np.random.uniform(0, 1, size=(2, 3), ctx=mx.cpu())
    assert u.shape == (2, 3) and u.dtype == onp.float32 and 0 <= u.asnumpy().min() <= u.asnumpy().max() < 1
    mx.random.seed(7)
    assert (np.random.uniform(0, 1, size=(2, 3)).asnumpy() == u.asnumpy()).all()
    n = np.random.normal(0, 1, (1000,), device=mx.cpu())
    assert abs(float(n.mean().item())) < 0.2
    r = np.random.randint(0, 5, (3,))
    assert r.dtype == onp.int64 and r.asnumpy().max() < 5
    out = np.zeros((4,))
    np.random.uniform(size=(4,), out=out)
    assert out.asnumpy().max() > 0
    loc = np.zeros((3,))
    assert np.random.normal(loc, 1.0).shape == (3,)


def test_npx_ops():
    x = np.array([[-1.0, 2.0], [3.0, -4.0]])
    assert isinstance(npx.relu(x), np.ndarray) and npx.relu(x).asnumpy().min() == 0
    onp.testing.assert_allclose(npx.softmax(x).asnumpy().sum(axis=-1), [1.0, 1.0], rtol=1e-6)
    assert npx.pick(x, np.array([1.0, 0.0])).asnumpy().tolist() == [2.0, 3.0]
    assert npx.one_hot(np.array([0.0, 2.0]), 3).shape == (2, 3)
    assert npx.reshape(np.ones((2, 3, 4)), (-5, -4)).shape == (6, 4)
    assert npx.reshape(np.ones((2, 3, 4)), (-2, -6, 3, 1, -4)).shape == (2, 3, 1, 4)
    assert npx.reshape(np.ones((1, 3)), (-3, -2)).shape == (3,)
    w = np.ones((5, 2))
    assert npx.fully_connected(x, w, None, num_hidden=5, no_bias=True).shape == (2, 5)
    assert npx.activation(x, act_type="tanh").shape == (2, 2)
    assert npx.batch_dot(np.ones((2, 3, 4)), np.ones((2, 4, 5))).shape == (2, 3, 5)


def test_npx_save_load(tmp_path):
    path = str(tmp_path / "arrs")
    npx.save(path, {"a": np.arange(3)})
    got = npx.load(path)
    assert isinstance(got["a"], np.ndarray) and got["a"].asnumpy().tolist() == [0.0, 1.0, 2.0]


def test_boolean_mask_recorded_and_inplace_rules():
    x = np.arange(24).reshape(2, 3, 4)
    x.attach_grad()
    mask_np = onp.array([[True, False, True], [False, False, True]])
    with autograd.record():
        y = x[np.array(mask_np)].sum()
    y.backward()
    onp.testing.assert_array_equal(x.grad.asnumpy()[..., 0], mask_np.astype(onp.float32))
    with autograd.record():
        with pytest.raises(mx.MXNetError, match="Inplace operations"):
            x[0] = np.zeros((3, 4))


def test_order_format_and_multinomial():
    with pytest.raises(NotImplementedError):
        np.zeros((2,), order="F")
    with pytest.raises(NotImplementedError):
        np.ones(2).copy(order="F")
    assert "{:0.3g}".format(np.array(onp.pi)) == "3.14"  # noqa: UP032 - str.format is what is tested
    assert "{}".format(np.array([1.0, 2.0])) == "[1. 2.]"  # noqa: UP032
    with pytest.raises(TypeError):
        "{:30}".format(np.array([1.0]))  # noqa: UP032
    counts = np.random.multinomial(100, np.array([0.1, 0.2, 0.3, 0.4]), size=(2,))
    assert counts.shape == (2, 4) and counts.dtype == onp.int64 and (counts.asnumpy().sum(axis=1) == 100).all()


def test_use_np_on_a_block_class():
    npx.reset_np()

    @npx.use_np
    class Block(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = self.params.get("w", shape=(3, 2))

        def hybrid_forward(self, F, x, w):  # noqa: N803
            return F.np.dot(x, w)

    net = Block()
    net.initialize()          # inherited, wrapped too: the parameters are np arrays
    assert isinstance(net.w.data(), np.ndarray) and not npx.is_np_array()
    assert isinstance(net(np.ones((4, 3))), np.ndarray)


def test_d2l_cross_entropy_indexing_records():
    """d2l's `-np.log(y_hat[range(len(y_hat)), y])` differentiates (gather_nd while recording)."""
    y_hat = np.array([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    y = np.array([0, 2], dtype="int32")
    y_hat.attach_grad()
    with autograd.record():
        loss = -np.log(y_hat[range(len(y_hat)), y]).sum()
    loss.backward()
    onp.testing.assert_allclose(loss.item(), -onp.log(0.1) - onp.log(0.5), rtol=1e-6)
    onp.testing.assert_allclose(y_hat.grad.asnumpy(), [[-10.0, 0, 0], [0, 0, -2.0]], rtol=1e-5)


def test_flip_move_round_diag_functions():
    a = np.arange(6).reshape(2, 3)
    assert np.flipud(a).asnumpy().tolist() == onp.flipud(a.asnumpy()).tolist()
    assert np.fliplr(a).asnumpy().tolist() == onp.fliplr(a.asnumpy()).tolist()
    assert np.moveaxis(np.ones((2, 3, 4)), 0, -1).shape == (3, 4, 2)
    assert np.moveaxis(np.ones((2, 3, 4)), [0, 1], [-1, -2]).shape == onp.moveaxis(onp.ones((2, 3, 4)),
                                                                                [0, 1], [-1, -2]).shape
    assert np.around(np.array([0.5, 1.5, 2.675]), 0).asnumpy().tolist() == [0.0, 2.0, 3.0]
    assert np.round(np.array([1.234]), 2).item() == pytest.approx(1.23)
    assert np.diag(np.array([1.0, 2.0])).asnumpy().tolist() == [[1.0, 0.0], [0.0, 2.0]]
    assert np.trace(np.arange(9).reshape(3, 3)).item() == 12.0
    assert np.shares_memory(a, a) and not np.may_share_memory(a, a.copy())


def test_zero_size_arrays_hybridize_and_differentiate():
    """numpy's empty dimensions are real sizes for the np operators, also in a compiled graph."""
    class Block(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, y):  # noqa: N803
            return (F.np.flipud(x) + y).reshape(0, 3) * 2 + F.np.squeeze(x.reshape(3, 1, 0)).T.sum()

    for hybridize in (False, True):
        net = Block()
        if hybridize:
            net.hybridize()
        x, y = np.ones((3, 0)), np.ones((1, 0))
        x.attach_grad()
        with autograd.record():
            out = net(x, y)
        out.backward()
        assert out.shape == (0, 3) and x.grad.shape == (3, 0)


def test_small_function_edges():
    assert np.linspace(0, 1, 5, retstep=True)[1] == 0.25
    assert np.clip(3.0, 0, 1) == 1.0
    assert np.tile(np.ones((2,)), (3, 0)).shape == (3, 0)
    assert npx.slice(np.arange(10), (1,), (8,), (2,)).asnumpy().tolist() == [1.0, 3.0, 5.0, 7.0]
    assert npx.slice(np.arange(10), (1,), (3,)).asnumpy().tolist() == [1.0, 2.0]


def test_ufunc_keywords_and_seed():
    x = np.ones((2,))
    assert np.exp(x, where=True, casting="same_kind").shape == (2,)
    for kwargs in ({"where": False}, {"dtype": onp.int8}, {"order": "C"}, {"subok": False}):
        with pytest.raises(NotImplementedError):
            np.exp(x, **kwargs)
        with pytest.raises(NotImplementedError):
            np.add(x, x, **kwargs)
    with pytest.raises(TypeError):
        np.add(x, x, bogus=1)
    npx.random.seed(seed=5)
    a = np.random.uniform(size=(3,))
    npx.random.seed(seed=5)
    assert (np.random.uniform(size=(3,)).asnumpy() == a.asnumpy()).all()


def test_bool_predicates_out_and_dtype_errors():
    x = np.array([1.0, onp.nan, onp.inf, -onp.inf])
    assert np.isnan(x).asnumpy().tolist() == [False, True, False, False]
    assert np.isfinite(x).asnumpy().tolist() == [True, False, False, False]
    assert np.isposinf(x).asnumpy().tolist() == [False, False, True, False]
    out = np.zeros((4,), dtype="bool")
    assert np.isinf(x, out) is out and out.asnumpy().tolist() == [False, False, True, True]
    with pytest.raises(TypeError):
        np.isnan(x, out=np.zeros((4,)))
    with pytest.raises(TypeError):
        np.isnan(x, dtype="abcdefg")


def test_roll_cumsum_diff_hybridize_and_differentiate():
    class Block(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):  # noqa: N803
            return F.np.roll(x, 1, axis=1).sum() + x.cumsum(axis=0).sum() + F.np.diff(x, n=2).sum()

    xn = onp.arange(12, dtype=onp.float32).reshape(3, 4) ** 2
    want = onp.roll(xn, 1, axis=1).sum() + xn.cumsum(axis=0).sum() + onp.diff(xn, n=2).sum()
    grads = []
    for hybridize in (False, True):
        net = Block()
        if hybridize:
            net.hybridize()
        x = np.array(xn)
        x.attach_grad()
        with autograd.record():
            out = net(x)
        out.backward()
        assert out.item() == pytest.approx(float(want))
        grads.append(x.grad.asnumpy())
    onp.testing.assert_allclose(grads[0], grads[1])
    assert np.cumsum(np.array([True, False])).dtype == onp.float32 and np.cumsum(np.ones((2, 2))).shape == (4,)


def test_tril_of_a_vector_differentiates():
    x = np.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = np.tril(x, -1)
    y.backward()
    onp.testing.assert_array_equal(y.asnumpy(), onp.tril(x.asnumpy(), -1))
    onp.testing.assert_array_equal(x.grad.asnumpy(), onp.tril(onp.ones((3, 3)), -1).sum(axis=0))


def test_np_dtype_is_a_numpy_dtype_and_nd_dtype_a_scalar_type():
    """MXNet 1.9.1: mx.np.ones(2).dtype is dtype('float32'); mx.nd.ones(2).dtype is numpy.float32."""
    x = np.ones(2)
    assert isinstance(x.dtype, onp.dtype) and x.dtype == onp.float32 and x.dtype.itemsize == 4
    assert x.astype("int32").dtype == onp.dtype("int32")
    assert x.as_nd_ndarray().dtype is onp.float32
