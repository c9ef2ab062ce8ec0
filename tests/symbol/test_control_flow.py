"""symbol.contrib.cond / foreach / while_loop: plain Symbols on the executor and
tracers in hybridized blocks give MXNet 1.9.1's numbers (tests/data/control_flow_ref.npz)
and the eager results; graph-level behaviour (where-based cond, unrolled loops,
export) and clear errors."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph.gluon import nn
from hybridgraph.gluon.hybrid_block import HybridBlock
from hybridgraph.gluon.testing import check_hybrid_consistency
from hybridgraph.nd import autograd
from hybridgraph.symbol.tracer import TraceError

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
sys.path.insert(0, DATA)
from control_flow_cases import CASES, make_inputs  # noqa: E402

REF = np.load(os.path.join(DATA, "control_flow_ref.npz"))
CASE_IDS = [c[0] for c in CASES]


def check_against_ref(name: str, extra: dict, outs: list, grads: dict) -> None:
    """Compare with MXNet's numbers; rows after the end of a while_loop are zeros."""
    steps = int(REF[f"{name}/steps"]) if f"{name}/steps" in REF else None
    for i, out in enumerate(outs):
        if steps is not None and i < extra.get("stacked", 0):
            np.testing.assert_array_equal(out[steps:], 0, err_msg=f"{name} output {i} padding")
            out = out[:steps]
        np.testing.assert_allclose(out, REF[f"{name}/out{i}"], rtol=1e-5, atol=1e-6, err_msg=f"{name} out {i}")
    for k, g in grads.items():
        np.testing.assert_allclose(g, REF[f"{name}/grad/{k}"], rtol=1e-5, atol=1e-6, err_msg=f"{name} grad {k}")


def heads_for(name: str, shapes: list) -> list:
    heads = []
    for i, shape in enumerate(shapes):
        h = np.zeros(shape, np.float32)
        rec = REF[f"{name}/head{i}"]
        h[tuple(slice(0, s) for s in rec.shape)] = rec
        heads.append(h)
    return heads


class CaseBlock(HybridBlock):
    """A block whose hybrid_forward is a shared case function."""

    def __init__(self, fn, names, **kwargs):
        super().__init__(**kwargs)
        self.fn, self.names = fn, names

    def hybrid_forward(self, F, *xs):
        return self.fn(F, **dict(zip(self.names, xs)))


@pytest.mark.parametrize("name,fn,shapes,extra", CASES, ids=CASE_IDS)
def test_symbol_executor_matches_mxnet(name, fn, shapes, extra):
    inputs = make_inputs(name, shapes)
    out = sym.Group(fn(sym, **{k: sym.var(k, shape=v.shape) for k, v in inputs.items()}))
    grads = {k: nd.zeros(v.shape) for k, v in inputs.items()}
    ex = out.bind(nd.cpu(), {k: nd.array(v) for k, v in inputs.items()}, args_grad=grads)
    outs = [o.asnumpy() for o in ex.forward(is_train=True)]
    ex.backward([nd.array(h) for h in heads_for(name, [o.shape for o in outs])])
    check_against_ref(name, extra, outs, {k: g.asnumpy() for k, g in grads.items()})
    _, out_shapes, _ = out.infer_shape(**{k: v.shape for k, v in inputs.items()})
    assert out_shapes == [o.shape for o in outs]


@pytest.mark.parametrize("name,fn,shapes,extra", CASES, ids=CASE_IDS)
def test_hybridized_matches_eager_and_mxnet(name, fn, shapes, extra):
    inputs = make_inputs(name, shapes)
    net = CaseBlock(fn, list(inputs))
    check_hybrid_consistency(net, list(inputs.values()), train_modes=(True,))
    net.hybridize()
    xs = [nd.array(v) for v in inputs.values()]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        outs = net(*xs)
    autograd.backward(outs, [nd.array(h) for h in heads_for(name, [o.shape for o in outs])])
    check_against_ref(name, extra, [o.asnumpy() for o in outs],
                      {k: x.grad.asnumpy() for k, x in zip(inputs, xs)})


# -- hybridized blocks with parameters, over drawn shapes -----------------------------------

