"""dot, batch_dot and the `_linalg_*` operators beyond the generic spec table:
MXNet 1.9.1's shape rules (recorded from the real library), dtype limits,
errors, shape inference, potrf's symmetric gradient, second-order gradients
and symbolic use."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import AttrError, DTypeError, MXNetError, ShapeError
from hybridgraph.nd.registry import get_op


def _shapes(name, attrs, *shapes):
    op = get_op(name)
    return op.infer_shape(op.parse_attrs(attrs), *shapes)


def f64(x):
    return nd.array(x, dtype="float64")


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# -- dot ------------------------------------------------------------------------------

@pytest.mark.parametrize("ta,tb,ls,rs,out", [
    (False, False, (2, 3, 4), (4, 5), (2, 3, 5)),
    (True, False, (2, 3, 4), (2, 5), (3, 4, 5)),
    (False, True, (2, 3, 4), (5, 4), (2, 3, 5)),
    (True, True, (2, 3, 4), (5, 2), (3, 4, 5)),
    (False, False, (3, 4), (4, 2, 5), (3, 2, 5)),
    (False, True, (3, 4), (2, 5, 4), (3, 2, 5)),
    (True, False, (4, 2, 3), (4, 2, 5), (2, 3, 2, 5)),
    (False, False, (4,), (4, 5), (5,)),
    (True, False, (4,), (4, 5), (5,)),
    (False, False, (3, 4), (4,), (3,)),
    (False, True, (3, 4), (4,), (3,)),
    (False, False, (4,), (4,), (1,)),
])
def test_dot_shapes_match_mxnet(ta, tb, ls, rs, out):
    y = nd.dot(f64(_rand(*ls)), f64(_rand(*rs, seed=1)), transpose_a=ta, transpose_b=tb)
    assert y.shape == out
    assert _shapes("dot", {"transpose_a": ta, "transpose_b": tb}, ls, rs)[1] == [out]


@pytest.mark.parametrize("ta,tb,ls,rs,msg", [
    (True, False, (4,), (4,), "transpose vectors"),
    (False, True, (3, 4), (2, 4, 5), "mismatch"),
    (True, False, (4, 1), (5,), "mismatch"),
    (False, False, (3, 4), (3,), "mismatch"),
])
def test_dot_shape_errors(ta, tb, ls, rs, msg):
    with pytest.raises(ShapeError, match=msg):
        _shapes("dot", {"transpose_a": ta, "transpose_b": tb}, ls, rs)


def test_dot_partial_shapes_and_dtypes():
    assert _shapes("dot", {}, (3, 0), (4, 5)) == ([(3, 0), (4, 5)], [(3, 5)])
    assert _shapes("dot", {}, (3, 4), None) is None
    with pytest.raises(DTypeError, match="int32"):
        nd.dot(nd.ones((2, 2), dtype="int32"), nd.ones((2, 2), dtype="int32"))
    op = get_op("dot")
    with pytest.raises(DTypeError):
        op.infer_type(op.parse_attrs({}), np.dtype("float32"), np.dtype("float64"))
    assert nd.dot(nd.ones((2, 2), dtype="float16"), nd.ones((2, 2), dtype="float16")).dtype == np.float16


def test_dot_forward_stype_is_accepted():
    y = nd.dot(nd.ones((2, 3)), nd.ones((3, 2)), forward_stype="default")
    assert y.asnumpy().tolist() == [[3, 3], [3, 3]]
    with pytest.raises(AttrError, match="forward_stype"):
        nd.dot(nd.ones((2, 3)), nd.ones((3, 2)), forward_stype="dense")


def test_dot_vector_gradients():
    a, b = f64([1.0, 2, 3]), f64([4.0, 5, 6])
    for x in (a, b):
        x.attach_grad()
    with autograd.record():
        y = nd.dot(a, b)
    y.backward(f64([2.0]))
    assert a.grad.asnumpy().tolist() == [8, 10, 12] and b.grad.asnumpy().tolist() == [2, 4, 6]


def test_dot_second_order_gradient():
    """d/dA of <grad_B, V> for y = sum(dot(A, B) * H): grad_B = A^T H, so the result is H V^T."""
    A, B, H, V = _rand(3, 4), _rand(4, 2, seed=1), _rand(3, 2, seed=2), _rand(4, 2, seed=3)
    a, b = f64(A), f64(B)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = nd.sum(nd.dot(a, b) * f64(H))
        gb = autograd.grad(y, [b], create_graph=True)[0]
        z = nd.sum(gb * f64(V))
    z.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), H @ V.T, rtol=1e-6)


# -- batch_dot ------------------------------------------------------------------------

def test_batch_dot_shapes_and_errors():
    assert nd.batch_dot(nd.ones((2, 2, 3, 4)), nd.ones((2, 2, 4, 5))).shape == (2, 2, 3, 5)
    with pytest.raises(ShapeError, match="N >= 3"):
        nd.batch_dot(nd.ones((2, 2, 3, 4)), nd.ones((2, 4, 5)))
    with pytest.raises(ShapeError, match="batch"):
        _shapes("batch_dot", {}, (2, 3, 4), (3, 4, 5))
    with pytest.raises(ShapeError, match="mismatch"):
        _shapes("batch_dot", {"transpose_a": True}, (2, 3, 4), (2, 4, 5))


# -- gemm / gemm2 ---------------------------------------------------------------------------

def test_gemm_row_axis():
    x, w = _rand(3, 2, 4, 6), _rand(6, 2, 4, 5, seed=1)
    y = nd._internal._linalg_gemm2(f64(x), f64(w), axis=0).asnumpy()
    want = np.moveaxis(np.moveaxis(x, 0, -2) @ np.moveaxis(w, 0, -2), -2, 0)
    np.testing.assert_allclose(y, want, rtol=1e-10)
    assert nd._internal.linalg_gemm2(nd.ones((3, 4, 5)), nd.ones((3, 5, 4)), axis=1).shape == (3, 4, 4)


@pytest.mark.parametrize("axis", [-1, 2, 3])
def test_gemm_rejects_column_axis(axis):
    with pytest.raises(AttrError, match="row axis"):
        nd._internal._linalg_gemm2(nd.ones((3, 4, 5)), nd.ones((3, 5, 4)), axis=axis)


def test_gemm_shape_inference_both_ways():
    assert _shapes("_linalg_gemm", {}, (3, 4), (4, 5), None) == ([(3, 4), (4, 5), (3, 5)], [(3, 5)])
    assert _shapes("_linalg_gemm", {}, None, None, (3, 5)) == ([None, None, (3, 5)], [(3, 5)])
    with pytest.raises(ShapeError, match="'C'"):
        _shapes("_linalg_gemm", {}, (3, 4), (4, 5), (3, 4))
    with pytest.raises(ShapeError, match="except on the row/column"):
        _shapes("_linalg_gemm2", {}, (2, 3, 4), (3, 4, 5))


def test_linalg_accepts_only_float32_and_float64():
    for dt in ("float16", "int32"):
        with pytest.raises(DTypeError, match=dt):
            nd._internal._linalg_gemm2(nd.ones((2, 2), dtype=dt), nd.ones((2, 2), dtype=dt))
        with pytest.raises(DTypeError, match=dt):
            nd._internal._linalg_potrf(nd.ones((2, 2), dtype=dt))
    op = get_op("_linalg_inverse")
    with pytest.raises(DTypeError):
        op.infer_type(op.parse_attrs({}), np.dtype("float16"))


# -- potrf / trsm / det / inverse / sumlogdiag --------------------------------------------------

def _spd(n, seed=0):
    m = _rand(n, n, seed=seed)
    return m @ m.T + n * np.eye(n)


def test_potrf_gradient_along_symmetric_directions():
    """MXNet's potrf gradient is the symmetric one: exact for symmetric perturbations."""
    A, H = _spd(4), _rand(4, 4, seed=5)
    a = f64(A)
    a.attach_grad()
    with autograd.record():
        y = nd._internal._linalg_potrf(a)
    y.backward(f64(H))
    grad = a.grad.asnumpy()
    np.testing.assert_allclose(grad, grad.T, rtol=1e-12)
    d = _rand(4, 4, seed=6)
    d = d + d.T
    eps = 1e-6
    f = [float((np.linalg.cholesky(A + s * eps * d) * H).sum()) for s in (1, -1)]
    np.testing.assert_allclose((grad * d).sum(), (f[0] - f[1]) / (2 * eps), rtol=1e-6)


