"""mx.test_utils: comparisons, random data, and the symbolic checks users test operators with."""
from __future__ import annotations

import os

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph import test_utils as tu
from hybridgraph.nd import registry
from hybridgraph.nd.registry import OpDef, same_shape


# -- tolerances and dtypes ------------------------------------------------------------------

def test_default_tolerances_are_mxnets():
    assert tu.get_rtol(None, np.float16) == 1e-2 and tu.get_atol(None, np.float16) == 1e-1
    assert tu.get_rtol(None, np.float32) == 1e-4 and tu.get_atol(None, np.float32) == 1e-3
    assert tu.get_rtol(None, np.float64) == 1e-5 and tu.get_atol(None, np.float64) == 1e-20
    assert tu.get_rtol() == 1e-5 and tu.get_atol() == 1e-20
    assert tu.get_rtol(0.5) == 0.5 and tu.get_atol(0.25, np.float16) == 0.25
    assert tu.get_tols(np.zeros(2, np.float16), np.zeros(2, np.float64), None, None) == (1e-2, 1e-1)
    assert tu.get_tols(1.0, np.zeros(2, np.float32), {np.dtype(np.float32): 0.5}, None) == (0.5, 1e-3)
    assert tu.get_etol() == 0 and tu.get_etol(0.1) == 0.1


def test_default_dtype_and_effective_dtype():
    assert tu.default_dtype() is np.float32
    assert tu.effective_dtype(np.zeros(2, np.float16)) == np.float16
    assert tu.effective_dtype(nd.zeros((2,), dtype="float64")) == np.float64


def test_default_context_and_set_default_context():
    assert tu.default_context() == mx.cpu()
    token_ctx = mx.cpu(1)
    tu.set_default_context(token_ctx)
    try:
        assert tu.default_context() == token_ctx
        assert nd.zeros((1,)).context == token_ctx
    finally:
        tu.set_default_context(mx.cpu())
    assert tu.default_context() == mx.cpu()


# -- comparisons -------------------------------------------------------------------------

def test_same_and_almost_equal():
    a = np.arange(1.0, 7.0).reshape(2, 3)
    assert tu.same(a, a.copy()) and not tu.same(a, a + 1)
    assert tu.same(nd.array(a), a)
    assert tu.almost_equal(a, a + 1e-7, rtol=1e-6, atol=0)
    assert not tu.almost_equal(a, a + 1e-3)
    assert tu.almost_equal(np.array([np.nan]), np.array([np.nan]), equal_nan=True)
    assert not tu.almost_equal(np.array([np.nan]), np.array([np.nan]))
    with pytest.raises(AssertionError, match="shape"):
        tu.almost_equal(np.zeros(3), np.zeros((1, 3)), use_broadcast=False)