class GatedDense(HybridBlock):
    """Dense, then a data-dependent branch on the output's sum."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = nn.Dense(3)

    def hybrid_forward(self, F, x):
        h = self.dense(x)
        return F.contrib.cond(F.sum(h) > 0, lambda: F.relu(h) * 2, lambda: F.tanh(h))


class TinyRNN(HybridBlock):
    """A tanh RNN over the first axis written with foreach."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.i2h = nn.Dense(4, flatten=False)
            self.h2h = nn.Dense(4, flatten=False, use_bias=False)

    def hybrid_forward(self, F, x, h0):
        def step(xt, states):
            h = F.tanh(self.i2h(xt) + self.h2h(states[0]))
            return h, [h]
        outs, states = F.contrib.foreach(step, x, [h0])
        return outs, states[0]


class Doubling(HybridBlock):
    """Doubles x until its absolute sum passes a limit (at most 4 times)."""

    def hybrid_forward(self, F, x):
        def cond(k, v):
            return F.sum(F.abs(v)) < 4

        def func(k, v):
            return [v, k], [k + 1, v * 2]
        outs, (k, v) = F.contrib.while_loop(cond, func, [F.zeros_like(F.sum(x)), x], max_iterations=4)
        return outs[0], outs[1], k, v


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.booleans())
def test_cond_block_consistency(batch, width, negate):
    rng = np.random.default_rng(batch * 10 + width)
    x = rng.standard_normal((batch, width)).astype(np.float32) * (-1 if negate else 1)
    net = GatedDense()
    net.initialize()
    check_hybrid_consistency(net, [x])


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3))
def test_foreach_rnn_consistency(length, batch):
    rng = np.random.default_rng(length * 10 + batch)
    net = TinyRNN()
    net.initialize()
    check_hybrid_consistency(net, [rng.standard_normal((length, batch, 3)).astype(np.float32),
                                   rng.standard_normal((batch, 4)).astype(np.float32)])


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 3), st.floats(0.05, 1.0))
def test_while_loop_block_consistency(width, scale):
    """Inputs with sum(|x|) < 4, so the eager loop runs at least once (with no step at all,
    MXNet's NDArray version returns no outputs while the symbolic one returns zero rows)."""
    x = (np.linspace(-1, 1, 2 * width).reshape(2, width) * scale).astype(np.float32)
    check_hybrid_consistency(Doubling(), [x])


def test_foreach_retraces_for_a_new_length():
    """Reading the data length marks the trace shape-dependent: each length has its own unrolling."""
    net = TinyRNN()
    net.initialize()
    h0 = nd.zeros((2, 4))
    for length in (2, 5, 2):
        x = nd.array(np.random.default_rng(length).standard_normal((length, 2, 3)))
        net.hybridize(False)
        want = net(x, h0)[0].asnumpy()
        net.hybridize()
        got = net(x, h0)[0].asnumpy()
        assert got.shape == (length, 2, 4)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_cond_block_reuses_one_graph_across_batch_sizes():
    net = GatedDense()
    net.initialize()
    for batch in (2, 3, 1):
        x = nd.array(np.random.default_rng(batch).standard_normal((batch, 5)))
        net.hybridize(False)
        want = net(x).asnumpy()
        net.hybridize()
        np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_nd_contrib_in_a_plain_forward_hands_over_to_the_tracer():
    """A forward written with nd.contrib.* keeps working when the block is hybridized."""
    class Block(HybridBlock):
        def forward(self, x):
            y = nd.contrib.cond(x.sum() > 0, lambda: x * 2, lambda: x - 1)
            outs, s = nd.contrib.foreach(lambda t, st: (t + st[0], [st[0] + t]), y, [nd.zeros_like(y[0])])
            res, (k,) = nd.contrib.while_loop(lambda k: k < 2, lambda k: ([k * 3 + x[0]], [k + 1]),
                                              [nd.zeros_like(x.sum())], max_iterations=3)
            return outs, s[0], res[0], k
    for sign in (1, -1):
        check_hybrid_consistency(Block(), [sign * np.arange(6, dtype=np.float32).reshape(3, 2) - 1])


def test_cond_nested_in_foreach_consistency():
    """A per-step data-dependent branch inside a loop body."""
    class Block(HybridBlock):
        def hybrid_forward(self, F, x):
            def step(xt, states):
                s = F.contrib.cond(F.sum(xt) > 0, lambda: states[0] + xt, lambda: states[0] * xt)
                return s * 2, [s]
            outs, states = F.contrib.foreach(step, x, [F.ones_like(x[0])])
            return outs, states[0]
    x = np.array([[1.0, 2.0], [-1.0, -3.0], [0.5, -0.25], [-2.0, 1.0]], np.float32)
    check_hybrid_consistency(Block(), [x])