def test_potrf_reads_lower_triangle_and_reports_failure():
    A = _spd(3)
    upper_garbage = np.tril(A) + np.triu(_rand(3, 3), 1)
    np.testing.assert_allclose(nd._internal._linalg_potrf(f64(upper_garbage)).asnumpy(),
                               np.linalg.cholesky(A), rtol=1e-12)
    with pytest.raises(MXNetError, match="_linalg_potrf"):
        nd._internal._linalg_potrf(f64([[1.0, 2], [2, 1]]))


def test_trsm_uses_only_the_triangle():
    A, B = _rand(3, 3) + 3 * np.eye(3), _rand(3, 2, seed=1)
    y = nd._internal._linalg_trsm(f64(A), f64(B)).asnumpy()
    np.testing.assert_allclose(y, np.linalg.solve(np.tril(A), B), rtol=1e-10)
    y = nd._internal.linalg_trsm(f64(A), f64(B.T), rightside=True, lower=False, alpha=2.0)
    np.testing.assert_allclose(y.asnumpy(), 2 * B.T @ np.linalg.inv(np.triu(A)), rtol=1e-10)
    with pytest.raises(ShapeError, match="does not fit"):
        _shapes("_linalg_trsm", {"rightside": True}, (3, 3), (3, 2))


def test_det_and_sumlogdiag_shapes():
    assert nd._internal._linalg_det(f64(_spd(3))).shape == (1,)
    assert nd._internal._linalg_det(f64(np.stack([_spd(3), _spd(3, 1)]))).shape == (2,)
    assert _shapes("_linalg_sumlogdiag", {}, (2, 4, 3, 3)) == ([(2, 4, 3, 3)], [(2, 4)])
    with pytest.raises(ShapeError, match="square"):
        _shapes("_linalg_det", {}, (3, 4))


