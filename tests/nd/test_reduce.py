"""Reductions, ordering, broadcasting and add_n: MXNet 1.9.1 behaviour the generic
op-spec checks (tests/nd/specs/reduce.py) do not pin down.

Expected values marked "MXNet" were read from mxnet 1.9.1 itself.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import AttrError, AutogradError, MXNetError, ShapeError
from hybridgraph.nd.registry import get_op
from tests.op_specs import arr, shapes


def _grad(fn, x, head=None):
    """(output(s) as numpy, d(sum(head * out0))/dx)."""
    x = nd.array(x, dtype=np.asarray(x).dtype if hasattr(x, "dtype") else "float32")
    x.attach_grad()
    with autograd.record():
        y = fn(x)
    ys = y if isinstance(y, list) else [y]
    autograd.backward(ys[:1], [nd.ones_like(ys[0]) if head is None else nd.array(head, dtype=ys[0].dtype)])
    return [o.asnumpy() for o in ys], x.grad.asnumpy()


# -- declarations --------------------------------------------------------------

@pytest.mark.parametrize("name,canonical", [
    ("sum_axis", "sum"), ("max_axis", "max"), ("min_axis", "min"),
    ("broadcast_axes", "broadcast_axis"), ("ElementWiseSum", "add_n")])
def test_aliases(name, canonical):
    assert get_op(name) is get_op(canonical)


@pytest.mark.parametrize("name,defaults", [
    ("sum", {"axis": None, "keepdims": False, "exclude": False}),
    ("norm", {"ord": 2, "axis": None, "out_dtype": None, "keepdims": False}),
    ("argmax", {"axis": None, "keepdims": False}),
    ("topk", {"axis": -1, "k": 1, "ret_typ": "indices", "is_ascend": False, "dtype": "float32"}),
    ("sort", {"axis": -1, "is_ascend": True}),
    ("argsort", {"axis": -1, "is_ascend": True, "dtype": "float32"}),
    ("broadcast_to", {"shape": ()}),
    ("broadcast_like", {"lhs_axes": None, "rhs_axes": None}),
    ("broadcast_axis", {"axis": (), "size": ()})])
def test_attribute_defaults_match_mxnet(name, defaults):
    assert get_op(name).schema.parse({}).values() == defaults


def test_attribute_strings_parse_like_mxnet_json():
    a = get_op("topk").parse_attrs({"axis": "None", "k": "3", "ret_typ": "both", "is_ascend": "True"})
    assert (a.axis, a.k, a.ret_typ, a.is_ascend) == (None, 3, "both", True)
    assert get_op("sum").parse_attrs({"axis": "(0, 2)", "keepdims": "1"}).axis == (0, 2)
    with pytest.raises(AttrError, match="ret_typ"):
        get_op("topk").parse_attrs({"ret_typ": "values"})
    with pytest.raises(AttrError, match="ord"):
        get_op("norm").parse_attrs({"ord": "3"})


def test_output_names_and_visibility():
    topk = get_op("topk")
    for ret, names, nvis in (("value", ("output0", "output1"), 1), ("both", ("output0", "output1"), 2),
                             ("indices", ("output",), 1), ("mask", ("output",), 1)):
        a = topk.parse_attrs({"ret_typ": ret})
        assert topk.output_names(a) == names and topk.num_visible_outputs(a) == nvis
    assert get_op("sort").num_visible_outputs(get_op("sort").parse_attrs({})) == 1
    add_n = get_op("add_n")
    assert add_n.input_names(add_n.parse_attrs({"num_args": "3"})) == ("arg0", "arg1", "arg2")


# -- reductions -----------------------------------------------------------------

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11


@pytest.mark.parametrize("attrs,shape", [
    ({}, (1,)), ({"keepdims": True}, (1, 1, 1)), ({"axis": ()}, (1,)), ({"axis": (), "exclude": True}, (1,)),
    ({"exclude": True}, (1,)), ({"axis": (0, 1, 2)}, (1,)), ({"axis": (0, 1, 2), "exclude": True}, (2, 3, 4)),
    ({"axis": 1, "exclude": True}, (3,)), ({"axis": 1, "exclude": True, "keepdims": True}, (1, 3, 1)),
    ({"axis": (-1, 0)}, (3,))])
def test_reduction_shapes_follow_mxnet(attrs, shape):
    """A full reduction is (1,), never 0-d; axis=() reduces everything even with exclude."""
    assert nd.sum(nd.array(X), **attrs).shape == shape
    assert get_op("sum").infer_shape(get_op("sum").parse_attrs(attrs), X.shape)[1] == [shape]


@pytest.mark.parametrize("axis", [3, -4, (1, 1), (1, -2)])
def test_bad_reduction_axes(axis):
    with pytest.raises(ShapeError, match="sum"):
        nd.sum(nd.array(X), axis=axis)


def test_infer_shape_with_unknown_dims():
    op = get_op("sum")
    assert op.infer_shape(op.parse_attrs({"axis": "1"}), None) is None
    assert op.infer_shape(op.parse_attrs({"axis": "1"}), (0, 5))[1] == [(0,)]


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "uint8"])
def test_integer_reductions_keep_dtype(dtype):
    x = np.array([[1, 3, 3], [2, 0, 5]], dtype=dtype)
    for name in ("sum", "mean", "prod", "max", "min", "nansum", "nanprod", "argmax", "argmin"):
        assert getattr(nd, name)(nd.array(x, dtype=dtype), axis=1).dtype == np.dtype(dtype), name
    np.testing.assert_array_equal(nd.mean(nd.array(x, dtype=dtype), axis=1).asnumpy(), [2, 2])


def test_integer_mean_truncates_toward_zero():
    """MXNet: mean([-7, 0, 0]) = -2 and mean([-2, 0, 0]) = 0 in int32 (C division)."""
    assert nd.mean(nd.array([-7, 0, 0], dtype="int32")).asnumpy().tolist() == [-2]
    assert nd.mean(nd.array([-2, 0, 0], dtype="int32")).asnumpy().tolist() == [0]


def test_float16_sum_accumulates_in_float32():
    x = np.full(4096, 1.0, dtype=np.float16)
    assert float(nd.sum(nd.array(x, dtype="float16")).asnumpy()[0]) == 4096.0


def test_max_min_of_empty_axis_is_a_clear_error():
    with pytest.raises(ShapeError, match="empty"):
        nd.max(nd.empty((2, 0)), axis=1)
    assert nd.sum(nd.empty((2, 0)), axis=1).asnumpy().tolist() == [0.0, 0.0]
    assert np.isnan(nd.mean(nd.empty((2, 0)), axis=1).asnumpy()).all()


def test_max_gradient_goes_to_every_tie():
    """MXNet: every element equal to the maximum receives the head gradient."""
    (y,), g = _grad(lambda x: nd.max(x, axis=1), np.array([[1, 3, 3], [2, 0, -1]], np.float32))
    np.testing.assert_array_equal(y, [3, 2])
    np.testing.assert_array_equal(g, [[0, 1, 1], [1, 0, 0]])
    _, g = _grad(lambda x: nd.min(x, axis=1), np.array([[1, 1, 3], [2, 0, -1]], np.float32))
    np.testing.assert_array_equal(g, [[1, 1, 0], [0, 0, 1]])


def test_prod_gradient_is_exact_at_zeros():
    """The product of the other elements (MXNet's out/x gives NaN at zeros)."""
    x = np.array([[1, 0, 3], [2, 0, 0], [2, 3, 4]], np.float32)
    (y,), g = _grad(lambda v: nd.prod(v, axis=1), x)
    np.testing.assert_array_equal(y, [0, 0, 24])
    np.testing.assert_array_equal(g, [[0, 3, 0], [0, 0, 0], [12, 8, 6]])


def test_nan_reductions_and_gradients():
    x = np.array([[1, np.nan, 3], [2, 0, np.nan]], np.float32)
    (y,), g = _grad(lambda v: nd.nansum(v, axis=1), x)
    np.testing.assert_array_equal(y, [4, 2])
    np.testing.assert_array_equal(g, [[1, 0, 1], [1, 1, 0]])
    (y,), g = _grad(lambda v: nd.nanprod(v, axis=1), x)
    np.testing.assert_array_equal(y, [3, 0])
    np.testing.assert_array_equal(g, [[3, 0, 1], [0, 2, 0]])


def test_mean_gradient_divides_by_the_reduced_count():
    _, g = _grad(lambda v: nd.mean(v, axis=(0, 2)), X)
    np.testing.assert_allclose(g, np.full(X.shape, 1 / 8))


def test_second_order_gradient_through_sum():
    """Gradient rules are registry ops: d/dx of d(sum(x^3))/dx = 6x."""
    x = nd.array([1.0, -2.0, 0.5])
    x.attach_grad()
    with autograd.record():
        y = nd.sum(x * x * x)
        (dx,) = autograd.grad([y], [x], create_graph=True)
    dx.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, -12.0, 3.0], rtol=1e-6)


