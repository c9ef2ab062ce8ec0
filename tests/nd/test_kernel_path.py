"""One way to run a kernel (issue 13, item 2): every concrete path calls nd.kernel.run_kernel.

Two guards: a dynamic one wraps every registered kernel and runs each path that
executes operators (eager dispatch, the NDArray operator shortcuts, optimizer updates,
the Executor's step-by-step interpreter, the hybridized interpreter, gradient replay,
constant folding, compiled plans), failing on any kernel call that does not come from
run_kernel, from generated plan code, or from another kernel; a static one scans the
sources for kernel reads outside the allowed modules.
"""
from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, gluon, nd
from hybridgraph.gluon import cached_graph
from hybridgraph.nd import kernel
from hybridgraph.nd import ops as nd_ops
from hybridgraph.nd.registry import all_ops, get_op

REPO = Path(__file__).resolve().parents[2]
KERNEL_FILE = kernel.__file__                       # as the interpreter names it (hybridgraph/nd/...)
OPS_DIR = str(Path(nd_ops.__file__).parent)
GENERATED = ("<compiled plan", "<fused elementwise")   # code the plan and fusion generate

# modules allowed to touch kernels directly: the registry itself, its declarations, the
# one runner, and the plan code generator (generated code skips the runner: compilation ran
# the rules)
ALLOWED = {"nd/kernel.py", "nd/registry.py", "symbol/plan/codegen.py"}


@pytest.fixture
def kernel_calls(monkeypatch):
    """Wrap every kernel; returns the list of (op, caller) of each call, and fails the test
    for a caller that is not run_kernel, generated plan code or another kernel."""
    calls: list = []
    bad: list = []

    def wrap(op, fwd):
        def checked(*args, **kwargs):
            caller = sys._getframe(1).f_code
            ok = (caller.co_filename == KERNEL_FILE or caller.co_filename.startswith(GENERATED)
                  or caller.co_filename.startswith(OPS_DIR))
            calls.append((op.name, caller.co_filename))
            if not ok:
                bad.append(f"{op.name} run from {caller.co_filename}:{caller.co_name}")
            return fwd(*args, **kwargs)
        return checked

    for op in all_ops().values():
        if op.forward is not None:
            monkeypatch.setattr(op, "forward", wrap(op, op.forward))
        if op.ufunc is not None:    # the shortcut's ufunc runs inside run_kernel only
            monkeypatch.setattr(op, "ufunc", None)
    yield calls
    assert not bad, "kernels run outside nd.kernel.run_kernel:\n" + "\n".join(bad)


def _ran_through_runner(calls, start):
    return [name for name, where in calls[start:] if where == KERNEL_FILE]


class _Net(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.fc = gluon.nn.Dense(3, in_units=4)

    def hybrid_forward(self, F, x):
        return F.tanh(self.fc(x)) * 2 + 1


def test_every_path_runs_kernels_through_run_kernel(kernel_calls, monkeypatch):
    x = nd.array(np.arange(8.0).reshape(2, 4), dtype="float32")
    y = nd.ones((2, 4))
    paths = {}

    n = len(kernel_calls)
    nd.broadcast_add(x, y)
    nd.relu(x, out=y)
    paths["eager dispatch"] = _ran_through_runner(kernel_calls, n)

    n = len(kernel_calls)
    _ = x + y, x * 2.0, 3.0 - x
    paths["operator shortcut"] = _ran_through_runner(kernel_calls, n)

    n = len(kernel_calls)
    w, g = nd.ones((2, 4)), nd.ones((2, 4))
    for opt in (mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),   # aggregated: multi_sgd_mom_update
                mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.Adam()):
        upd = mx.optimizer.get_updater(opt)
        upd([0, 1], [g, g.copy()], [w, w.copy()])
    paths["optimizer kernels"] = _ran_through_runner(kernel_calls, n)

    n = len(kernel_calls)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    ex = mx.sym.broadcast_mul(a, b + 1).bind(mx.cpu(), {"a": x, "b": y})
    ex.forward()   # the first call of a plan runs step by step (Plan.interpret)
    paths["Plan.interpret (Executor)"] = _ran_through_runner(kernel_calls, n)

    n = len(kernel_calls)
    c = mx.sym.ones((2, 4)) * 3
    mx.sym.broadcast_add(a, c).bind(mx.cpu(), {"a": x}).forward()   # constant folding
    paths["constant folding"] = _ran_through_runner(kernel_calls, n)

    net = _Net()
    net.initialize()
    net.hybridize()
    for _ in range(3):
        net(x)   # later calls run generated plan code (allowed to call kernels directly)
    n = len(kernel_calls)
    monkeypatch.setattr(cached_graph, "INTERPRET", True)
    net(x)
    monkeypatch.setattr(cached_graph, "INTERPRET", False)
    paths["CachedGraph._interpret"] = _ran_through_runner(kernel_calls, n)

    n = len(kernel_calls)
    xg = x.copy()
    xg.attach_grad()
    with autograd.record():
        out = net(xg)
        (gx,) = autograd.grad(out.sum(), [xg], create_graph=True)
    paths["gradient replay"] = _ran_through_runner(kernel_calls, n)

    empty = sorted(p for p, ran in paths.items() if not ran)
    assert not empty, f"paths that ran no kernel through run_kernel: {empty}"


