"""`mx.np.linalg` and the tensor products: MXNet 1.9.1's results, shape/dtype rules and
gradients, eagerly and hybridized (expected values read off real MXNet 1.9.1)."""
from __future__ import annotations

import numpy as onp
import pytest

import hybridgraph as mx
from hybridgraph import autograd, np
from hybridgraph.nd.errors import DTypeError, MXNetError, ShapeError

from .fn_block import FnBlock as _Fn


pytestmark = pytest.mark.usefixtures("np_mode")


def _both(fn, *xs):
    """fn's results eagerly and hybridized (numpy arrays)."""
    eager = fn(mx, *xs)
    net = _Fn(fn)
    net.hybridize()
    hyb = net(*xs)
    as_list = lambda r: [r] if not isinstance(r, (list, tuple)) else list(r)  # noqa: E731
    return [r.asnumpy() for r in as_list(eager)], [r.asnumpy() for r in as_list(hyb)]


def _spd(n, batch=(), seed=0):
    rng = onp.random.default_rng(seed)
    q = onp.linalg.qr(rng.standard_normal(batch + (n, n)))[0]
    d = rng.uniform(1, 3, batch + (n,))
    return onp.matmul(q * d[..., None, :], onp.swapaxes(q, -1, -2))


def test_cholesky_value_and_symmetric_gradient():
    a_np = _spd(4, (2,))
    a = np.array(a_np, dtype="float64")
    a.attach_grad()
    with autograd.record():
        L = np.linalg.cholesky(a)
    L.backward()
    onp.testing.assert_allclose(L.asnumpy(), onp.linalg.cholesky(a_np), rtol=1e-10)
    # a symmetric perturbation: the directional derivative of sum(L) equals <grad, d>
    d = onp.random.default_rng(1).standard_normal(a_np.shape)
    d = d + onp.swapaxes(d, -1, -2)
    eps = 1e-6
    fd = (onp.linalg.cholesky(a_np + eps * d).sum() - onp.linalg.cholesky(a_np - eps * d).sum()) / (2 * eps)
    g = a.grad.asnumpy()
    onp.testing.assert_allclose(g, onp.swapaxes(g, -1, -2), atol=1e-12)
    assert abs((g * d).sum() - fd) < 1e-5


def test_cholesky_upper_attribute():
    a_np = _spd(3)
    u = mx.nd.numpy.multiarray.call("_npi_cholesky", [np.array(a_np, dtype="float64")], {"lower": False})
    onp.testing.assert_allclose(u.asnumpy(), onp.linalg.cholesky(a_np).T, rtol=1e-10)


def test_svd_reconstructs_and_its_gradient_matches_finite_differences():
    rng = onp.random.default_rng(0)
    a_np = rng.standard_normal((2, 3, 5))
    a = np.array(a_np, dtype="float64")
    a.attach_grad()
    with autograd.record():
        ut, s, v = np.linalg.svd(a)
        loss = (s * s).sum() + (ut[..., 0] ** 2).sum() + s.max(axis=-1).sum()
    loss.backward()
    assert ut.shape == (2, 3, 3) and s.shape == (2, 3) and v.shape == (2, 3, 5)
    onp.testing.assert_allclose(onp.matmul(ut.asnumpy() * s.asnumpy()[..., None, :], v.asnumpy()), a_np,
                                atol=1e-10)
    # d(sum s^2)/dA = 2A; d(max s)/dA = u1 v1^T; the |u|^2 term is constant
    u0 = ut.asnumpy()[..., :, 0]
    v0 = v.asnumpy()[..., 0, :]
    want = 2 * a_np + u0[..., :, None] * v0[..., None, :]
    onp.testing.assert_allclose(a.grad.asnumpy(), want, atol=1e-8)


def test_svd_rejects_tall_matrices_as_mxnet():
    with pytest.raises(ShapeError, match="second to last"):
        np.linalg.svd(np.ones((5, 3)))


def test_eig_family():
    a_np = onp.array([[2.0, 1.0], [1.0, 3.0]])
    w, v = np.linalg.eig(np.array(a_np, dtype="float32"))
    assert w.dtype == onp.float32 and v.shape == (2, 2)
    onp.testing.assert_allclose(a_np @ v.asnumpy(), v.asnumpy() * w.asnumpy(), atol=1e-5)
    w, v = np.linalg.eigh(np.array(a_np, dtype="int32"))    # integers give float64, as MXNet
    assert w.dtype == onp.float64 and v.dtype == onp.float64
    onp.testing.assert_allclose(w.asnumpy(), [1.381966, 3.618034], rtol=1e-6)
    assert np.linalg.eigvalsh(np.array([[2.0, 1.0], [4.0, 3.0]]), UPLO="U").asnumpy() == pytest.approx(
        onp.linalg.eigvalsh(onp.array([[2.0, 1.0], [4.0, 3.0]]), UPLO="U"), rel=1e-6)
    with pytest.raises(MXNetError, match="complex"):
        np.linalg.eigvals(np.array([[0.0, 1.0], [-1.0, 0.0]])).asnumpy()
    with pytest.raises(DTypeError):
        np.linalg.eigh(np.ones((2, 3, 3), dtype="float16"))