# -- norm --------------------------------------------------------------------------

def test_norm_values_and_dtypes():
    x = np.array([[0, -1, 0], [2, 0, 1]], np.float32)
    np.testing.assert_allclose(nd.norm(nd.array(x)).asnumpy(), [np.sqrt(6)], rtol=1e-6)
    np.testing.assert_allclose(nd.norm(nd.array(x), ord=1, axis=(0, 1)).asnumpy(), [4.0])
    assert nd.norm(nd.array(x), out_dtype="float64").dtype == np.float64
    # integer inputs: the norm truncated to the input dtype (MXNet: sqrt(24) -> 4)
    xi = nd.array([[1, 3, 3], [2, 0, -1]], dtype="int32")
    assert nd.norm(xi).asnumpy().tolist() == [4] and nd.norm(xi).dtype == np.int32
    op = get_op("norm")
    assert op.infer_type(op.parse_attrs({"out_dtype": "float64"}), np.dtype("float32"))[1] == [np.float64]


def test_norm_does_not_overflow_float32():
    x = np.full((4,), 1e30, np.float32)
    np.testing.assert_allclose(nd.norm(nd.array(x)).asnumpy(), [2e30], rtol=1e-6)


def test_norm_gradient_at_zero_is_zero():
    """A subgradient 0 where the L2 norm is 0 (MXNet gives NaN)."""
    _, g = _grad(lambda v: nd.norm(v, axis=1), np.array([[0, 0, 0], [2, 0, 1]], np.float32))
    np.testing.assert_allclose(g, [[0, 0, 0], [2 / np.sqrt(5), 0, 1 / np.sqrt(5)]], rtol=1e-6)
    _, g = _grad(lambda v: nd.norm(v, ord=1), np.array([[0, -1, 0], [2, 0, 1]], np.float32))
    np.testing.assert_array_equal(g, [[0, -1, 0], [1, 0, 1]])


