"""The symbolic gradient pass: equals eager autograd on random graphs; fan-out
sums, loss ops, ZERO_GRAD, non-differentiable ops, naming hygiene."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph import symbol as S  # noqa: N812 - short like mx.sym
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.registry import get_op, has_op
from hybridgraph.symbol.gradient import build_backward
from tests.symbol.test_infer import SHAPES, build, programs


NAMES = ["x0", "x1", "x2"]


def _inputs(seed: int) -> dict:
    rs = np.random.RandomState(seed)
    return {n: rs.uniform(-1, 1, s).astype(np.float64) for n, s in zip(NAMES, SHAPES)}


def _eager_grads(steps, values: dict, head: np.ndarray) -> dict:
    xs = [nd.array(values[n], dtype="float64") for n in NAMES]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        out = build(steps, nd, xs)[-1]
    out.backward(nd.array(head, dtype="float64"))
    return {n: x.grad.asnumpy() for n, x in zip(NAMES, xs)}


@given(programs(), st.integers(0, 2 ** 16))
def test_gradient_equals_eager_autograd(steps, seed):
    xs = [S.var(n) for n in NAMES]
    out = build(steps, S, xs)[-1]
    wrt = out.list_arguments()
    grads = out.gradient(wrt)
    values = _inputs(seed)
    head = np.random.RandomState(seed + 1).uniform(-1, 1, out.infer_shape(
        **{n: values[n].shape for n in wrt})[1][0])
    feed = {n: nd.array(values[n], dtype="float64") for n in wrt}
    feed[f"{out.list_outputs()[0]}_head_grad"] = nd.array(head, dtype="float64")
    got = grads.eval(ctx=nd.cpu(), **{n: feed[n] for n in grads.list_arguments()})
    want = _eager_grads(steps, values, head)
    for name, g in zip(wrt, got):
        np.testing.assert_allclose(g.asnumpy(), want[name], rtol=1e-10, atol=1e-12, err_msg=name)


@given(programs(), st.integers(0, 2 ** 16))
def test_executor_backward_equals_eager_autograd(steps, seed):
    xs = [S.var(n) for n in NAMES]
    out = build(steps, S, xs)[-1]
    values = _inputs(seed)
    args = {n: nd.array(values[n], dtype="float64") for n in out.list_arguments()}
    exe = out.bind(nd.cpu(), args, args_grad={n: nd.zeros(a.shape, dtype="float64") for n, a in args.items()})
    y = exe.forward(is_train=True)[0]
    head = np.random.RandomState(seed + 1).uniform(-1, 1, y.shape)
    exe.backward(nd.array(head, dtype="float64"))
    want = _eager_grads(steps, values, head)
    for name, g in exe.grad_dict.items():
        np.testing.assert_allclose(g.asnumpy(), want[name], rtol=1e-10, atol=1e-12, err_msg=name)


def test_broadcast_mul_gradient_builds_a_valid_graph():
    y = S.broadcast_mul(S.var("p"), S.var("q"))
    ga, gb = y.gradient(["p", "q"])
    hg = y.list_outputs()[0] + "_head_grad"
    feed = {"p": nd.ones((2, 3)), "q": nd.full((1, 3), 2.0), hg: nd.ones((2, 3))}
    np.testing.assert_allclose(ga.eval(ctx=nd.cpu(), **{n: feed[n] for n in ga.list_arguments()})[0].asnumpy(), 2.0)
    np.testing.assert_allclose(gb.eval(ctx=nd.cpu(), **{n: feed[n] for n in gb.list_arguments()})[0].asnumpy(), 2.0)


def test_fan_out_gradients_are_summed():
    x = S.var("x")
    y = x * x + S.sin(x)              # x feeds three consumers
    (g,) = y.gradient(["x"])
    v = np.array([0.3, -0.7, 1.1])
    out = g.eval(ctx=nd.cpu(), x=nd.array(v), **{y.list_outputs()[0] + "_head_grad": nd.ones((3,))})
    np.testing.assert_allclose(out[0].asnumpy(), 2 * v + np.cos(v), rtol=1e-6)


def test_one_head_gradient_variable_per_output():
    a, b = S.var("a"), S.var("b")
    y = S.Group([a * 3.0, S.sin(a), b * 2.0])
    grads = y.gradient(["a", "b"])
    heads = [n + "_head_grad" for n in y.list_outputs()]
    assert sorted(grads.list_arguments()) == sorted(["a", *heads])   # d(2b)/db needs no b
    h = [np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.array([3.0, 4.0])]
    av = np.array([0.2, 0.4])
    feed = {"a": nd.array(av), "b": nd.zeros((2,)), **{n: nd.array(v) for n, v in zip(heads, h)}}
    ga, gb = grads.eval(ctx=nd.cpu(), **{n: feed[n] for n in grads.list_arguments()})
    np.testing.assert_allclose(ga.asnumpy(), 3 * h[0] + np.cos(av) * h[1], rtol=1e-6)
    np.testing.assert_allclose(gb.asnumpy(), 2 * h[2], rtol=1e-6)


def test_blocked_argument_gets_zeros_and_unknown_names_fail():
    a, b = S.var("a"), S.var("b")
    y = S.sin(a) + S.BlockGrad(b)
    ga, gb = y.gradient(["a", "b"])
    feed = {"a": nd.ones((2,)), "b": nd.ones((2,)), y.list_outputs()[0] + "_head_grad": nd.ones((2,))}
    np.testing.assert_allclose(gb.eval(ctx=nd.cpu(), **{n: feed[n] for n in gb.list_arguments()})[0].asnumpy(), 0)
    with pytest.raises(MXNetError, match=r"\['nope'\] are not arguments"):
        y.gradient(["nope"])


def test_loss_ops_ignore_head_gradients():
    data = S.var("data")
    loss = S.make_loss(S.square(data))
    (g,) = loss.gradient(wrt=["data"])
    assert g.list_arguments() == ["data"]          # no head gradient variable
    v = np.array([[1.0, -2.0, 0.5]], dtype=np.float32)
    np.testing.assert_allclose(g.eval(ctx=nd.cpu(), data=nd.array(v))[0].asnumpy(), 2 * v)


def test_zero_grad_rules_give_zeros():
    x = S.var("x")
    y = S.floor(x) * 2.0 + x
    (g,) = y.gradient(["x"])
    out = g.eval(ctx=nd.cpu(), x=nd.array([0.5, 1.5]), **{y.list_outputs()[0] + "_head_grad": nd.ones((2,))})
    np.testing.assert_allclose(out[0].asnumpy(), [1.0, 1.0])


def test_missing_gradient_rule_is_a_clear_error():
    op = next((o for o in ("argmax", "argsort", "topk", "_digamma") if has_op(o)
               and get_op(o).gradient is None), None)
    assert op is not None, "argmax, argsort, topk and _digamma all have gradient rules or are missing"
    x = S.var("x")
    y = getattr(S._internal, op)(x, name="nograd")
    with pytest.raises(MXNetError, match=rf"{op} \(node 'nograd'\) is not differentiable"):
        (y * 1.0).gradient(["x"])


def test_gradient_leaves_user_names_alone():
    with S.NameManager():
        x = S.var("x")
        S.sin(x)
        S.sin(x).gradient(["x"])
        assert S.sin(x).name == "sin2"
        assert S.cos(x).name == "cos0"


def test_build_backward_keeps_aux_mutating_nodes_alive():
    data = S.var("data")
    bn = S.BatchNorm(data, name="bn")
    gamma = [n for n in bn._graph().arguments() if n.name == "bn_gamma"][0]
    hg = S.var("hg")._outputs[0]
    back = build_backward(bn._outputs, [gamma], [hg])
    assert back.grads[0] is not None
    assert [e[0].op.name for e in back.keep_alive] == ["_backward_BatchNorm"]
