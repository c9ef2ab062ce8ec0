"""Convolution's training-step paths: the weight gradient alone where the data's gradient
is not wanted (the first layer of a network), and the stride-1 data gradient laid out on
the padded input's rows (_flat_data_grad). Each is checked against the plain path."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.nd.ops import conv_kernels as ck
from hybridgraph.symbol.plan import compile_graph

R = np.random.default_rng(5)


def _net():
    x = S.var("data")
    c1 = S.Activation(S.Convolution(x, kernel=(3, 3), num_filter=4, name="c1"), act_type="relu")
    c2 = S.Convolution(c1, kernel=(3, 3), num_filter=3, pad=(1, 1), no_bias=True, name="c2")
    out = S.FullyConnected(S.Flatten(c2), num_hidden=3, name="fc")
    return S.SoftmaxOutput(out, S.var("label"), name="sm")


def _ops(cg) -> list[str]:
    return [st.op.name for st in cg.last_plan.sched.steps]


def test_first_layer_data_gradient_is_not_computed():
    sym = _net()
    names = sym.list_arguments()
    shapes = {"data": (2, 2, 7, 7), "label": (2,)}
    arg_shapes, _, _ = sym.infer_shape(**shapes)
    vals = [R.standard_normal(s).astype(np.float32) if n != "label" else np.array([0, 2], np.float32)
            for n, s in zip(names, arg_shapes)]
    params = [n for n in names if n not in shapes]
    cg = compile_graph(sym._outputs, names, for_training=True, wrt=params)
    _, saved = cg.forward(vals, is_train=True)
    grads = cg.backward(saved, [None])
    ops = _ops(cg)
    assert ops.count("_backward_Convolution_weight") == 1 and ops.count("_backward_Convolution") == 1
    cg_all = compile_graph(sym._outputs, names, for_training=True, wrt=names[:1] + params)
    _, saved = cg_all.forward(vals, is_train=True)
    full = cg_all.backward(saved, [None])
    assert "_backward_Convolution_weight" not in _ops(cg_all)
    assert full[0].shape == shapes["data"]
    for n, g, f in zip(names, grads, full):
        if n in params:
            np.testing.assert_array_equal(g, f)
    # eager autograd agrees
    xs = {n: nd.array(v) for n, v in zip(names, vals)}
    for n in params:
        xs[n].attach_grad()
    with nd.autograd.record():
        c1 = nd.Activation(nd.Convolution(xs["data"], xs["c1_weight"], xs["c1_bias"], kernel=(3, 3),
                                          num_filter=4), act_type="relu")
        c2 = nd.Convolution(c1, xs["c2_weight"], kernel=(3, 3), num_filter=3, pad=(1, 1), no_bias=True)
        out = nd.SoftmaxOutput(nd.FullyConnected(nd.Flatten(c2), xs["fc_weight"], xs["fc_bias"], num_hidden=3),
                               xs["label"])
    out.backward()
    for n, g in zip(names, grads):
        if n in params:
            np.testing.assert_allclose(g, xs[n].grad.asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("xshape,wshape,pad,dilate", [
    ((3, 5, 12, 12), (6, 5, 5, 5), (0, 0), (1, 1)),       # LeNet-like: 12x12 from 8x8
    ((2, 3, 9, 7), (4, 3, 3, 2), (1, 0), (2, 1)),         # dilated, uneven padding
    ((2, 3, 6, 7, 5), (2, 3, 3, 2, 2), (0, 1, 0), (1, 1, 2)),   # 3-D
    ((1, 2, 11), (3, 2, 4), (1,), (2,)),                  # 1-D
])
def test_flat_data_gradient_equals_col2im(xshape, wshape, pad, dilate):
    nsp = len(xshape) - 2
    geo = ck.Geometry(tuple(wshape[2:]), (1,) * nsp, tuple(dilate), tuple(pad), 1)
    out_sp = geo.out_size(xshape[2:])
    g = R.standard_normal((xshape[0], wshape[0], *out_sp))
    w = R.standard_normal(wshape)
    got = ck.conv_data_grad(np, g, w, xshape, geo)
    cols = np.matmul(w.reshape(1, wshape[0], -1).transpose(0, 2, 1), ck._ograd_rows(np, g, 1))
    want = ck._col2im(np, cols, xshape, geo, out_sp)
    assert got.shape == tuple(xshape)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
