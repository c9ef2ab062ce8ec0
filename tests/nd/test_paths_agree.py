"""Eager ≡ recorded ≡ Executor ≡ hybridized for every registry operator (issue 13, item 3).

Each operator's spec (tests/op_specs.py) draws inputs and attributes; some draws are
then broken on purpose (one input cast to another dtype, or given another shape). The
four ways of running an op must agree: the same values and dtypes, or the same error
class (an MXNetError) for the same inputs. MXNet 1.9.1 checks its shape and dtype rules
on every imperative call too, so broken inputs raise in all four or in none.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hybridgraph as mx
from hybridgraph import autograd, gluon, nd
from hybridgraph.nd.dispatch import invoke, parse_cached
from hybridgraph.nd.errors import AttrError, AutogradError, DTypeError, MXNetError, ShapeError
from hybridgraph.nd.registry import get_op
from tests.nd.specs import all_specs

#: operators with no outputs (they write their inputs): a hybridized block cannot return them, and
#: MXNet 1.9.1 itself crashes binding their Symbol; tests/nd/ops/test_breadth_ops.py checks them eagerly
NO_OUTPUTS = frozenset({"reset_arrays"})
SPECS = [s for s in all_specs() if s.name not in NO_OUTPUTS]
PATHS = ("eager", "recorded", "executor", "hybridized")
# a few draws per operator keep the ~300 operators inside CI's budget; `thorough` draws more
EXAMPLES = 3 if settings.default.max_examples <= 15 else settings.default.max_examples // 5
OTHER_DTYPES = (np.float32, np.float16, np.int32, np.float64)


class _OneOp(gluon.HybridBlock):
    """A block calling one operator on its inputs (hybridized: one graph node)."""

    def __init__(self, name: str, attrs: dict, n_inputs: int):
        super().__init__()
        self._op_name, self._attrs, self._n = name, attrs, n_inputs

    def forward(self, *xs):
        op = get_op(self._op_name)
        if self._n == 0 and getattr(xs[0], "_is_symbolic", False):   # creation ops: a dummy input
            return _symbolic_creation(self._op_name, self._attrs)
        return invoke(op, list(xs[:self._n]), dict(self._attrs))


def _symbolic_creation(name: str, attrs: dict):
    return getattr(mx.symbol.ops_namespace, name)(**attrs)


def _as_list(out) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _run(path: str, name: str, inputs: list, attrs: dict, is_train: bool):
    """("ok", [numpy outputs]) or ("error", exception) of one way of running the op."""
    op = get_op(name)
    try:
        xs = [nd.array(x, dtype=x.dtype) for x in inputs]
        if path == "eager":
            with autograd.train_mode() if is_train else autograd.predict_mode():
                out = invoke(op, xs, dict(attrs))
        elif path == "recorded":
            for x in xs:
                if np.dtype(x.dtype).kind == "f":
                    x.attach_grad()
            with autograd.record(train_mode=is_train):
                out = invoke(op, xs, dict(attrs))
        elif path == "executor":
            names = [f"in{i}" for i in range(len(xs))]
            sym = invoke(op, [mx.sym.var(n) for n in names], dict(attrs)) if xs else \
                _symbolic_creation(name, attrs)
            feed = dict(zip(names, xs))
            aux = {n: feed.pop(n) for n in sym.list_auxiliary_states() if n in feed}
            out = sym.bind(mx.cpu(), feed, aux_states=aux).forward(is_train=is_train)
        else:
            net = _OneOp(name, attrs, len(xs))
            net.hybridize()
            args = xs or [nd.zeros((1,))]
            with autograd.train_mode() if is_train else autograd.predict_mode():
                out = net(*args)
        return "ok", [o.asnumpy() for o in _as_list(out)]
    except MXNetError as exc:
        return "error", exc


def _break(draw, inputs: list) -> tuple[list, str]:
    """The inputs, or a copy with one input cast to another dtype or given another shape."""
    how = draw(st.sampled_from(("none", "none", "dtype", "shape"))) if inputs else "none"
    if how == "none":
        return inputs, how
    k = draw(st.integers(0, len(inputs) - 1))
    x = np.asarray(inputs[k])
    if how == "dtype":
        new = draw(st.sampled_from([d for d in OTHER_DTYPES if np.dtype(d) != x.dtype]))
        y = (np.nan_to_num(x) if np.dtype(new).kind == "i" else x).astype(new)
    elif x.ndim >= 2 and draw(st.booleans()):
        y = np.ascontiguousarray(x[..., :1] if x.shape[-1] > 1 else x[..., 0])
    else:
        y = np.stack([x, x], axis=-1)
    return [*inputs[:k], y, *inputs[k + 1:]], f"{how} of input {k}: {x.dtype}{x.shape} -> {y.dtype}{y.shape}"


def _tolerance(dtype) -> dict:
    return {"rtol": 2e-2, "atol": 2e-2} if np.dtype(dtype) == np.float16 else {"rtol": 1e-4, "atol": 1e-5}


_KINDS = (ShapeError, DTypeError, AttrError, AutogradError, NotImplementedError)


def _kind(exc: Exception) -> tuple:
    """The error classes an error belongs to (a plan's ExecutionError also has the eager class)."""
    return tuple(k.__name__ for k in _KINDS if isinstance(exc, k))


def _core(exc: Exception) -> str:
    """An error's first line: the same words on every path (nd.kernel.rule_verdict and
    kernel_message); graph paths add the node and the user's line on the lines after it."""
    return str(exc).split("\n", 1)[0]


def _agree(name: str, results: dict, random: bool, what: str) -> None:
    kinds = {p: r[0] for p, r in results.items()}
    if len(set(kinds.values())) > 1:
        detail = {p: (r[1] if r[0] == "error" else "ok") for p, r in results.items()}
        pytest.fail(f"{name} ({what}): the paths disagree on raising: {detail}")
    if kinds["eager"] == "error":
        classes = {p: _kind(r[1]) for p, r in results.items()}
        assert len(set(classes.values())) == 1, f"{name} ({what}): different error classes {classes}"
        core = _core(results["eager"][1])
        for p, r in results.items():
            assert _core(r[1]) == core, f"{name} ({what}): {p}'s message differs from eager's {core!r}: {r[1]}"
        return
    ref = results["eager"][1]
    for p in PATHS[1:]:
        got = results[p][1]
        assert len(got) == len(ref), f"{name} ({what}): {p} gave {len(got)} outputs, eager {len(ref)}"
        for i, (g, r) in enumerate(zip(got, ref)):
            assert g.dtype == r.dtype, f"{name} ({what}) output {i}: {p} {g.dtype} vs eager {r.dtype}"
            assert g.shape == r.shape, f"{name} ({what}) output {i}: {p} {g.shape} vs eager {r.shape}"
            if not random:
                np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), equal_nan=True,
                                           err_msg=f"{name} ({what}) output {i}: {p} vs eager",
                                           **_tolerance(r.dtype))


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_every_op_runs_the_same_on_every_path(spec):
    op = get_op(spec.name)

    @settings(max_examples=EXAMPLES)
    @given(st.data())
    def check(data):
        inputs, attrs = spec.case(data.draw)
        inputs = [np.asarray(x) for x in inputs]
        inputs, what = _break(data.draw, inputs)
        a = parse_cached(op, dict(attrs)) if attrs else op.schema.parse({})
        random = op.random_for(a)
        results = {p: _run(p, spec.name, inputs, attrs, spec.is_train) for p in PATHS}
        _agree(spec.name, results, random, what)
    check()