def test_eig_and_pinv_have_zero_gradients_as_mxnet():
    a = np.array(_spd(3), dtype="float64")
    a.attach_grad()
    with autograd.record():
        w, v = np.linalg.eigh(a)
        y = w.sum() + np.linalg.pinv(a).sum()
    y.backward()
    assert not a.grad.asnumpy().any()


def test_pinv_scalar_and_array_rcond():
    a_np = onp.random.default_rng(0).standard_normal((2, 3, 4))
    a = np.array(a_np, dtype="float64")
    onp.testing.assert_allclose(np.linalg.pinv(a).asnumpy(), onp.linalg.pinv(a_np), atol=1e-10)
    r = np.array([1e-3, 0.9], dtype="float64")
    onp.testing.assert_allclose(np.linalg.pinv(a, r).asnumpy(), onp.linalg.pinv(a_np, onp.array([1e-3, 0.9])),
                                atol=1e-10)


def test_slogdet_values_shapes_and_gradient():
    a_np = onp.array([[2.0, 1.0], [4.0, 3.0]])
    sign, logdet = np.linalg.slogdet(np.array(a_np))
    assert sign.shape == () and float(sign) == 1.0 and float(logdet) == pytest.approx(onp.log(2.0), rel=1e-6)
    a = np.array(_spd(3, (2,)), dtype="float64")
    a.attach_grad()
    with autograd.record():
        _, ld = np.linalg.slogdet(a)
    ld.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), onp.swapaxes(onp.linalg.inv(a.asnumpy()), -1, -2), rtol=1e-8)