def test_det_hidden_outputs_hold_the_lu_factorisation():
    """As MXNet, det has two hidden outputs: getrf's packed LU and 1-based pivots."""
    A = _rand(2, 4, 4)
    op = get_op("_linalg_det")
    det, lu, piv = op.compute(np, op.parse_attrs({}), [A])
    assert op.num_visible_outputs(op.parse_attrs({})) == 1
    assert piv.dtype == np.int32 and piv.shape == (2, 4) and lu.shape == A.shape
    for b in range(2):
        pa = A[b].copy()
        for k, p in enumerate(piv[b] - 1):
            pa[[k, p]] = pa[[p, k]]
        lower = np.tril(lu[b], -1) + np.eye(4)
        np.testing.assert_allclose(lower @ np.triu(lu[b]), pa, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(det, np.linalg.det(A), rtol=1e-10)
    assert _shapes("_linalg_det", {}, (2, 4, 4))[1] == [(2,), (2, 4, 4), (2, 4)]


def test_sumlogdiag_gradient_is_diagonal():
    a = f64(_spd(3))
    a.attach_grad()
    with autograd.record():
        y = nd._internal._linalg_sumlogdiag(a)
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), np.diag(1 / np.diag(_spd(3))), rtol=1e-12)


def test_inverse_of_singular_matrix_raises():
    with pytest.raises(MXNetError, match="_linalg_inverse"):
        nd._internal._linalg_inverse(f64([[1.0, 2], [2, 4]]))


@given(st.integers(1, 4), st.integers(0, 20))
def test_inverse_second_order_gradient(n, seed):
    """Directional derivative of the inverse's gradient against finite differences."""
    A = _rand(n, n, seed=seed) + 3 * np.eye(n)
    H, V = _rand(n, n, seed=seed + 1), _rand(n, n, seed=seed + 2)

    def grad_of(x):
        xi = np.linalg.inv(x)
        return -xi.T @ H @ xi.T

    a = f64(A)
    a.attach_grad()
    with autograd.record():
        y = nd.sum(nd._internal._linalg_inverse(a) * f64(H))
        g = autograd.grad(y, [a], create_graph=True)[0]
        z = nd.sum(g * f64(V))
    z.backward()
    np.testing.assert_allclose(g.asnumpy(), grad_of(A), rtol=1e-8, atol=1e-10)
    eps, D = 1e-6, _rand(n, n, seed=seed + 3)
    numeric = ((grad_of(A + eps * D) - grad_of(A - eps * D)) * V).sum() / (2 * eps)
    np.testing.assert_allclose((a.grad.asnumpy() * D).sum(), numeric, rtol=1e-5, atol=1e-8)


# -- names and symbolic use ---------------------------------------------------------------------

def test_linalg_aliases_and_output_names():
    from hybridgraph import symbol as sym
    for short in ("gemm", "gemm2", "potrf", "trsm", "syrk", "det", "inverse", "sumlogdiag"):
        assert get_op("linalg_" + short) is get_op("_linalg_" + short)
    assert sym.linalg_det(sym.var("a"), name="det0").list_outputs() == ["det0_output0"]


def test_dot_gradient_through_an_executor():
    from hybridgraph import symbol as sym
    y = sym.dot(sym.var("a"), sym.var("b"), transpose_b=True)
    ex = y.simple_bind(nd.cpu(), a=(2, 3, 4), b=(5, 4))
    A, B = _rand(2, 3, 4), _rand(5, 4, seed=1)
    ex.arg_dict["a"][:] = A
    ex.arg_dict["b"][:] = B
    ex.forward(is_train=True)
    ex.backward(nd.ones((2, 3, 5)))
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), np.tensordot(A, B, axes=([2], [1])), rtol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), np.ones((2, 3, 5)) @ B, rtol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["b"].asnumpy(), np.ones((6, 5)).T @ A.reshape(6, 4), rtol=1e-5)