def _op_ish(node: ast.AST) -> bool:
    """`op`, `st.op`, `node.op`, `top`, `scalar_op`: an expression naming an OpDef."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name == "op" or name.endswith("_op") or name in {"top", "sop", "rsop"}


def test_no_module_reads_kernels_outside_the_runner():
    """Static guard: outside ALLOWED and nd/ops/, no code calls or takes `<op>.forward`,
    `<op>.compute` or `<op>.ufunc` (comparisons with None are fine)."""
    found, seen = [], set()
    for folder in ("nd", "symbol", "hybrid", "hybridgraph"):
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.resolve().relative_to(REPO).as_posix()
            if rel in ALLOWED or rel.startswith("nd/ops/") or rel in seen:
                continue
            seen.add(rel)
            tree = ast.parse(path.read_text(), rel)
            in_compare = {id(c) for n in ast.walk(tree) if isinstance(n, ast.Compare)
                          for c in [n.left, *n.comparators]}
            for n in ast.walk(tree):
                if (isinstance(n, ast.Attribute) and n.attr in {"forward", "compute", "ufunc"}
                        and _op_ish(n.value) and id(n) not in in_compare):
                    found.append(f"{rel}:{n.lineno}: {ast.unparse(n)}")
    assert not found, "kernels read outside nd/kernel.py:\n" + "\n".join(found)


def test_the_rule_verdict_is_cached():
    """A repeated call pays one lookup: the rules run once per (op, attrs, shapes, dtypes)."""
    a, b = nd.ones((2, 3)), nd.ones((2, 3))
    calls = []
    op = get_op("broadcast_add")
    rule = op.infer_shape
    op.infer_shape = lambda *args: calls.append(1) or rule(*args)
    try:
        for _ in range(5):
            nd.broadcast_add(a, b)
            _ = a + b
        assert len(calls) <= 2   # the front end's and the operator shortcut's attribute sets
        nd.broadcast_add(a, nd.ones((1, 3)))
        assert len(calls) <= 3
    finally:
        op.infer_shape = rule


# -- gradient rules are told which input gradients are wanted (issue 13, item 6) ---------------

def _count_kernels(monkeypatch, names):
    counts = dict.fromkeys(names, 0)
    for n in names:
        op = get_op(n)
        fwd = op.forward

        def counted(*args, _n=n, _fwd=fwd, **kwargs):
            counts[_n] += 1
            return _fwd(*args, **kwargs)
        monkeypatch.setattr(op, "forward", counted)
    return counts


FC_BACKWARD = ("_backward_FullyConnected", "_backward_FullyConnected_data", "_backward_FullyConnected_weight")


def test_fully_connected_skips_the_unwanted_data_gradient_eagerly(monkeypatch):
    """The batch has no gradient: only the weight and bias gradients are computed."""
    counts = _count_kernels(monkeypatch, FC_BACKWARD)
    x = nd.array(np.random.default_rng(0).standard_normal((5, 4)))
    w, b = nd.ones((3, 4)), nd.zeros((3,))
    w.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = nd.FullyConnected(x, w, b, num_hidden=3)
    y.backward()
    assert counts == {"_backward_FullyConnected": 0, "_backward_FullyConnected_data": 0,
                      "_backward_FullyConnected_weight": 1}
    np.testing.assert_allclose(w.grad.asnumpy(), np.ones((3, 1)) * x.asnumpy().sum(0), rtol=1e-6)
    np.testing.assert_allclose(b.grad.asnumpy(), np.full(3, 5.0))
    x.attach_grad()   # wanted now: the data gradient is computed too
    with autograd.record():
        y = nd.FullyConnected(x, w, b, num_hidden=3)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.ones((5, 3)) @ w.asnumpy(), rtol=1e-6)


def test_fully_connected_rule_gets_wanted_symbolically():
    """A graph whose data is an operator output but not differentiated has no data-gradient node."""
    data = mx.sym.var("x")
    h = mx.sym.relu(data)
    y = mx.sym.FullyConnected(h, num_hidden=3, name="fc")
    g = y.gradient(["fc_weight", "fc_bias"])
    ops = {n["op"] for n in json.loads(g.tojson())["nodes"]}
    assert "_backward_FullyConnected_data" not in ops and "_backward_FullyConnected" not in ops, ops
    assert "_backward_FullyConnected_weight" in ops


def test_rules_without_the_keyword_keep_working():
    from hybridgraph.nd.registry import OpDef, call_gradient

    seen = []
    op = OpDef("_test_old_rule", gradient=lambda F, a, i, o, g: seen.append("old") or [g[0]])
    assert call_gradient(op, nd, op.schema.parse({}), [1], [2], [3], wanted=(0,)) == [3]
    op2 = OpDef("_test_new_rule", gradient=lambda F, a, i, o, g, wanted=None: [wanted])
    assert call_gradient(op2, nd, op2.schema.parse({}), [1], [2], [3], wanted=(0,)) == [(0,)]
    assert seen == ["old"]


# -- OpDef is a typed dataclass (issue 13, item 6) -------------------------------------------

def test_opdef_is_a_typed_keyword_only_dataclass():
    import dataclasses
    import inspect

    from hybridgraph.nd.registry import OpDef

    assert dataclasses.is_dataclass(OpDef)
    params = list(inspect.signature(OpDef).parameters.values())
    assert params[0].name == "name"
    assert all(p.kind is p.KEYWORD_ONLY for p in params[1:])
    assert all(p.annotation is not inspect.Parameter.empty for p in params)
    lines = inspect.getsource(OpDef).splitlines()
    starts = {ln.split(":")[0].strip(): i for i, ln in enumerate(lines) if ln.startswith("    ") and
              not ln.startswith("     ") and ":" in ln}
    undocumented = [f.name for f in dataclasses.fields(OpDef) if f.name not in {"name", "doc"}
                    and not lines[starts[f.name] - 1].strip().startswith("#:")]
    assert not undocumented, f"OpDef fields without a #: comment: {undocumented}"
    with pytest.raises(TypeError):
        OpDef("_t", ("data",))   # keywords only


def test_opdef_normalises_its_fields():
    from hybridgraph.nd.registry import OpDef, same_type

    op = OpDef("_t_norm", inputs=("a", "b"), outputs=("y", "mask"), num_visible_outputs=1)
    assert op.num_visible_outputs(op.schema.parse({})) == 1 and op.static_visible == 1
    assert op.input_names(op.schema.parse({})) == ("a", "b") and op.infer_type is same_type
    assert not op.differentiable and not op.public
    op.def_gradient(lambda F, a, i, o, g: [g[0], None])
    assert op.differentiable
    assert not OpDef("_t_nd", differentiable=False, gradient=lambda *a: None).differentiable
    assert hash(op) != hash(OpDef("_t_norm")) and op != OpDef("_t_norm")   # identity