def test_solve_rules_and_gradient():
    a_np, b_np = _spd(3, (2,)), onp.random.default_rng(2).standard_normal((2, 3))
    a, b = np.array(a_np, dtype="float64"), np.array(b_np, dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        x = np.linalg.solve(a, b)         # b one axis short: a stack of vectors
    x.backward()
    onp.testing.assert_allclose(x.asnumpy(), onp.linalg.solve(a_np, b_np[..., None])[..., 0], rtol=1e-10)
    db = onp.linalg.solve(onp.swapaxes(a_np, -1, -2), onp.ones((2, 3, 1)))[..., 0]
    onp.testing.assert_allclose(b.grad.asnumpy(), db, rtol=1e-10)
    onp.testing.assert_allclose(a.grad.asnumpy(), -db[..., :, None] * x.asnumpy()[..., None, :], rtol=1e-10)
    # MXNet: two float32 inputs stay float32, anything else gives float64
    assert np.linalg.solve(np.eye(3), np.ones(3)).dtype == onp.float32
    assert np.linalg.solve(np.eye(3, dtype="float64"), np.ones(3)).dtype == onp.float64
    with pytest.raises(ShapeError, match="don't match"):
        np.linalg.solve(np.ones((2, 3, 3)), np.ones((3,)))


def test_tensorinv_and_tensorsolve():
    a_np = _spd(6).reshape(2, 3, 6)
    onp.testing.assert_allclose(np.linalg.tensorinv(np.array(a_np, dtype="float64"), ind=2).asnumpy(),
                                onp.linalg.tensorinv(a_np, ind=2), rtol=1e-8)
    assert np.linalg.tensorinv(np.ones((4, 6, 8, 3), dtype="int32") + np.eye(24, dtype="int32").reshape(4, 6, 8, 3),
                               ind=2).dtype == onp.float64
    a6 = _spd(6).reshape(6, 2, 3)
    b6 = onp.arange(6.0)
    x = np.linalg.tensorsolve(np.array(a6, dtype="float64"), np.array(b6, dtype="float64"))
    onp.testing.assert_allclose(x.asnumpy(), onp.linalg.tensorsolve(a6, b6), rtol=1e-8)
    # MXNet's shape rule: a 0-d a and a (1, 1, 1) b solve for a 0-d x
    assert np.linalg.tensorsolve(np.array(2.0), np.ones((1, 1, 1))).shape == ()
    assert np.linalg.tensorsolve(np.ones((1, 1, 1)), np.array(2.0)).shape == (1, 1, 1)


@pytest.mark.parametrize("a_shape,b_shape,axes", [
    ((3, 5, 4, 3, 2), (2, 3, 5, 1, 2), [[1, 3, 4], [2, 1, 0]]),
    ((3, 5, 4), (5, 3, 4), [[2, 0], [-1, -2]]),
    ((2,), (2, 3), 0), ((3, 4, 5, 3, 2), (5, 3, 2, 1, 2), 3), ((2, 3), (3,), [[-1], [-1]]),
])
def test_tensordot_values_and_gradients_eager_and_hybridized(a_shape, b_shape, axes):
    rng = onp.random.default_rng(0)
    a_np, b_np = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    want = onp.tensordot(a_np, b_np, axes)
    eager, hyb = _both(lambda F, x, y: F.np.tensordot(x, y, axes), np.array(a_np), np.array(b_np))
    onp.testing.assert_allclose(eager[0], want, rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(hyb[0], want, rtol=1e-4, atol=1e-5)
    a, b = np.array(a_np, dtype="float64"), np.array(b_np, dtype="float64")
    a.attach_grad()
    b.attach_grad()
    g = rng.standard_normal(want.shape)
    with autograd.record():
        out = np.tensordot(a, b, axes)
    out.backward(np.array(g, dtype="float64"))
    # d<g, tensordot(a, b)>/da by the einsum identity: contract g with b over b's free axes
    eps = 1e-6
    d = rng.standard_normal(a_shape)
    fd = ((onp.tensordot(a_np + eps * d, b_np, axes) - onp.tensordot(a_np - eps * d, b_np, axes)) * g).sum() / (2 * eps)
    assert abs((a.grad.asnumpy() * d).sum() - fd) < 1e-6 * max(1, abs(fd))
    d = rng.standard_normal(b_shape)
    fd = ((onp.tensordot(a_np, b_np + eps * d, axes) - onp.tensordot(a_np, b_np - eps * d, axes)) * g).sum() / (2 * eps)
    assert abs((b.grad.asnumpy() * d).sum() - fd) < 1e-6 * max(1, abs(fd))


def test_inner_vdot_outer_on_free_symbols():
    s = mx.sym.np.inner(mx.sym.var("a").as_np_ndarray(), mx.sym.var("b").as_np_ndarray())
    ex = s.as_nd_ndarray().bind(mx.cpu(), {"a": mx.nd.ones((2, 3)), "b": mx.nd.ones((4, 3))})
    assert ex.forward()[0].shape == (2, 4)
    assert float(np.vdot(np.ones((2, 3)), np.ones((3, 2)))) == 6.0
    assert np.outer(np.ones(2), np.ones(3)).shape == (2, 3)
    a, b = mx.sym.var("a").as_np_ndarray(), mx.sym.var("b").as_np_ndarray()
    for sym, want in ((mx.sym.np.vdot(a, b), ()), (mx.sym.np.outer(a, b), (5, 9))):
        ex = sym.as_nd_ndarray().bind(mx.cpu(), {"a": mx.nd.ones((5, 1)), "b": mx.nd.ones((3, 3))} if want
                                      else {"a": mx.nd.ones((5, 1)), "b": mx.nd.ones((5,))})
        assert ex.forward()[0].shape == want


def test_matmul_of_two_vectors_differentiates_hybridized():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    net = _Fn(lambda F, a, b: F.np.matmul(a, b))
    net.hybridize()
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        out = net(x, y)
    out.backward()
    assert float(out) == 32.0
    onp.testing.assert_allclose(x.grad.asnumpy(), [4, 5, 6])
    onp.testing.assert_allclose(y.grad.asnumpy(), [1, 2, 3])


def test_grad_req_null_drops_the_gradient_after_backward():
    """MXNet 1.9.1: a variable marked with grad_req='null' has .grad None once a backward ran."""
    a, b = np.ones((2,)), np.ones((2,))
    a.attach_grad(grad_req="null")
    b.attach_grad()
    with autograd.record():
        c = (a * b).sum()
    c.backward()
    assert a.grad is None and b.grad.asnumpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("shape,ord_,axis", [
    ((2, 3, 4), 4, 1), ((2, 3), -1, None), ((2, 3, 4), "inf", 1), ((2, 3, 4), "-inf", (1, 0)),
    ((3, 2, 3), None, (1, 2)), ((2, 3), None, None), ((2, 0, 4), "fro", (0, 2)), ((2, 3, 4), -3.2, 2),
    ((2, 3, 4), -1, (0, 1)), ((2, 3, 4), "inf", (0, 2)), ((4, 4, 4, 4), -2, (0, 2)), ((2, 3, 4), "nuc", (0, 2)),
    ((2, 2), "nuc", None), ((2, 3, 4, 5), 2, (2, 3)), ((5, 3), 2, None),
])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_matches_numpy_eager_and_hybridized(shape, ord_, axis, keepdims):
    x_np = onp.random.default_rng(0).uniform(-10, 10, shape)
    np_ord = {"inf": onp.inf, "-inf": -onp.inf}.get(ord_, ord_) if isinstance(ord_, str) else ord_
    want = onp.linalg.norm(x_np, ord=np_ord, axis=axis, keepdims=keepdims)
    eager, hyb = _both(lambda F, a: F.np.linalg.norm(a, ord=ord_, axis=axis, keepdims=keepdims),
                       np.array(x_np, dtype="float64"))
    for got in (eager[0], hyb[0]):
        assert got.shape == want.shape
        onp.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_spectral_norm_gradient_is_the_top_singular_pair():
    x_np = onp.random.default_rng(3).standard_normal((3, 4))
    x = np.array(x_np, dtype="float64")
    x.attach_grad()
    with autograd.record():
        n = np.linalg.norm(x, ord=2)
    n.backward()
    u, _, vh = onp.linalg.svd(x_np)
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.outer(u[:, 0], vh[0]), atol=1e-8)