# -- argmax / argmin / argmax_channel -------------------------------------------------

def test_arg_reductions():
    x = nd.array([[3, 1, 2], [0, 5, 4]])
    assert nd.argmax(x).asnumpy().tolist() == [4.0]
    assert nd.argmax(x, keepdims=True).shape == (1, 1)
    assert nd.argmax(x, axis=-1, keepdims=True).asnumpy().tolist() == [[0.0], [1.0]]
    assert nd.argmin(x, axis=0).asnumpy().tolist() == [1.0, 0.0, 0.0]
    assert nd.argmax(nd.array([[3, 3, 2]]), axis=1).asnumpy().tolist() == [0.0]  # first on ties
    assert nd.argmax(nd.array([[1, np.nan, 2]]), axis=1).asnumpy().tolist() == [1.0]  # MXNet: NaN wins
    with pytest.raises(ShapeError, match="axis 2"):
        nd.argmax(x, axis=2)


def test_arg_reductions_have_zero_gradient():
    _, g = _grad(lambda v: nd.argmax(v, axis=1), np.array([[3, 1, 2], [0, 5, 4]], np.float32))
    np.testing.assert_array_equal(g, np.zeros((2, 3)))


def test_argmax_channel_is_argmax_over_axis_1():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 5
    np.testing.assert_array_equal(nd.argmax_channel(nd.array(x)).asnumpy(), np.argmax(x, axis=1))
    with pytest.raises(ShapeError):
        nd.argmax_channel(nd.array([1.0, 2.0]))
    x = nd.array([[1.0, 2.0]])
    x.attach_grad()
    with autograd.record():
        y = nd.argmax_channel(x)
    with pytest.raises(AutogradError, match="argmax_channel"):
        y.backward()


