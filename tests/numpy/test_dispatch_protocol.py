"""NumPy's dispatch protocols on mx.np arrays (`numpy.sum(x)`, `numpy.exp(x)`, fallbacks).

Expected behaviour read off real MXNet 1.9.1 (numpy 1.23): a listed numpy function or ufunc
runs as the mx.np function; another falls back to NumPy and returns mx.np arrays (numbers
unchanged); numpy and mx.np arrays do not mix.
"""
from __future__ import annotations

import numpy as onp
import pytest

import hybridgraph as mx
from hybridgraph import autograd, np
from hybridgraph.numpy_dispatch_protocol import (_NUMPY_ARRAY_FUNCTION_DICT, _NUMPY_ARRAY_FUNCTION_LIST,
                                                 _NUMPY_ARRAY_UFUNC_DICT, _NUMPY_ARRAY_UFUNC_LIST,
                                                 with_array_function_protocol)

NUMPY2 = onp.lib.NumpyVersion(onp.__version__) >= "2.0.0"


pytestmark = pytest.mark.usefixtures("np_mode")


def _lookup(mod, dotted):
    for part in dotted.split("."):
        mod = getattr(mod, part)
    return mod


def test_lists_are_mxnets_within_installed_numpy():
    assert len(_NUMPY_ARRAY_UFUNC_LIST) == len(set(_NUMPY_ARRAY_UFUNC_LIST)) == 57
    assert "ldexp" not in _NUMPY_ARRAY_UFUNC_LIST   # MXNet leaves it out
    for name in ("sum", "linalg.norm", "where", "pad", "shares_memory"):
        assert name in _NUMPY_ARRAY_FUNCTION_LIST
    for name in _NUMPY_ARRAY_FUNCTION_LIST:
        _lookup(onp, name)   # every listed name exists in the installed numpy
    assert ("round_" in _NUMPY_ARRAY_FUNCTION_LIST) == hasattr(onp, "round_")
    # what mx.np has is registered, keyed by numpy's function object / the ufunc's name
    assert _NUMPY_ARRAY_FUNCTION_DICT[onp.sum] is np.sum
    assert _NUMPY_ARRAY_FUNCTION_DICT[onp.linalg.norm] is np.linalg.norm
    assert _NUMPY_ARRAY_UFUNC_DICT["add"] is np.add


@pytest.mark.parametrize("fn, args", [
    (onp.sum, ()), (onp.mean, ()), (onp.transpose, ()), (onp.cumsum, ()), (onp.reshape, ((3, 2),)),
    (onp.clip, (1.5, 4.0)), (onp.linalg.norm, ()), (onp.expand_dims, (0,)),
])
def test_array_function_runs_mx_np(fn, args):
    x = np.array([[1., 2., 3.], [4., 5., 6.]])
    out = fn(x, *args)
    assert isinstance(out, np.ndarray)
    onp.testing.assert_allclose(out.asnumpy(), fn(x.asnumpy(), *args), rtol=1e-6)


@pytest.mark.parametrize("ufunc", [onp.exp, onp.sqrt, onp.negative, onp.floor, onp.logical_not])
def test_array_ufunc_unary(ufunc):
    x = np.array([0.5, 1., 4.])
    out = ufunc(x)
    assert isinstance(out, np.ndarray)
    onp.testing.assert_allclose(out.asnumpy(), ufunc(x.asnumpy()), rtol=1e-6)


@pytest.mark.parametrize("ufunc", [onp.add, onp.subtract, onp.multiply, onp.true_divide, onp.power,
                                   onp.maximum, onp.equal, onp.less])
def test_array_ufunc_binary(ufunc):
    a, b = np.array([1., 2., 3.]), np.array([3., 2., 1.])
    out = ufunc(a, b)
    assert isinstance(out, np.ndarray)
    onp.testing.assert_allclose(out.asnumpy(), ufunc(a.asnumpy(), b.asnumpy()))
    out2 = ufunc(a, 2.0)   # a Python scalar operand
    onp.testing.assert_allclose(out2.asnumpy(), ufunc(a.asnumpy(), onp.float32(2.0)))