def test_assert_almost_equal_passes_within_dtype_defaults():
    x = np.random.rand(4, 5).astype(np.float32)
    tu.assert_almost_equal(x, x * (1 + 5e-5))          # inside float32's rtol 1e-4
    tu.assert_almost_equal(nd.array(x), x + 5e-4)       # inside float32's atol 1e-3
    tu.assert_almost_equal(x.astype(np.float16), x, rtol=1e-2, atol=1e-2)
    tu.assert_almost_equal(np.array([True, False]), np.array([True, False]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(x.astype(np.float64), x.astype(np.float64) * (1 + 5e-5))


def test_assert_almost_equal_reports_worst_index_and_values(capsys):
    a = np.zeros((3, 4))
    b = np.zeros((3, 4))
    b[0, 1] = 0.5
    b[2, 3] = 2.0      # the worst violation
    with pytest.raises(AssertionError) as info:
        tu.assert_almost_equal(a, b, rtol=1e-5, atol=1e-3, names=("mine", "ref"))
    msg = str(info.value)
    assert "Location of maximum error: (2, 3), mine=0.00000000, ref=2.00000000" in msg
    assert "mismatch 16.666667%" in msg
    printed = capsys.readouterr().out
    assert "1: Error" in printed and "(2, 3)" in printed and "(0, 1)" in printed


def test_assert_almost_equal_nan_handling():
    a = np.array([1.0, np.nan])
    tu.assert_almost_equal(a, a.copy(), equal_nan=True)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(a, a.copy())
    tu.assert_almost_equal_ignore_nan(np.array([1.0, np.nan]), np.array([1.0, 3.0]))
    tu.assert_allclose(np.array([1.0, np.nan]), np.array([1.0, np.nan]))


def test_assert_almost_equal_with_err_allows_a_fraction_of_mismatches():
    a = np.zeros(10)
    b = np.zeros(10)
    b[0] = 1.0
    tu.assert_almost_equal_with_err(a, b, etol=0.2)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_with_err(a, b, etol=0.05)


def test_assert_exception():
    tu.assert_exception(int, ValueError, "x")
    tu.assert_exception(sym.Variable("x").asnumpy, mx.MXNetError)
    with pytest.raises(AssertionError):
        tu.assert_exception(int, ValueError, "3")


def test_retry_reruns_failed_attempts():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 2

    flaky()
    assert len(calls) == 2


# -- random data ----------------------------------------------------------------------------

def test_random_arrays_and_shapes():
    np.random.seed(0)
    one = tu.random_arrays((2, 3))
    assert isinstance(one, np.ndarray) and one.shape == (2, 3) and one.dtype == np.float32
    two = tu.random_arrays((1,), ())
    assert [x.shape for x in two] == [(1,), ()]
    u = tu.random_uniform_arrays((3,), low=2.0, high=3.0)
    assert len(u) == 1 and np.all((u[0] >= 2) & (u[0] < 3))
    for _ in range(20):
        s2, s3, sn = tu.rand_shape_2d(4, 5), tu.rand_shape_3d(2, 3, 4), tu.rand_shape_nd(4, dim=3)
        assert len(s2) == 2 and 1 <= s2[0] <= 4 and 1 <= s2[1] <= 5
        assert len(s3) == 3 and all(1 <= d <= m for d, m in zip(s3, (2, 3, 4)))
        assert len(sn) == 4 and all(1 <= d <= 3 for d in sn)
    assert any(0 in tu.rand_shape_nd(3, dim=1, allow_zero_size=True) for _ in range(50))
    assert sorted(tu.random_sample(list(range(10)), 4))[0] >= 0 and len(tu.random_sample([1, 2, 3], 2)) == 2
    x, y = tu.rand_coord_2d(0, 3, 5, 6)
    assert 0 <= x < 3 and y == 5


def test_rand_ndarray():
    arr = tu.rand_ndarray((3, 4))
    assert isinstance(arr, nd.NDArray) and arr.shape == (3, 4) and arr.dtype == np.float32
    assert tu.rand_ndarray((2,), dtype="float64").dtype == np.float64
    assert tu.rand_ndarray((2, 2), stype="csr").stype == "csr"   # dense-backed sparse (nd/sparse.py)
    with pytest.raises(NotImplementedError, match="powerlaw"):
        tu.rand_ndarray((2, 2), stype="csr", distribution="powerlaw")


def test_np_reduce_matches_numpy():
    x = np.random.rand(2, 3, 4)
    np.testing.assert_allclose(tu.np_reduce(x, 1, False, np.sum), x.sum(axis=1))
    np.testing.assert_allclose(tu.np_reduce(x, (0, 2), True, np.max), x.max(axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(tu.np_reduce(x, None, False, np.sum), x.sum())


# -- symbolic checks ---------------------------------------------------------------------------

def test_simple_forward():
    x = sym.Variable("x")
    out = tu.simple_forward(x * 2 + 1, x=np.ones((2, 2)))
    np.testing.assert_array_equal(out, np.full((2, 2), 3.0))
    outs = tu.simple_forward(sym.Group([x + 1, x - 1]), x=np.zeros(3))
    assert len(outs) == 2 and outs[1].tolist() == [-1, -1, -1]


def test_check_symbolic_forward_passes_and_fails():
    lhs, rhs = sym.Variable("lhs"), sym.Variable("rhs")
    dot = sym.dot(lhs, rhs)
    m1, m2 = np.array([[1.0, 2], [3, 4]]), np.array([[5.0, 6], [7, 8]])
    out = tu.check_symbolic_forward(dot, [m1, m2], [np.array([[19.0, 22], [43, 50]])])
    assert out[0].shape == (2, 2)
    tu.check_symbolic_forward(dot, {"lhs": m1, "rhs": m2}, {dot.list_outputs()[0]: m1 @ m2}, dtype=np.float64)
    with pytest.raises(AssertionError, match="EXPECTED_dot"):
        tu.check_symbolic_forward(dot, [m1, m2], [m1 @ m2 + 1])
    with pytest.raises(ValueError, match="do not match"):
        tu.check_symbolic_forward(dot, {"lhs": m1}, [m1])


@pytest.mark.parametrize("grad_req", ["write", "add", "null"])
def test_check_symbolic_backward(grad_req):
    a, b = sym.Variable("a"), sym.Variable("b")
    prod = a * b
    va, vb, og = np.random.rand(2, 3), np.random.rand(2, 3), np.random.rand(2, 3)
    grads = tu.check_symbolic_backward(prod, [va, vb], [og], [og * vb, og * va], grad_req=grad_req)
    assert set(grads) == {"a", "b"}
    if grad_req != "null":
        with pytest.raises(AssertionError, match="BACKWARD_a"):
            tu.check_symbolic_backward(prod, [va, vb], [og], [og * vb + 1, og * va], grad_req=grad_req)


def test_check_symbolic_backward_of_a_loss_needs_no_head_gradient():
    data, label = sym.Variable("data"), sym.Variable("label")
    out = sym.SoftmaxOutput(data, label, name="sm")
    x = np.random.rand(3, 4)
    y = np.array([0.0, 2, 3])
    p = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    expected = p - np.eye(4)[y.astype(int)]
    tu.check_symbolic_backward(out, [x, y], None, {"data": expected}, grad_req={"data": "write", "label": "null"})


def test_check_numeric_gradient_on_operators():
    x, w = sym.Variable("x"), sym.Variable("w")
    fc = sym.FullyConnected(x, w, no_bias=True, num_hidden=3, name="fc")
    tu.check_numeric_gradient(fc, [np.random.randn(2, 4), np.random.randn(3, 4)], dtype=np.float64)
    tu.check_numeric_gradient(sym.tanh(x), [np.random.randn(3, 2)])
    tu.check_numeric_gradient(sym.tanh(x) * w, {"x": np.random.randn(2, 2), "w": np.random.randn(2, 2)},
                              grad_nodes=["x"], numeric_eps=1e-3, rtol=1e-2, atol=1e-3)
    tu.check_numeric_gradient(x * w, [np.random.randn(2), np.random.randn(2)],
                              grad_nodes={"x": "add", "w": "null"}, dtype=np.float64)


def test_check_numeric_gradient_with_aux_states():
    x = sym.Variable("x")
    bn = sym.BatchNorm(x, fix_gamma=False, name="bn")
    location = [np.random.randn(4, 3), np.random.rand(3) + 0.5, np.random.randn(3)]
    tu.check_numeric_gradient(bn, location, aux_states=[np.zeros(3), np.ones(3)], dtype=np.float64,
                              rtol=1e-3, atol=1e-4)
    aux = {"bn_moving_mean": np.zeros(3), "bn_moving_var": np.ones(3)}
    tu.check_numeric_gradient(bn, location, aux_states=aux, dtype=np.float64, rtol=1e-3, atol=1e-4)


@pytest.fixture
def wrong_square():
    """A throwaway `_test_wrong_square` op: y = x**2 whose gradient rule says 3x (should be 2x)."""
    name = "_test_wrong_square"

    def gradient(F, a, inputs, outputs, ograds):
        return [F.elemwise_mul(ograds[0], F._mul_scalar(inputs[0], scalar=3.0))]

    op = registry.add_op(OpDef(name, inputs=("data",), forward=lambda xp, a, x: (xp.square(x),),
                               infer_shape=same_shape, gradient=gradient))
    yield op
    del registry._REGISTRY[name]
    del registry._CANONICAL[name]


def test_check_numeric_gradient_catches_a_wrong_gradient(wrong_square):
    x = sym.Variable("x")
    bad = sym.create(wrong_square, [x], {}, name="bad")
    tu.check_symbolic_forward(bad, [np.array([1.0, 2.0])], [np.array([1.0, 4.0])])
    with pytest.raises(AssertionError) as info:
        tu.check_numeric_gradient(bad, [np.random.rand(3, 2) + 0.5], dtype=np.float64)
    assert "NUMERICAL_x" in str(info.value) and "BACKWARD_x" in str(info.value)
    assert "Location of maximum error" in str(info.value)


def test_wrong_square_is_gone_after_the_test():
    assert not registry.has_op("_test_wrong_square")


def test_numeric_grad_directly():
    x = sym.Variable("x")
    exe = (x * x).bind(mx.cpu(), {"x": nd.array([1.0, 2.0], dtype="float64")})
    grads = tu.numeric_grad(exe, {"x": np.array([1.0, 2.0])}, eps=1e-4, dtype=np.float64)
    np.testing.assert_allclose(grads["x"], [2.0, 4.0], rtol=1e-6)


def test_check_consistency_across_dtypes():
    x = sym.Variable("x")
    s = sym.FullyConnected(sym.tanh(x), num_hidden=3, name="fc")
    shapes = {"x": (2, 4)}
    ctx_list = [{"ctx": mx.cpu(), **shapes, "type_dict": {"x": t}} for t in (np.float64, np.float32, np.float16)]
    gt = tu.check_consistency(s, ctx_list, scale=0.5)
    assert gt["fc_weight"].dtype == np.float64 and "fc_output" in gt
    bad = [{"ctx": mx.cpu(), **shapes, "type_dict": {"x": np.float64}},
           {"ctx": mx.cpu(), **shapes, "type_dict": {"x": np.float32}}]
    syms = [s, sym.FullyConnected(sym.tanh(x) * 1.5, num_hidden=3, name="fc")]
    with pytest.raises(AssertionError):
        tu.check_consistency(syms, bad, grad_req="null")


def test_check_consistency_with_aux_states_and_add():
    x = sym.Variable("x")
    s = sym.BatchNorm(x, fix_gamma=False, name="bn")
    ctx_list = [{"ctx": mx.cpu(), "x": (4, 3), "type_dict": {"x": t}} for t in (np.float64, np.float32)]
    tu.check_consistency(s, ctx_list, grad_req="add")


# -- environment ------------------------------------------------------------------------------

def test_set_env_var_returns_previous_value():
    key = "HYBRIDGRAPH_TEST_ENV_VAR"
    os.environ.pop(key, None)
    assert tu.set_env_var(key, "1", default_val="none") == "none"
    assert tu.set_env_var(key, "2") == "1"
    assert os.environ[key] == "2"
    del os.environ[key]


def test_environment_sets_and_restores():
    os.environ["HG_A"] = "old"
    os.environ.pop("HG_B", None)
    with tu.environment({"HG_A": "new", "HG_B": "b"}):
        assert os.environ["HG_A"] == "new" and os.environ["HG_B"] == "b"
    assert os.environ["HG_A"] == "old" and "HG_B" not in os.environ
    with pytest.raises(RuntimeError), tu.environment("HG_A", None):
        assert "HG_A" not in os.environ
        raise RuntimeError("restored even on errors")
    assert os.environ.pop("HG_A") == "old"


def test_importable_as_mxnet_names():
    from hybridgraph.test_utils import assert_almost_equal, default_context  # noqa: F401
    assert mx.test_utils.assert_almost_equal is tu.assert_almost_equal
    from hybridgraph.base import MXNetError
    assert MXNetError is mx.MXNetError