# -- the cases MXNet 1.9.1 raises on (checked with the real thing) ----------------------------

def _each_path(fn_eager, inputs):
    """Run `fn_eager` eagerly, recorded with gradients attached, and hybridized."""
    out = {}
    for path in ("eager", "recorded", "hybridized"):
        xs = [x.copy() for x in inputs]
        try:
            if path == "eager":
                fn_eager(nd, *xs)
            elif path == "recorded":
                for x in xs:
                    x.attach_grad()
                with autograd.record():
                    fn_eager(nd, *xs)
            else:
                class Net(gluon.HybridBlock):
                    def hybrid_forward(self, F, *args):
                        return fn_eager(F, *args)
                net = Net()
                net.hybridize()
                net(*xs)
            out[path] = None
        except MXNetError as exc:
            out[path] = exc
    return out


@pytest.mark.parametrize("fn", [lambda F, a, b: F.broadcast_add(a, b), lambda F, a, b: a + b],
                         ids=["broadcast_add", "operator +"])
def test_float32_plus_float64_raises_on_every_path(fn):
    """MXNet: 'Incompatible attr in node at 1-th input: expected float32, got float64'."""
    got = _each_path(fn, [nd.ones((2, 3)), nd.ones((2, 3), dtype="float64")])
    for path, exc in got.items():
        assert isinstance(exc, DTypeError), f"{path}: {exc!r}"
        assert "expected float32, got float64" in str(exc), f"{path}: {exc}"
        # the same words; the op differs for `+` (a Symbol's + is elemwise_add, as in MXNet)
        assert _core(exc).split(": ", 1)[1] == _core(got["eager"]).split(": ", 1)[1], f"{path}: {exc}"