# -- ordering -------------------------------------------------------------------------

def test_ordering_ties_keep_index_order():
    """MXNet: topk / argsort return equal elements in index order, ascending or not."""
    ones = nd.array([[1, 1, 1, 1]])
    assert nd.topk(ones, k=2).asnumpy().tolist() == [[0.0, 1.0]]
    assert nd.topk(ones, k=2, is_ascend=True).asnumpy().tolist() == [[0.0, 1.0]]
    assert nd.argsort(ones, is_ascend=False).asnumpy().tolist() == [[0.0, 1.0, 2.0, 3.0]]


def test_topk_variants():
    x = nd.array([[3, 1, 2], [0, 5, 4]])
    assert nd.topk(x, k=0, ret_typ="value").asnumpy().tolist() == [[3, 2, 1], [5, 4, 0]]
    assert nd.topk(x, k=-1, ret_typ="value").shape == (2, 3)
    v, i = nd.topk(x, axis=None, k=2, ret_typ="both", dtype="int64")
    assert v.asnumpy().tolist() == [5, 4] and i.asnumpy().tolist() == [4, 5] and i.dtype == np.int64
    assert nd.topk(x, axis=None, k=2, ret_typ="mask").asnumpy().tolist() == [[0, 0, 0], [0, 1, 1]]
    m = nd.topk(nd.array([[3, 1, 2]], dtype="int32"), k=2, ret_typ="mask", dtype="int64")
    assert m.dtype == np.int32  # the mask has the data's dtype
    with pytest.raises(ShapeError, match="k"):
        nd.topk(x, k=5)


def test_topk_index_dtype_must_be_exact():
    with pytest.raises(AttrError, match="uint8"):
        nd.topk(nd.zeros((300,)), k=1, dtype="uint8")
    with pytest.raises(AttrError, match="float16"):
        nd.argsort(nd.zeros((3000,)), dtype="float16")


def test_topk_types():
    op = get_op("topk")
    f32 = np.dtype("float32")
    for ret, outs in (("value", [f32, np.int32]), ("indices", [np.int64]), ("mask", [f32]),
                      ("both", [f32, np.int64])):
        assert op.infer_type(op.parse_attrs({"ret_typ": ret, "dtype": "int64"}), f32)[1] == outs