def test_ufunc_out_and_methods():
    a, b, c = np.array([1., 2.]), np.array([3., 4.]), np.zeros(2)
    assert onp.add(a, b, out=c) is c
    onp.testing.assert_allclose(c.asnumpy(), [4., 6.])
    with pytest.raises(TypeError):   # reduce/accumulate/outer are not dispatched (as MXNet)
        onp.add.reduce(a)


def test_fallback_function_returns_mx_arrays_or_numbers():
    x = np.array([[3., 1.], [2., 5.]])
    med = onp.median(x)   # not in MXNet's list: NumPy runs it
    assert not isinstance(med, np.ndarray) and med == 2.5
    cp = onp.cumprod(x, axis=1)
    assert isinstance(cp, np.ndarray) and cp.ctx == x.ctx
    onp.testing.assert_allclose(cp.asnumpy(), [[3., 3.], [2., 10.]])
    q, r = onp.divmod(x, 2.0)   # a tuple of arrays
    assert isinstance(q, np.ndarray) and isinstance(r, np.ndarray)
    assert onp.allclose(x, x) is True
    assert onp.average(x) == 2.75


def test_fallback_zero_d_result_stays_zero_d():
    out = onp.resize(np.ones(1), ())   # numpy returns a 0-d array; not made 1-d on the way back
    assert isinstance(out, np.ndarray) and out.shape == ()


def test_fallback_not_while_recording():
    x = np.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        with pytest.raises(ValueError, match="autograd"):
            onp.median(x)
        with pytest.raises(ValueError, match="autograd"):
            onp.ldexp(x, 2)   # a ufunc MXNet does not list


def test_mixing_numpy_and_mx_arrays_is_a_type_error():
    a = np.array([1., 2.])
    with pytest.raises(TypeError):
        onp.concatenate([a, onp.ones(2)])
    with pytest.raises(TypeError):
        _ = onp.ones(2) + a
    with pytest.raises(TypeError):
        _ = a + onp.ones(2)


@pytest.mark.parametrize("fn", [onp.broadcast_arrays, onp.atleast_1d, onp.meshgrid])
def test_container_type_follows_installed_numpy(fn):
    a, b = np.array([1., 2.]), np.array([3., 4.])
    got = fn(a, b)
    want = fn(a.asnumpy(), b.asnumpy())
    assert type(got) is type(want)
    assert isinstance(got, tuple) == NUMPY2
    assert isinstance(getattr(np, fn.__name__)(a, b), list)   # mx.np itself keeps MXNet's list


def test_shares_memory_through_protocol():
    x = np.zeros((4, 5))
    assert onp.shares_memory(x[0], x[0]) and not onp.shares_memory(x[0], x[1])
    assert onp.may_share_memory(x, x[1:])


def test_with_array_function_protocol_wraps_errors():
    @with_array_function_protocol
    def bad():
        raise KeyError("boom")
    with pytest.raises(RuntimeError, match="bad.*boom"):
        bad()


def test_fallback_namespace():
    x = np.array([[1., 2.], [3., 4.]])
    assert np.allclose(x, x) and np.isclose(x, x).all()
    r = np.argwhere(x > 2)
    assert isinstance(r, np.ndarray) and r.shape == (2, 2)
    assert int(np.linalg.matrix_rank(x)) == 2
    assert "allclose" in np.fallback.__all__ and "qr" in np.fallback_linalg.__all__
    assert np.sum is not onp.sum and np.size is not onp.size   # mx.np's own functions stay


def test_legacy_ndarray_is_not_dispatched():
    legacy = mx.nd.array([1., 2.])
    assert not hasattr(mx.nd.NDArray, "__array_function__")
    assert type(onp.exp(legacy)) is onp.ndarray   # numpy converts it through __array__