def test_exported_cond_block_loads_back(tmp_path):
    from hybridgraph.gluon.symbol_block import SymbolBlock
    net = GatedDense()
    net.initialize()
    net.hybridize()
    x = nd.array(np.random.default_rng(0).standard_normal((3, 5)))
    want = net(x).asnumpy()
    net.export(str(tmp_path / "gated"))
    ops = {n["op"] for n in json.loads((tmp_path / "gated-symbol.json").read_text())["nodes"]}
    assert {"where", "broadcast_like", "Reshape"} <= ops
    loaded = SymbolBlock.imports(str(tmp_path / "gated-symbol.json"), ["data"], str(tmp_path / "gated-0000.params"))
    np.testing.assert_allclose(loaded(x).asnumpy(), want, rtol=1e-6, atol=1e-7)


def test_python_if_error_suggests_a_rewrite_that_works():
    class IfBlock(HybridBlock):
        def hybrid_forward(self, F, x):
            if x.sum() > 0:
                return x * 2
            return x

    class CondBlock(HybridBlock):
        def hybrid_forward(self, F, x):
            return F.contrib.cond(x.sum() > 0, lambda: x * 2, lambda: x)

    net = IfBlock()
    net.hybridize()
    with pytest.raises(TraceError, match=r"F\.contrib\.cond\(pred, lambda: x, lambda: y\)"):
        net(nd.ones((2, 2)))
    for v in (1.0, -1.0):
        check_hybrid_consistency(CondBlock(), [np.full((2, 2), v, np.float32)])


# -- graphs ----------------------------------------------------------------------------------------

def test_cond_graph_uses_where_and_evaluates_both_branches():
    x = sym.var("x")
    out = sym.contrib.cond(sym.sum(x) > 0, lambda: sym.exp(x), lambda: sym.log(x * -1))
    ops = [n["op"] for n in json.loads(out.tojson())["nodes"]]
    assert "where" in ops and "exp" in ops and "log" in ops and "_cond" not in ops
    (y,) = out.eval(x=nd.array([[-1.0, -2.0]]))
    np.testing.assert_allclose(y.asnumpy(), np.log([[1.0, 2.0]]), rtol=1e-6)
    with np.errstate(invalid="ignore"):  # the unselected branch runs too: log(-3) is NaN
        (y,) = out.eval(x=nd.array([[-1.0, 3.0]]))
    np.testing.assert_allclose(y.asnumpy(), np.exp([[-1.0, 3.0]]), rtol=1e-6)


def test_cond_json_round_trip():
    x = sym.var("x")
    out = sym.contrib.cond(sym.sum(x) < 3, lambda: [x * 2, x + 1], lambda: [x * x, x - 1])
    assert isinstance(out, list) and len(out) == 2
    loaded = sym.load_json(sym.Group(out).tojson())
    value = nd.array([[1.0, 3.0]])
    for a, b in zip(sym.Group(out).eval(x=value), loaded.eval(x=value)):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_cond_with_a_python_predicate_builds_one_branch():
    x = sym.var("x")
    assert sym.contrib.cond(True, lambda: x * 2, lambda: x) is not None
    out = sym.contrib.cond(0, lambda: x * 2, lambda: x + 1)
    ops = [n["op"] for n in json.loads(out.tojson())["nodes"]]
    assert ops == ["null", "_plus_scalar"]


def test_while_loop_on_plain_symbols_needs_no_shapes():
    i, s = sym.var("i"), sym.var("s")
    outs, (i_end, s_end) = sym.contrib.while_loop(lambda i, s: i <= 5, lambda i, s: ([i + s], [i + 1, s + i]),
                                                  [i, s], max_iterations=10)
    res = sym.Group(outs + [i_end, s_end]).eval(i=nd.array([0]), s=nd.array([1]))
    np.testing.assert_array_equal(res[0].asnumpy().ravel(), [1, 2, 4, 7, 11, 16, 0, 0, 0, 0])
    assert res[1].asscalar() == 6 and res[2].asscalar() == 16