def test_elemwise_add_does_not_broadcast_eagerly():
    """MXNet: 'Incompatible attr ... at 1-th input: expected [2,3], got [3]' (no broadcasting)."""
    got = _each_path(lambda F, a, b: F.elemwise_add(a, b), [nd.ones((2, 3)), nd.ones((3,))])
    for path, exc in got.items():
        assert isinstance(exc, ShapeError), f"{path}: {exc!r}"
        assert _core(exc) == _core(got["eager"]), f"{path}: {exc}"


@pytest.mark.parametrize("dtype", ["int32", "float16"])
@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("in_units", [3, 0], ids=["initialized", "deferred"])
def test_dense_rejects_other_dtypes(dtype, hybridize, in_units):
    """MXNet: 'expected int32, got float32' (the weight is float32) eagerly and hybridized,
    also when the first call infers the weight's shape (a dtype error is not a failed
    shape inference)."""
    net = gluon.nn.Dense(4, in_units=in_units)
    net.initialize()
    if hybridize:
        net.hybridize()
    with pytest.raises(DTypeError, match=f"expected {dtype}, got float32"):
        net(nd.ones((2, 3), dtype=dtype))


ERRING = [
    ("broadcast_add", [(2, 3), (2, 3)], ["float32", "float64"], {}),
    ("elemwise_add", [(2, 3), (3,)], ["float32", "float32"], {}),
    ("broadcast_mul", [(2, 3), (4,)], ["float32", "float32"], {}),
    ("FullyConnected", [(2, 3), (4, 5), (4,)], ["float32"] * 3, {"num_hidden": 4}),
    ("Reshape", [(2, 3)], ["float32"], {"shape": (5,)}),
    ("take", [(2, 3), (2,)], ["float32"] * 2, {"axis": 5}),
    ("Concat", [(2, 3), (3, 3)], ["float32"] * 2, {"num_args": 2, "dim": 1}),
]


@pytest.mark.parametrize("name,shapes,dtypes,attrs", ERRING, ids=[c[0] for c in ERRING])
def test_errors_read_the_same_on_every_path(name, shapes, dtypes, attrs):
    """Same class and the same first line on all four paths (graph paths name the node and
    the user's line after it)."""
    inputs = [np.ones(s, dtype=d) for s, d in zip(shapes, dtypes)]
    results = {p: _run(p, name, inputs, attrs, False) for p in PATHS}
    assert all(r[0] == "error" for r in results.values()), results
    core = _core(results["eager"][1])
    assert core.startswith(("Error in operator ", f"{name}: ")), core
    for p, r in results.items():
        assert _core(r[1]) == core, f"{p}: {r[1]}"
        assert _kind(r[1]) == _kind(results["eager"][1]), f"{p}: {r[1]!r}"
