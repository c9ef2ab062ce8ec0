"""Indexing operators beyond the generic spec table: MXNet 1.9.1's edge-case
values (recorded by hand from the real library), errors, shape/type inference
in both directions, gradients that accumulate, and symbolic use.

Where MXNet 1.9.1 reads or writes out of bounds (batch_take on rank > 2,
SequenceLast / SequenceReverse with lengths outside [1, T], gather_nd's
gradient with negative indices) the expected values are the correct ones.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import AttrError, DTypeError, MXNetError, ShapeError
from hybridgraph.nd.registry import get_op


def _a():
    return nd.array(np.arange(12).reshape(3, 4))


def _shapes(name, attrs, *shapes):
    op = get_op(name)
    return op.infer_shape(op.parse_attrs(attrs), *shapes)


def _types(name, attrs, *dtypes):
    op = get_op(name)
    return op.infer_type(op.parse_attrs(attrs), *[None if t is None else np.dtype(t) for t in dtypes])


def _grads(fn, *arrays):
    xs = [nd.array(x) for x in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = fn(*xs)
    y.backward()
    return y, [x.grad.asnumpy() for x in xs]


# -- take ----------------------------------------------------------------------

def test_take_truncates_then_clips_or_wraps_like_mxnet():
    rows = nd.take(_a(), nd.array([-1.5, -0.5, 0.7, 2.9, 5])).asnumpy()[:, 0]
    assert rows.tolist() == [0, 0, 0, 8, 8]
    rows = nd.take(_a(), nd.array([-1, -4, 3, 5, -0.5, -1.5]), mode="wrap").asnumpy()[:, 0]
    assert rows.tolist() == [8, 8, 0, 8, 0, 8]


@pytest.mark.parametrize("idx", [[3], [-1]])
def test_take_raise_mode_rejects_out_of_bound(idx):
    with pytest.raises(IndexError, match="out of bound"):
        nd.take(_a(), nd.array(idx), mode="raise")
    with pytest.raises(MXNetError):
        nd.take(_a(), nd.array(idx), mode="raise")


def test_take_bad_axis_and_mode():
    with pytest.raises(AttrError, match="axis 2"):
        nd.take(_a(), nd.array([1]), axis=2)
    with pytest.raises(AttrError, match="mode"):
        nd.take(_a(), nd.array([1]), mode="nearest")


@pytest.mark.parametrize("mode,counts", [("clip", [2, 0, 1]), ("wrap", [1, 0, 2]), ("raise", [2, 0, 1])])
def test_take_gradient_accumulates_repeated_rows(mode, counts):
    idx = [-1, 5, 0] if mode != "raise" else [0, 0, 2]
    _, (g,) = _grads(lambda a: nd.take(a, nd.array(idx), mode=mode), np.zeros((3, 4)))
    assert g[:, 0].tolist() == counts


def test_take_keeps_dtype_and_index_dtype_free():
    out = nd.take(nd.array([[1, 2], [3, 4]], dtype="int32"), nd.array([1.0]))
    assert out.dtype == np.int32 and out.asnumpy().tolist() == [[3, 4]]
    assert _types("take", {}, "float64", "int32") == ([np.dtype("float64"), np.dtype("int32")],
                                                      [np.dtype("float64")])


def test_take_second_order_gradient():
    a = nd.array(np.random.default_rng(0).standard_normal((3, 2)))
    a.attach_grad()
    with autograd.record():
        y = nd.take(a, nd.array([0, 2, 2]))
        (g,) = [autograd.grad(nd.sum(nd.square(y)), [a], create_graph=True)[0]]
        z = nd.sum(nd.square(g))
    z.backward()
    # g = 2 * counts * a  ->  d sum(g^2)/da = 8 * counts^2 * a
    counts = np.array([1, 0, 2])[:, None]
    np.testing.assert_allclose(a.grad.asnumpy(), 8 * counts ** 2 * a.asnumpy(), rtol=1e-6)


# -- Embedding ---------------------------------------------------------------------

def test_embedding_clips_indices_and_sums_weight_gradient():
    w = np.arange(12.0).reshape(6, 2)
    out = nd.Embedding(nd.array([[-1, 7], [2.5, 0]]), nd.array(w), input_dim=6, output_dim=2)
    assert out.asnumpy().tolist() == [[[0, 1], [10, 11]], [[4, 5], [0, 1]]]
    data = nd.array([-1, 5, 0, 7])
    _, (gw,) = _grads(lambda ww: nd.Embedding(data, ww, input_dim=6, output_dim=2), w)
    assert gw[:, 0].tolist() == [2, 0, 0, 0, 0, 2]


def test_embedding_data_gets_no_gradient():
    d = nd.array([1.0, 2.0])
    d.attach_grad()
    w = nd.ones((4, 3))
    w.attach_grad()
    with autograd.record():
        y = nd.Embedding(d, w, input_dim=4, output_dim=3)
    y.backward()
    assert d.grad.asnumpy().tolist() == [0, 0]


def test_embedding_infers_weight_and_checks_it():
    attrs = {"input_dim": 6, "output_dim": 3}
    assert _shapes("Embedding", attrs, (2, 5), None) == ([(2, 5), (6, 3)], [(2, 5, 3)])
    with pytest.raises(ShapeError, match="weight"):
        _shapes("Embedding", attrs, (2, 5), (4, 3))
    # the weight's dtype wins over the `dtype` attribute; the attribute fills an unknown one
    assert _types("Embedding", {**attrs, "dtype": "float64"}, "int32", None)[1] == [np.dtype("float64")]
    assert _types("Embedding", {**attrs, "dtype": "float64"}, "float32", "float32")[1] == [np.dtype("float32")]


def test_embedding_symbol_creates_weight():
    from hybridgraph import symbol as sym
    e = sym.Embedding(sym.var("data"), input_dim=6, output_dim=3, name="emb")
    assert e.list_arguments() == ["data", "emb_weight"]
    assert e.infer_shape(data=(2, 5))[0] == [(2, 5), (6, 3)]


# -- batch_take ------------------------------------------------------------------

def test_batch_take_clips_per_row():
    out = nd.batch_take(_a(), nd.array([0, 5, -1], dtype="int32"))
    assert out.asnumpy().tolist() == [0, 7, 8]


def test_batch_take_rank3_uses_rows_of_last_axis():
    a = np.arange(24.0).reshape(2, 3, 4)
    idx = np.array([[0, 1, 2], [3, 0, 1]], dtype=np.int32)
    out = nd.batch_take(nd.array(a), nd.array(idx, dtype="int32")).asnumpy()
    np.testing.assert_array_equal(out, np.take_along_axis(a, idx[..., None], axis=-1)[..., 0])


def test_batch_take_checks():
    with pytest.raises(ShapeError, match="at least 2"):
        _shapes("batch_take", {}, (4,), (4,))
    with pytest.raises(ShapeError, match="indices"):
        _shapes("batch_take", {}, (3, 4), (4,))
    with pytest.raises(DTypeError, match="int32"):
        _types("batch_take", {}, "float32", "float32")
    assert _types("batch_take", {}, "float32", None)[0][1] == np.dtype("int32")


def test_batch_take_is_not_differentiable():
    a = _a()
    a.attach_grad()
    with autograd.record():
        y = nd.batch_take(a, nd.array([0, 1, 2], dtype="int32"))
    with pytest.raises(MXNetError, match="not differentiable"):
        y.backward()


# -- pick --------------------------------------------------------------------------

def test_pick_modes_match_mxnet():
    assert nd.pick(_a(), nd.array([-1, 5, 1.7]), axis=1).asnumpy().tolist() == [0, 7, 9]
    assert nd.pick(_a(), nd.array([-1, 5, 1.7]), axis=1, mode="wrap").asnumpy().tolist() == [3, 5, 9]


def test_pick_index_shapes_and_keepdims():
    a = _a()
    assert nd.pick(a, nd.array([0, 1, 2]), axis=1, keepdims=True).shape == (3, 1)
    assert nd.pick(a, nd.array([[0], [1], [2]]), axis=1).asnumpy().tolist() == [0, 5, 10]
    assert nd.pick(nd.array([1.0, 2, 3]), nd.array([2]), axis=0).shape == (1,)
    with pytest.raises(ShapeError, match="index"):
        _shapes("pick", {"axis": 1}, (3, 4), (1, 3))
    assert _shapes("pick", {"axis": 0, "keepdims": True}, (3, 2), None) == ([(3, 2), (2,)], [(1, 2)])


def test_pick_axis_none_is_rejected_as_mxnet():
    with pytest.raises(AttrError, match="axis=None"):
        nd.pick(_a(), nd.array([0, 1, 2]), axis=None)


def test_pick_gradient_places_head_gradient():
    _, (g,) = _grads(lambda x: nd.pick(x, nd.array([0, 5, 2]), axis=1), np.zeros((3, 4)))
    np.testing.assert_array_equal(g, np.eye(4)[[0, 3, 2]])


# -- one_hot -----------------------------------------------------------------------

def test_one_hot_out_of_range_rows_are_off():
    out = nd.one_hot(nd.array([-1, 0, 2.7, 5, 1]), depth=3).asnumpy()
    assert out.tolist() == [[0, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 1, 0]]


def test_one_hot_values_cast_to_dtype():
    out = nd.one_hot(nd.array([[1, 2]]), depth=3, on_value=3.5, off_value=-1, dtype="int32")
    assert out.dtype == np.int32 and out.asnumpy().tolist() == [[[-1, 3, -1], [-1, -1, 3]]]
    assert nd.one_hot(nd.array([0]), depth=0).shape == (1, 0)
    with pytest.raises(DTypeError, match="bfloat16"):
        nd.one_hot(nd.array([0]), depth=2, dtype="bfloat16")
    assert _types("one_hot", {"depth": 2, "dtype": "int64"}, None)[1] == [np.dtype("int64")]


# -- where -------------------------------------------------------------------------

def test_where_condition_along_first_axis():
    x, y = nd.ones((3, 2, 2)), nd.zeros((3, 2, 2))
    out = nd.where(nd.array([1, 0, 2]), x, y).asnumpy()
    assert out[:, 0, 0].tolist() == [1, 0, 1]
    assert nd.where(nd.array([[np.nan, 0], [0, 1]]), nd.ones((2, 2)), nd.zeros((2, 2))).asnumpy().tolist() \
        == [[1, 0], [0, 1]]


def test_where_shape_and_type_errors():
    with pytest.raises(ShapeError, match="condition"):
        _shapes("where", {}, (4,), (3, 4), (3, 4))
    with pytest.raises(ShapeError, match="'x' and 'y'"):
        _shapes("where", {}, (3,), (3, 4), (3, 5))
    with pytest.raises(DTypeError):
        _types("where", {}, "int32", "float32", "float64")
    # as MXNet's WhereOpShape: nothing is inferred until the condition's shape is known
    assert _shapes("where", {}, None, (3, 2), None) is None
    assert _shapes("where", {}, (3,), (3, 2), None) == ([(3,), (3, 2), (3, 2)], [(3, 2)])


def test_where_gradient_splits_by_condition():
    c = nd.array([1, 0])
    _, (gx, gy) = _grads(lambda x, y: nd.where(c, x, y), np.array([1.0, 2]), np.array([3.0, 4]))
    assert gx.tolist() == [1, 0] and gy.tolist() == [0, 1]


# -- gather_nd / scatter_nd ---------------------------------------------------------------

def test_gather_nd_negative_and_fractional_indices_like_mxnet():
    a = _a()
    assert nd.gather_nd(a, nd.array([[-1, 0], [1, -2]])).asnumpy().tolist() == [9, 2]
    # MXNet adds the axis size to a negative float before truncating: -0.5 -> 3.5 -> 3
    assert nd.gather_nd(a, nd.array([[1.7], [-0.5]])).asnumpy().tolist() == [7]
    assert nd.gather_nd(a, nd.array([[2], [1]], dtype="int32")).asnumpy().tolist() == [9]


def test_gather_nd_errors():
    with pytest.raises(IndexError):
        nd.gather_nd(_a(), nd.array([[3], [0]]))
    with pytest.raises(ShapeError, match="at least 2"):
        nd.gather_nd(_a(), nd.array([2, 1]))
    with pytest.raises(ShapeError, match="exceeds"):
        _shapes("gather_nd", {}, (3, 4), (3, 2))


def test_gather_nd_gradient_accumulates_repeats_including_negative():
    # MXNet 1.9.1 drops the contribution of the negative index (-3 == 0); it counts here
    _, (g,) = _grads(lambda a: nd.gather_nd(a, nd.array([[0, 0, -3], [1, 1, 1]])), np.zeros((3, 4)))
    assert g[0, 1] == 3 and g.sum() == 3


def test_scatter_nd_values_gradient_and_shape_inference():
    out = nd.scatter_nd(nd.array([1, 2, 3]), nd.array([[0, 1, 1], [1, 2, 2]]), shape=(2, 3))
    assert out.asnumpy().tolist() == [[0, 1, 0], [0, 0, 3]]
    _, (g,) = _grads(lambda d: nd.scatter_nd(d, nd.array([[1], [0]]), shape=(2, 3)) * 2,
                     np.array([1.0]))
    assert g.tolist() == [2]
    assert _shapes("scatter_nd", {"shape": (3, 4)}, None, (1, 2)) == ([(2, 4), (1, 2)], [(3, 4)])
    with pytest.raises(ShapeError, match="data"):
        _shapes("scatter_nd", {"shape": (3, 4)}, (3,), (2, 2))


# -- Sequence* ---------------------------------------------------------------------------

def _seq():
    return nd.array(np.arange(24).reshape(4, 3, 2))


def test_sequence_mask_truncates_lengths_and_casts_value():
    out = nd.SequenceMask(_seq(), nd.array([2.7, 1.2, -1]), use_sequence_length=True).asnumpy()
    assert (out[:, 0] != 0).sum() == 3 and (out[1:, 1] == 0).all() and (out[:, 2] == 0).all()
    ints = nd.array(np.arange(6).reshape(3, 2), dtype="int32")
    out = nd.SequenceMask(ints, nd.array([2, 1]), use_sequence_length=True, value=-1.5)
    assert out.asnumpy().tolist() == [[0, 1], [2, -1], [-1, -1]]


def test_sequence_mask_inputs_follow_use_sequence_length():
    op = get_op("SequenceMask")
    assert op.input_names(op.parse_attrs({})) == ("data",)
    assert op.input_names(op.parse_attrs({"use_sequence_length": True})) == ("data", "sequence_length")
    assert _shapes("SequenceMask", {"use_sequence_length": True, "axis": 1}, (4, 3, 2), None)[0][1] == (4,)
    assert _types("SequenceMask", {"use_sequence_length": True}, "float64", None)[0][1] == np.dtype("float64")
    with pytest.raises(AttrError, match="axis"):
        nd.SequenceMask(_seq(), nd.array([1, 1, 1, 1]), use_sequence_length=True, axis=2)


def test_sequence_last_positions_and_clipping():
    out = nd.SequenceLast(_seq(), nd.array([2.7, 1.2, 0]), use_sequence_length=True).asnumpy()
    assert out.tolist() == [[6, 7], [2, 3], [4, 5]]    # length 0 is clipped to the first step
    assert nd.SequenceLast(_seq(), axis=1).asnumpy().tolist() == [[4, 5], [10, 11], [16, 17], [22, 23]]
    assert nd.SequenceLast(nd.array(np.arange(6).reshape(3, 2))).asnumpy().tolist() == [4, 5]
    assert _shapes("SequenceLast", {"axis": 1}, (4, 3, 2)) == ([(4, 3, 2)], [(4, 2)])


def test_sequence_last_gradient():
    _, (g,) = _grads(lambda d: nd.SequenceLast(d, nd.array([2, 4, 1]), use_sequence_length=True),
                     np.zeros((4, 3, 2)))
    assert g[:, :, 0].T.tolist() == [[0, 1, 0, 0], [0, 0, 0, 1], [1, 0, 0, 0]]


def test_sequence_reverse_lengths():
    out = nd.SequenceReverse(_seq(), nd.array([2.7, 1.2, 9]), use_sequence_length=True).asnumpy()
    assert out[:, 0, 0].tolist() == [6, 0, 12, 18]
    assert out[:, 1, 0].tolist() == [2, 8, 14, 20]
    assert out[:, 2, 0].tolist() == [22, 16, 10, 4]    # a length past T reverses everything
    with pytest.raises(AttrError, match="axis"):
        nd.SequenceReverse(_seq(), axis=1)


@given(st.data())
def test_sequence_reverse_is_its_own_inverse(data):
    t, b = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 4))
    x = nd.array(np.random.default_rng(t * 7 + b).standard_normal((t, b, 2)))
    lengths = nd.array(data.draw(st.lists(st.integers(0, t), min_size=b, max_size=b)))
    kw = {"use_sequence_length": True}
    twice = nd.SequenceReverse(nd.SequenceReverse(x, lengths, **kw), lengths, **kw)
    np.testing.assert_array_equal(twice.asnumpy(), x.asnumpy())


def test_sequence_ops_reject_rank_one():
    with pytest.raises(ShapeError, match="rank"):
        _shapes("SequenceLast", {}, (3,))


# -- symbolic use --------------------------------------------------------------------------

def test_take_gradient_through_an_executor():
    from hybridgraph import symbol as sym
    t = sym.take(sym.var("w"), sym.var("i"))
    ex = t.simple_bind(nd.cpu(), w=(4, 3), i=(5,), type_dict={"i": "int32"},
                       grad_req={"w": "write", "i": "null"})
    ex.arg_dict["i"][:] = np.array([0, 1, 1, 3, 3])
    ex.forward(is_train=True)
    ex.backward(nd.ones((5, 3)))
    assert ex.grad_dict["w"].asnumpy()[:, 0].tolist() == [1, 2, 0, 2]


def test_scatter_add_without_ufunc_at_matches_numpy():
    """The fallback for array modules whose ufuncs lack `.at` accumulates the same way."""
    import types

    from hybridgraph.nd.ops.indexing_ops import scatter_add
    shim = types.SimpleNamespace(add=types.SimpleNamespace(), arange=np.arange)
    idx = np.array([0, 2, 2, 1, 2])
    vals = np.random.default_rng(0).standard_normal((5, 2, 3))
    want = np.zeros((4, 2, 3))
    np.add.at(want, idx, vals)
    got = scatter_add(shim, np.zeros((4, 2, 3)), idx, vals)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got1 = scatter_add(shim, np.zeros(4), idx, vals[:, 0, 0])
    np.testing.assert_allclose(got1, np.bincount(idx, vals[:, 0, 0], minlength=4), rtol=1e-12)


def test_a_none_input_keyword_counts_as_not_given():
    # MXNet's generated functions skip None inputs: sequence_length=None with the flag off is fine
    s = sym.SequenceReverse(sym.var("d"), sequence_length=None, use_sequence_length=False)
    assert s.list_arguments() == ["d"]
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    assert nd.SequenceReverse(x, sequence_length=None).asnumpy().tolist() == [[3.0, 4.0], [1.0, 2.0]]
    with pytest.raises(AttrError, match="unexpected input"):
        sym.SequenceReverse(sym.var("d"), sequence_length=sym.var("l"))