def test_traced_while_loop_that_never_runs_gives_zero_rows():
    class Never(HybridBlock):
        def hybrid_forward(self, F, x):
            outs, v = F.contrib.while_loop(lambda v: F.sum(v) < -1, lambda v: ([v * 2], v + 1), x,
                                           max_iterations=3)
            return outs[0], v

    net = Never()
    net.hybridize()
    outs, v = net(nd.ones((2,)))
    assert outs.shape == (3, 2) and not outs.asnumpy().any()
    np.testing.assert_array_equal(v.asnumpy(), [1, 1])


def test_foreach_on_plain_symbols_needs_no_known_length():
    step = lambda x, s: (x + s[0], [s[0] * 2])
    outs, states = sym.contrib.foreach(step, sym.var("data"), [sym.var("state")])
    res = sym.Group([outs] + states).eval(data=nd.ones((2, 3)), state=nd.ones((3,)))
    np.testing.assert_array_equal(res[0].asnumpy(), [[2, 2, 2], [3, 3, 3]])
    np.testing.assert_array_equal(res[1].asnumpy(), [4, 4, 4])


# -- errors -----------------------------------------------------------------------------------------

def traced(fn):
    """Run fn(F, x) hybridized on a (2, 3) input."""
    class Block(HybridBlock):
        def hybrid_forward(self, F, x):
            return fn(F, x)
    net = Block()
    net.hybridize()
    return net(nd.ones((2, 3)))


@pytest.mark.parametrize("fn,match", [
    (lambda F, x: F.contrib.cond(F.sum(x) > 0, lambda: x, lambda: F.sum(x, axis=0)),
     r"cond: output 0 .*shapes differ, \(2, 3\) versus \(3,\)"),
    (lambda F, x: F.contrib.cond(F.sum(x) > 0, lambda: x, lambda: F.cast(x, dtype="float64")),
     "dtypes differ, float32 versus float64"),
    (lambda F, x: F.contrib.cond(F.sum(x) > 0, lambda: [x, x], lambda: [x]),
     "Number of outputs differs between then-branch and else-branch: 2 versus 1"),
    (lambda F, x: F.contrib.cond(F.sum(x) > 0, lambda: [x, [x]], lambda: [[x], x]), "nested differently"),
    (lambda F, x: F.contrib.cond(x > 0, lambda: x, lambda: x), r"pred must be an array of size 1.*\(2, 3\)"),
    (lambda F, x: F.contrib.cond(F.sum(x) > 0, lambda: x, lambda: 1.0), "else_func's output must be an array"),
    (lambda F, x: F.contrib.while_loop(lambda v: 1, lambda v: (v, v), x, max_iterations=2),
     "Return of cond must be a Symbol"),
    (lambda F, x: F.contrib.while_loop(lambda v: F.sum(v) < 3, lambda v: (v, F.sum(v)), x, max_iterations=2),
     r"loop variable 0 .*shapes differ, \(1,\) versus \(2, 3\)"),
    (lambda F, x: F.contrib.while_loop(lambda v: F.sum(v) < 3, lambda v: (v, [v, v]), x, max_iterations=2),
     "loop_vars should be consistent"),
    (lambda F, x: F.contrib.while_loop(lambda v: F.sum(v) < 3, lambda v: (v, v), x),
     "max_iterations should be specified"),
    (lambda F, x: F.contrib.foreach(lambda d, s: (d, [s[0], s[0]]), x, [F.zeros_like(x[0])]),
     "input and output loop_vars have different format"),
    (lambda F, x: F.contrib.foreach(lambda d, s: (d, s), [x, F.transpose(x)], [x]),
     "same length along axis 0"),
])
def test_traced_errors(fn, match):
    with pytest.raises((ValueError, TypeError), match=match):
        traced(fn)


def test_symbol_functions_reject_ndarrays_clearly():
    with pytest.raises(TypeError, match=r"take Symbols; call nd\.contrib"):
        sym.contrib.foreach(lambda d, s: (d, s), nd.ones((2, 2)), [nd.ones(2)])


def test_contrib_namespace_has_the_functions():
    from hybridgraph.symbol import control_flow
    assert sym.contrib.cond is control_flow.cond
    assert sym.contrib.foreach is control_flow.foreach
    assert sym.contrib.while_loop is control_flow.while_loop