def test_sort_and_topk_gradients_scatter_through_indices():
    """MXNet's values; sort with the default axis runs backward too (an MXNet defect)."""
    x = np.array([[3, 1, 2], [0, 5, 4]], np.float32)
    (y,), g = _grad(nd.sort, x, head=[[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(y, [[1, 2, 3], [0, 4, 5]])
    np.testing.assert_array_equal(g, [[3, 1, 2], [4, 6, 5]])
    _, g = _grad(lambda v: nd.topk(v, k=2, ret_typ="value"), x, head=[[1, 2], [4, 5]])
    np.testing.assert_array_equal(g, [[1, 0, 2], [0, 4, 5]])
    _, g = _grad(lambda v: nd.topk(v, k=2, ret_typ="indices"), x)
    np.testing.assert_array_equal(g, np.zeros_like(x))
    _, g = _grad(lambda v: nd.sort(v, axis=None, is_ascend=False), x, head=np.arange(6))
    np.testing.assert_array_equal(g, [[2, 4, 3], [5, 0, 1]])


@given(st.data())
def test_sort_matches_numpy(data):
    x = data.draw(arr(shapes(max_dims=3), dtype=np.float32))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    np.testing.assert_array_equal(nd.sort(nd.array(x), axis=axis).asnumpy(), np.sort(x, axis=axis))
    np.testing.assert_array_equal(nd.sort(nd.array(x), axis=axis, is_ascend=False).asnumpy(),
                                  np.flip(np.sort(x, axis=axis), axis=axis))


# -- broadcasting -----------------------------------------------------------------------

def test_broadcast_to_and_axis():
    x = nd.array(np.arange(3, dtype=np.float32).reshape(1, 3))
    assert nd.broadcast_to(x, shape=(4, 0)).shape == (4, 3)
    assert nd.broadcast_axis(nd.ones((2, 1, 1)), axis=(1, 2), size=(3, 4)).shape == (2, 3, 4)
    assert nd.broadcast_axes(nd.ones((2, 1)), axis=1, size=3).shape == (2, 3)
    for bad in ((3,), (4, 4), ()):
        with pytest.raises(ShapeError, match="broadcast_to"):
            nd.broadcast_to(x, shape=bad)
    with pytest.raises(ShapeError, match="size 1"):
        nd.broadcast_axis(nd.ones((2, 2)), axis=1, size=3)
    with pytest.raises(ShapeError, match="range"):
        nd.broadcast_axis(nd.ones((2, 1)), axis=-1, size=3)
    with pytest.raises(AttrError, match="same length"):
        nd.broadcast_axis(nd.ones((2, 1, 1)), axis=(1, 2), size=(3,))


def test_broadcast_to_result_is_writable():
    y = nd.broadcast_to(nd.ones((1, 3)), shape=(2, 3))
    y[:] = 5
    assert y.asnumpy().tolist() == [[5, 5, 5], [5, 5, 5]]


def test_broadcast_like():
    assert nd.broadcast_like(nd.ones((1, 3, 1)), nd.ones((5, 6)), lhs_axes=(0, 2), rhs_axes=(0, 1)).shape == (5, 3, 6)
    assert nd.broadcast_like(nd.ones((1, 1)), nd.ones((4, 3)), lhs_axes=(-2,), rhs_axes=(-1,)).shape == (3, 1)
    # only one of the axes given: a plain broadcast (MXNet)
    assert nd.broadcast_like(nd.ones((1, 1)), nd.ones((4, 3)), lhs_axes=(1,)).shape == (4, 3)
    # int rhs, float lhs: the output has lhs's dtype (MXNet)
    assert nd.broadcast_like(nd.ones((1, 3)), nd.ones((4, 3), dtype="int32")).dtype == np.float32
    # fewer lhs dimensions: padded with leading 1s (hybridgraph, needed by the unbroadcast gradient)
    assert nd.broadcast_like(nd.ones((3,)), nd.ones((2, 3))).shape == (2, 3)
    with pytest.raises(ShapeError):
        nd.broadcast_like(nd.ones((2, 3)), nd.ones((4, 3)))
    with pytest.raises(ShapeError, match="not 1"):
        nd.broadcast_like(nd.ones((2, 3)), nd.ones((4, 5)), lhs_axes=(0,), rhs_axes=(0,))
    with pytest.raises(AttrError, match="empty"):
        nd.broadcast_like(nd.ones((1, 1)), nd.ones((4, 3)), lhs_axes=(), rhs_axes=())
    with pytest.raises(AttrError, match="same length"):
        nd.broadcast_like(nd.ones((1, 1)), nd.ones((4, 3)), lhs_axes=(0, 1), rhs_axes=(0,))


def test_broadcast_like_gradient_sums_back_and_rhs_gets_zeros():
    lhs, rhs = nd.ones((1, 3)), nd.ones((4, 3))
    lhs.attach_grad()
    rhs.attach_grad()
    with autograd.record():
        y = nd.broadcast_like(lhs, rhs)
    y.backward()
    assert lhs.grad.asnumpy().tolist() == [[4, 4, 4]]
    assert rhs.grad.asnumpy().tolist() == [[0] * 3] * 4


def test_sum_to_like_gradient_with_fewer_dims():
    """_sum_to_like's gradient broadcasts back through broadcast_like across ranks."""
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = nd.array([1.0, 2.0, 3.0])
    b.attach_grad()
    with autograd.record():
        y = nd.broadcast_mul(x, b)
        (db,) = autograd.grad([nd.sum(y * y)], [b], create_graph=True)
    assert db.shape == (3,)
    db.backward()
    np.testing.assert_allclose(b.grad.asnumpy(), 2 * (x.asnumpy() ** 2).sum(axis=0))


# -- add_n ----------------------------------------------------------------------------

def test_add_n():
    a, b, c = nd.ones((2,)), nd.full((2,), 2.0), nd.full((2,), 3.0)
    assert nd.add_n(a, b, c).asnumpy().tolist() == [6, 6]
    assert nd.ElementWiseSum(a, b).asnumpy().tolist() == [3, 3]
    assert nd.add_n(a).asnumpy().tolist() == [1, 1]
    assert nd.add_n(a, a).asnumpy().tolist() == [2, 2] and a.asnumpy().tolist() == [1, 1]
    with pytest.raises(MXNetError, match="dtype"):
        nd.add_n(a, nd.ones((2,), dtype="int32"))
    with pytest.raises(ShapeError, match="add_n"):
        nd.add_n(a, nd.ones((3,)))
    with pytest.raises(AttrError, match="num_args"):
        nd.add_n(a, b, num_args=3)


def test_add_n_gradient_copies_head_to_every_input():
    xs = [nd.array([1.0, 2.0]) for _ in range(3)]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = nd.add_n(*xs)
    y.backward(nd.array([3.0, 4.0]))
    assert all(x.grad.asnumpy().tolist() == [3, 4] for x in xs)


# -- the same gradient rules build symbolic graphs ----------------------------------------

@pytest.mark.parametrize("name,attrs,shape", [
    ("topk", {"k": 2, "ret_typ": "value", "axis": None}, (3, 4)), ("sort", {"is_ascend": False}, (3, 4)),
    ("prod", {"axis": 1}, (3, 4)), ("nanprod", {}, (3, 4)), ("max", {"axis": 1}, (3, 4)),
    ("norm", {"axis": 0}, (3, 4)), ("mean", {"axis": (0, 1), "keepdims": True}, (3, 4)),
    ("sum", {"axis": 1, "exclude": True}, (3, 4)), ("broadcast_to", {"shape": (2, 3, 4)}, (1, 3, 4))])
def test_symbolic_gradient_matches_eager(name, attrs, shape):
    from hybridgraph import symbol
    rng = np.random.default_rng(0)
    xv = rng.standard_normal(shape).astype(np.float32)
    ex = getattr(symbol, name)(symbol.var("x"), **attrs).simple_bind(nd.cpu(), x=shape)
    ex.arg_dict["x"][:] = nd.array(xv)
    ex.forward(is_train=True)
    head = nd.array(rng.standard_normal(ex.outputs[0].shape).astype(np.float32))
    ex.backward([head])
    (y,), g = _grad(lambda v: getattr(nd, name)(v, **attrs), xv, head=head.asnumpy())
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), y, rtol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), g, rtol=1e-5, atol=1e-6)
