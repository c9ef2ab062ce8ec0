"""NDArray semantics: creation, dtypes, arithmetic and broadcasting, comparisons,
mutation, indexing, conversion and repr — as MXNet 1.9.1 behaves."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from hybridgraph import nd
from hybridgraph.nd.errors import MXNetError, ShapeError


def test_creation_functions_and_default_dtype():
    assert nd.array([1, 2]).dtype == np.float32                       # lists default to float32
    assert nd.array(np.arange(3, dtype=np.int64)).dtype == np.float32  # as MXNet, numpy too
    assert nd.array([1, 2], dtype="int32").dtype == np.int32
    assert nd.zeros((2, 3)).shape == (2, 3) and nd.zeros(4).shape == (4,)
    np.testing.assert_array_equal(nd.ones((2,), dtype="float64").asnumpy(), [1, 1])
    np.testing.assert_array_equal(nd.full((2,), 7).asnumpy(), [7, 7])
    np.testing.assert_array_equal(nd.arange(0, 3, repeat=2).asnumpy(), [0, 0, 1, 1, 2, 2])
    np.testing.assert_allclose(nd.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(nd.eye(2, 3, 1).asnumpy(), np.eye(2, 3, 1))
    assert nd.empty((2, 2)).shape == (2, 2)
    np.testing.assert_array_equal(nd.zeros_like(nd.ones((2,))).asnumpy(), [0, 0])
    np.testing.assert_array_equal(nd.concat(nd.ones((1, 2)), nd.zeros((1, 2)), dim=0).asnumpy(), [[1, 1], [0, 0]])
    assert nd.stack(nd.ones((2,)), nd.ones((2,)), axis=1).shape == (2, 2)


def test_properties():
    x = nd.ones((2, 3, 4))
    assert (x.shape, x.size, x.ndim, x.dtype) == ((2, 3, 4), 24, 3, np.dtype("float32"))
    assert x.context == nd.cpu() and x.ctx == nd.cpu(0) and x.stype == "default"
    assert x.T.shape == (4, 3, 2)


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
       st.sampled_from(["+", "-", "*", "/", "**", "%"]))
def test_broadcasting_arithmetic_equals_numpy(shapes, opname):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2, shapes.input_shapes[0]).astype(np.float32)
    b = rng.uniform(0.5, 2, shapes.input_shapes[1]).astype(np.float32)
    ops = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "**": np.power, "%": np.mod}
    got = eval(f"x {opname} y", {"x": nd.array(a), "y": nd.array(b)})  # noqa: S307 - fixed operator set
    np.testing.assert_allclose(got.asnumpy(), ops[opname](a, b), rtol=1e-5, atol=1e-6)


def test_scalar_and_reflected_operators():
    x = nd.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose((2 - x).asnumpy(), [1, 0, -2])
    np.testing.assert_allclose((8 / x).asnumpy(), [8, 4, 2])
    np.testing.assert_allclose((2 ** x).asnumpy(), [2, 4, 16])
    np.testing.assert_allclose((x ** 2).asnumpy(), [1, 4, 16])
    np.testing.assert_allclose((-x).asnumpy(), [-1, -2, -4])
    np.testing.assert_allclose(abs(nd.array([-1.5])).asnumpy(), [1.5])
    np.testing.assert_allclose((np.float32(1) + x).asnumpy(), [2, 3, 5])


def test_scalar_is_cast_to_integer_dtype_first():
    np.testing.assert_array_equal((nd.array([1, 2], dtype="int32") + 1.5).asnumpy(), [2, 3])


def test_comparisons_return_input_dtype():
    x, y = nd.array([1, 2, 3]), nd.array([1, 3, 2])
    for got, want in [(x == y, [1, 0, 0]), (x != y, [0, 1, 1]), (x > y, [0, 0, 1]), (x >= 2, [0, 1, 1]),
                      (x < y, [0, 1, 0]), (x <= 1, [1, 0, 0])]:
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.asnumpy(), want)


def test_mismatched_dtypes_and_shapes_are_clear_errors():
    with pytest.raises(MXNetError, match="dtype mismatch"):
        nd.ones((2,), dtype="float64") + nd.ones((2,))
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(4,\)"):
        nd.ones((2, 3)) + nd.ones((4,))
    with pytest.raises(TypeError):
        nd.ones((2,)) + "a"


def test_in_place_operators_and_assignment():
    x = nd.zeros((2, 3))
    y = x
    x += 1
    x *= 3
    x -= 1
    x /= 2
    assert y is x
    np.testing.assert_allclose(x.asnumpy(), np.ones((2, 3)))
    x[:] = 5
    x[1, 1:3] = nd.array([7, 8])
    x[0] = np.array([1, 2, 3])
    np.testing.assert_array_equal(x.asnumpy(), [[1, 2, 3], [5, 7, 8]])


def test_basic_indexing_is_a_view_and_int_index_keeps_a_dimension():
    x = nd.arange(6).reshape((2, 3))
    row = x[1]
    row[:] = 0
    np.testing.assert_array_equal(x.asnumpy(), [[0, 1, 2], [0, 0, 0]])
    assert nd.array([1, 2, 3])[1].shape == (1,)   # legacy MXNet: no 0-d results
    assert x[:, 1].shape == (2,) and x[1, 2].shape == (1,)


def test_advanced_indexing():
    x = nd.arange(12).reshape((3, 4))
    np.testing.assert_array_equal(x[[0, 2]].asnumpy(), np.arange(12).reshape(3, 4)[[0, 2]])
    np.testing.assert_array_equal(x[nd.array([2, 0])].asnumpy(), np.arange(12).reshape(3, 4)[[2, 0]])
    # legacy MXNet reads a float index array as integer indices (there are no boolean masks)
    assert x[x > 5].shape == (3, 4, 4)


def test_reshape_special_codes_and_view_semantics():
    x = nd.arange(24).reshape((2, 3, 4))
    assert x.reshape((0, -1)).shape == (2, 12)
    assert x.reshape((-2,)).shape == (2, 3, 4)
    assert x.reshape((-3, 4)).shape == (6, 4)
    assert x.reshape((-4, 1, 2, -2)).shape == (1, 2, 3, 4)
    assert x.reshape(6, 4).shape == (6, 4)
    y = x.reshape((24,))
    y[0] = 100
    assert x[0, 0, 0].asscalar() == 100


def test_conversions():
    x = nd.array([[1.5, 2.5]])
    assert isinstance(x.asnumpy(), np.ndarray) and x.asnumpy() is not x.asnumpy()
    assert nd.array([3.0]).asscalar() == 3.0 and isinstance(nd.array([3.0]).asscalar(), np.float32)
    with pytest.raises(ValueError, match="size 1"):
        x.asscalar()
    assert x.astype("int32").dtype == np.int32 and x.astype(np.float64).dtype == np.float64
    z = x.copy()
    z[:] = 0
    assert x.asnumpy()[0, 0] == 1.5
    dst = nd.zeros((1, 2))
    x.copyto(dst)
    np.testing.assert_array_equal(dst.asnumpy(), x.asnumpy())
    assert x.as_in_context(nd.cpu()) is x
    assert float(nd.array([2.0])) == 2.0 and int(nd.array([3.0])) == 3
    assert bool(nd.array([1.0])) and not bool(nd.array([0.0]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(nd.ones((2,)))
    assert len(nd.ones((4, 2))) == 4 and [r.shape for r in nd.ones((2, 3))] == [(3,), (3,)]
    x.wait_to_read()


def test_repr_matches_mxnet():
    assert repr(nd.array([[1, 2], [3, 4]])) == "\n[[1. 2.]\n [3. 4.]]\n<NDArray 2x2 @cpu(0)>"


def test_pickle_round_trip():
    x = nd.array([[1, 2], [3, 4]], dtype="float64")
    y = pickle.loads(pickle.dumps(x))
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    assert y.dtype == np.float64


def test_fluent_methods_come_from_the_registry():
    x = nd.array([[-1.0, 2.0], [3.0, -4.0]])
    np.testing.assert_allclose(x.relu().asnumpy(), [[0, 2], [3, 0]])
    np.testing.assert_allclose(x.sum(axis=1).asnumpy(), [1, -1])
    np.testing.assert_allclose(x.abs().max().asnumpy(), [4])
    assert x.transpose().shape == (2, 2) and x.expand_dims(axis=0).shape == (1, 2, 2)


def test_contexts():
    with nd.Context("cpu", 0):
        assert nd.current_context() == nd.cpu(0)
    assert str(nd.gpu(1)) == "gpu(1)" and nd.gpu(1) != nd.cpu(1)
    if nd.num_gpus() == 0:
        with pytest.raises(MXNetError):
            nd.zeros((2,), ctx=nd.gpu(0))
