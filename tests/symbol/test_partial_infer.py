"""Partial shape inference (shapes with unknown dims: 0 in MXNet 1.x's legacy mode, -1 under
`mx.np_shape()`): unknown dims stay unknown through slice and broadcast, elementwise ops
unify dim by dim, transpose and reshape infer their input back from a known output, and a
creation op's -1 dim is filled by the graph. Every expected value was checked with MXNet 1.9.1."""
from __future__ import annotations

import pytest

import hybridgraph as mx
from hybridgraph.nd.errors import MXNetError

D = mx.sym.var("d")


@pytest.mark.parametrize("begin,end,step,want", [
    ((None, None), (None, 10), (), (0, 10)),
    ((None, None), (None, 10), (None, 2), (0, 5)),
    ((None, 3), (5, 10), (), (0, 7)),
    ((2, 3), (None, 10), (3, 3), (0, 3)),
])
def test_slice_keeps_unknown_dim(begin, end, step, want):
    out = mx.sym.slice(mx.sym.var("data", shape=(0, 20)), begin=begin, end=end, step=step)
    assert out.infer_shape_partial()[1][0] == want
    # a -1 dim in a variable's shape is unknown in either mode
    out = mx.sym.slice(mx.sym.var("data", shape=(-1, 20)), begin=begin, end=end, step=step)
    assert out.infer_shape_partial()[1][0] == want


def test_slice_np_shape_reads_minus_one():
    with mx.np_shape():
        v = mx.sym.var("data", shape=(-1, 20))
        assert mx.sym.slice(v, begin=(2, 3), end=(None, 10)).infer_shape_partial()[1][0] == (-1, 7)
        v = mx.sym.var("data", shape=(10, -1))
        assert mx.sym.slice_axis(v, axis=0, begin=0, end=5).infer_shape_partial()[1][0] == (5, -1)


def test_creation_minus_one_is_unknown():
    assert mx.sym.ones(shape=[-1, -1]).infer_shape_partial()[1] == [(0, 0)]
    o = mx.sym.ones(shape=(2, -1)) + mx.sym.ones(shape=(2, 5))
    assert o.infer_shape_partial()[1] == [(2, 5)]


@pytest.mark.parametrize("shape_a,shape_b,want", [
    ([2, 3], [-1, -1], (2, 3)), ([2, -1], [3, -1], (2, 3)), ([0, 4], [4, 3], (3, 4))])
def test_transpose_back_inference_executes(shape_a, shape_b, want):
    b = mx.sym.ones(shape=shape_a) + mx.sym.transpose(mx.sym.ones(shape=shape_b))
    y = b.bind(mx.cpu(), args={}).forward()[0]
    assert y.shape == want
    assert (y.asnumpy() == 2).all()


def test_transpose_axes_back_inference():
    n = mx.sym.elemwise_add(mx.sym.transpose(D, axes=(2, 0, 1)), mx.sym.var("e"))
    assert n.infer_shape_partial(d=(0, 3, 0), e=(5, 4, 3)) == ([(4, 3, 5), (5, 4, 3)], [(5, 4, 3)], [])


@pytest.mark.parametrize("spec,reverse,data,other,want_in", [
    ((0, -1), False, (0, 3, 5, 5), (2, 75), (2, 3, 5, 5)),
    ((0, -1), False, (2, 0, 5, 5), (2, 75), (2, 3, 5, 5)),
    ((-4, 2, -1, 0), False, (0, 5), (2, 3, 5), (6, 5)),
    ((-1,), True, (2, 0), (6,), (2, 3)),
    ((-2,), False, (2, 0, 5), (2, 3, 5), (2, 3, 5)),
    ((5, -1, 3), True, (0, 5, 3), (5, 4, 3), (4, 5, 3)),
    ((0, 0, -1), False, (0, 0, 2, 2), (2, 3, 4), (0, 0, 2, 2)),   # two unknowns: not decided
])
def test_reshape_back_inference(spec, reverse, data, other, want_in):
    n = mx.sym.elemwise_add(D.reshape(spec, reverse=reverse), mx.sym.var("e"))
    args, outs, _ = n.infer_shape_partial(d=data, e=other)
    assert args == [want_in, other] and outs == [other]


def test_elementwise_unifies_dim_by_dim():
    n = mx.sym.elemwise_add(D, mx.sym.var("e"))
    assert n.infer_shape_partial(d=(0, 3), e=(2, 0)) == ([(2, 3), (2, 3)], [(2, 3)], [])


@pytest.mark.parametrize("d,e,want", [
    ((0, 3), (2, 3), ((0, 3), (2, 3), (0, 3))),
    ((0, 1), (2, 3), ((0, 1), (2, 3), (0, 3))),
    ((0,), (4, 0, 1), ((0,), (4, 0, 1), (4, 0, 0))),
])
def test_broadcast_keeps_unknown_dims(d, e, want):
    n = mx.sym.broadcast_add(D, mx.sym.var("e"))
    args, outs, _ = n.infer_shape_partial(d=d, e=e)
    assert (*args, *outs) == want


def test_broadcast_partial_still_checks_known_dims():
    with pytest.raises(MXNetError):
        mx.sym.broadcast_add(D, mx.sym.ones(shape=(3, 3))).infer_shape_partial(d=(0, 2))
