"""Symbolic contrib.while_loop as one `_while_loop` node (symbol/loop_op.py): values and
gradients equal the NDArray version's, the graph does not grow with max_iterations, hybridized
blocks and nested loops work, and JSON export says it cannot write the node."""
import numpy as np
import pytest

import hybridgraph as mx


def _cond(i, s, sc, f):
    return i < 4


def _func(i, s, sc, f):
    x = sc.take(i).squeeze(axis=0)
    out = x * s * f + 1
    return out, (i + 1, out)


def _eager(args, n_iter):
    a = {k: v.copy() for k, v in args.items()}
    for k in ("s", "sc", "f"):
        a[k].attach_grad()
    with mx.autograd.record():
        outs, (i, s) = mx.nd.contrib.while_loop(
            lambda i, s: _cond(i, s, a["sc"], a["f"]), lambda i, s: _func(i, s, a["sc"], a["f"]),
            [a["i"], a["s"]], max_iterations=n_iter)
        total = (outs[:4] * 2).sum() + (s * 3).sum()
    total.backward()
    return outs[:4].asnumpy(), s.asnumpy(), {k: a[k].grad.asnumpy() for k in ("s", "sc", "f")}


def test_symbolic_loop_matches_eager_values_and_gradients_with_1000_iterations():
    rng = np.random.default_rng(0)
    args = {"i": mx.nd.array([0]), "s": mx.nd.array(rng.uniform(-1, 1, 3)),
            "sc": mx.nd.array(rng.uniform(-1, 1, (6, 3))), "f": mx.nd.array(rng.uniform(-1, 1, 3))}
    sc, f = mx.sym.var("sc"), mx.sym.var("f")
    outs, (_, s) = mx.sym.contrib.while_loop(lambda i, s: _cond(i, s, sc, f), lambda i, s: _func(i, s, sc, f),
                                             [mx.sym.var("i"), mx.sym.var("s")], max_iterations=1000)
    assert len(outs.get_internals().list_outputs()) < 60        # one loop node, not 1000 steps
    total = mx.sym.Group([mx.sym.sum(outs.slice_axis(axis=0, begin=0, end=4) * 2) + mx.sym.sum(s * 3),
                          outs, s])
    grads = {k: mx.nd.zeros_like(v) for k, v in args.items() if k != "i"}
    exe = total.bind(mx.cpu(), args={k: v.copy() for k, v in args.items()}, args_grad=grads,
                     grad_req={"i": "null", "s": "write", "sc": "write", "f": "write"})
    out = exe.forward(is_train=True)
    exe.backward([mx.nd.ones((1,)), mx.nd.zeros(out[1].shape), mx.nd.zeros((3,))])
    ref_outs, ref_s, ref_grads = _eager(args, 1000)
    assert out[1].shape == (1000, 3) and not out[1].asnumpy()[4:].any()
    np.testing.assert_allclose(out[1].asnumpy()[:4], ref_outs, rtol=1e-5)
    np.testing.assert_allclose(out[2].asnumpy(), ref_s, rtol=1e-5)
    for k, g in ref_grads.items():
        np.testing.assert_allclose(exe.grad_dict[k].asnumpy(), g, rtol=1e-4, atol=1e-6)


def test_hybridized_loop_matches_eager_and_records():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, y):
            return F.contrib.while_loop(lambda a, b: F.sum(a) < 20, lambda a, b: (a * 2, (a * 2, b + a)),
                                        [x, y], max_iterations=8)

    net, x, y = Net(), mx.nd.array([1.0, 2.0]), mx.nd.array([0.5, 0.5])
    eo, (ea, eb) = net(x, y)
    net.hybridize()
    x.attach_grad()
    with mx.autograd.record():
        ho, (ha, hb) = net(x, y)
        loss = ho.sum() + hb.sum()
    loss.backward()
    assert ho.shape == (8, 2)
    np.testing.assert_allclose(ho.asnumpy()[:3], eo.asnumpy()[:3])
    np.testing.assert_allclose(hb.asnumpy(), eb.asnumpy())
    # 3 steps run: outputs 2x, 4x, 8x; b gains x + 2x + 4x
    np.testing.assert_allclose(x.grad.asnumpy(), [2 + 4 + 8 + 7, 2 + 4 + 8 + 7])


def test_nested_loops_and_a_cond_that_ignores_the_loop_variables():
    i, acc, limit = mx.sym.var("i"), mx.sym.var("acc"), mx.sym.var("limit")

    def outer(i, acc):
        _, (j, inner_acc) = mx.sym.contrib.while_loop(lambda j, a: j < 2, lambda j, a: (None, (j + 1, a + i)),
                                                      [mx.sym.zeros_like(i), acc], max_iterations=5)
        return None, (i + 1, inner_acc)

    _, (_, total) = mx.sym.contrib.while_loop(lambda i, a: i < limit, outer, [i, acc], max_iterations=10)
    res = total.eval(i=mx.nd.array([1]), acc=mx.nd.array([0]), limit=mx.nd.array([4]))[0]
    assert res.asscalar() == 2 * (1 + 2 + 3)
    _, (k,) = mx.sym.contrib.while_loop(lambda k: limit > 0, lambda k: (None, (k + 1,)), [i], max_iterations=7)
    assert k.eval(i=mx.nd.array([0]), limit=mx.nd.array([1]))[0].asscalar() == 7


def test_loop_graph_cannot_be_written_as_json():
    _, (k,) = mx.sym.contrib.while_loop(lambda k: k < 3, lambda k: (None, (k + 1,)), [mx.sym.var("k")],
                                        max_iterations=5)
    with pytest.raises(NotImplementedError, match="while_loop cannot be written as MXNet JSON"):
        k.tojson()
