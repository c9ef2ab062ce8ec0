"""The compiled plan (symbol/plan/compiled.py, codegen.py) and the Executor running on it:
the same numbers as eager NDArray code and as the step-by-step first run, for random graphs
(hypothesis), every per-op golden case and the golden models; compile_graph's API
(threads, static_alloc, new shapes, retained backward, mirror); errors naming the node."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph import nd
from hybridgraph import symbol as S  # noqa: N812 - short like mx.sym
from hybridgraph.nd import autograd
from hybridgraph.nd.registry import get_op, has_op
from hybridgraph.symbol.executor import ExecutionError, executor_options
from hybridgraph.symbol.plan import compile_graph, compiled as compiled_mod, validate_plan
from tests.conftest import GOLDEN
from tests.golden_ops import case_arrays, load_cases, skip_reason
from tests.symbol.test_plan_memory import build_graph, graph_specs, symbol_of

CASES = load_cases(GOLDEN) if GOLDEN.is_dir() else []



@pytest.fixture(autouse=True)
def _validate_every_plan(monkeypatch):
    """Every plan finalised in these tests is proven safe by the validator."""
    monkeypatch.setattr(compiled_mod, "VALIDATE", True)


# -- random graphs against eager code ----------------------------------------------------------

def _inputs(sym, spec, rs):
    shapes = {"x": (spec["m"], spec["n"])}
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**shapes)
    args = {n: rs.uniform(-1, 1, s) for n, s in zip(sym.list_arguments(), arg_shapes)}
    aux = {n: (rs.uniform(0.5, 1.5, s) if n.startswith("var") else rs.uniform(-1, 1, s))
           for n, s in zip(sym.list_auxiliary_states(), aux_shapes)}
    heads = [rs.uniform(-1, 1, s) for s in out_shapes]
    return args, aux, heads


def eager_reference(spec, args, aux, heads):
    """Outputs, gradients of every argument and aux states after one recorded step, eagerly."""
    arrays = {n: nd.array(v, dtype="float64") for n, v in {**args, **aux}.items()}
    for n in args:
        arrays[n].attach_grad()
    with autograd.record(train_mode=True):
        outs = build_graph(spec, nd, lambda name, shape, is_aux:
                           arrays.setdefault(name, nd.ones(shape, dtype="float64")))
    autograd.backward(outs, [nd.array(h, dtype="float64") for h in heads])
    return ([o.asnumpy() for o in outs], {n: arrays[n].grad.asnumpy() for n in args},
            {n: arrays[n].asnumpy() for n in aux})


def executor_run(sym, args, aux, heads, runs: int = 3):
    """Results of each of `runs` forward+backward steps from the same starting values."""
    bound = {n: nd.array(v, dtype="float64") for n, v in args.items()}
    grads = {n: nd.zeros(v.shape, dtype="float64") for n, v in args.items()}
    auxs = {n: nd.array(v, dtype="float64") for n, v in aux.items()}
    exe = sym.bind(nd.cpu(), bound, args_grad=grads, aux_states=auxs)
    results = []
    for _ in range(runs):
        for n, v in aux.items():
            exe.aux_dict[n][:] = v
        outs = [o.asnumpy() for o in exe.forward(is_train=True)]
        exe.backward([nd.array(h, dtype="float64") for h in heads])
        results.append((outs, {n: g.asnumpy() for n, g in exe.grad_dict.items()},
                        {n: a.asnumpy() for n, a in exe.aux_dict.items()}))
    return exe, results


def compiled_run(sym, args, aux, heads, runs: int = 3, passes: bool = False, **kw):
    names = sym.list_arguments() + sym.list_auxiliary_states()
    cg = compile_graph(sym._outputs, names, for_training=True, passes=passes, wrt=sym.list_arguments(), **kw)
    results = []
    for _ in range(runs):
        vals = {n: np.array(v, dtype=np.float64) for n, v in {**args, **aux}.items()}
        before = {n: v.copy() for n, v in args.items()}
        outs, saved = cg.forward([vals[n] for n in names], is_train=True)
        outs = [np.array(o) for o in outs]
        grads = cg.backward(saved, [np.array(h) for h in heads])
        for n in args:      # arguments are never written
            np.testing.assert_array_equal(vals[n], before[n], err_msg=f"argument {n} was overwritten")
        results.append((outs, dict(zip(sym.list_arguments(), grads)), {n: vals[n] for n in aux}))
    return cg, results


def assert_same(got, want, what: str, rtol=1e-9, atol=1e-12):
    outs, grads, aux = got
    w_outs, w_grads, w_aux = want
    for j, (a, b) in enumerate(zip(outs, w_outs)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{what}: output {j}")
    for n, g in w_grads.items():
        np.testing.assert_allclose(grads[n], g, rtol=rtol, atol=atol, err_msg=f"{what}: grad {n}")
    for n, v in w_aux.items():
        np.testing.assert_allclose(aux[n], v, rtol=rtol, atol=atol, err_msg=f"{what}: aux {n}")


@given(spec=graph_specs(max_ops=10), seed=st.integers(0, 2 ** 16))
def test_random_graphs_match_eager(spec, seed):
    sym = symbol_of(spec)
    args, aux, heads = _inputs(sym, spec, np.random.RandomState(seed))
    want = eager_reference(spec, args, aux, heads)
    exe, runs = executor_run(sym, args, aux, heads)
    for k, got in enumerate(runs):     # run 0 is step by step; runs 1, 2 are the compiled code
        assert_same(got, want, f"executor run {k}")
    plan = exe._last_plan
    assert plan.compiled
    validate_plan(plan.sched, plan.memory, fresh=())
    cg, runs = compiled_run(sym, args, aux, heads, static_alloc=bool(seed % 2))
    for k, got in enumerate(runs):
        assert_same(got, want, f"compile_graph run {k}")
    validate_plan(cg.last_plan.sched, cg.last_plan.memory)


@given(spec=graph_specs(max_ops=10), seed=st.integers(0, 2 ** 16))
def test_random_graphs_with_passes_match_eager(spec, seed):
    sym = symbol_of(spec)
    args, aux, heads = _inputs(sym, spec, np.random.RandomState(seed))
    want = eager_reference(spec, args, aux, heads)
    _, runs = compiled_run(sym, args, aux, heads, passes=True)
    for k, got in enumerate(runs):
        assert_same(got, want, f"passes on, run {k}", rtol=1e-7, atol=1e-10)


@given(spec=graph_specs(max_ops=10, allow_params=False), seed=st.integers(0, 2 ** 16))
def test_random_graphs_inference_and_mirror(spec, seed):
    sym = symbol_of(spec)
    args, aux, heads = _inputs(sym, spec, np.random.RandomState(seed))
    want = eager_reference(spec, args, aux, heads)
    names = sym.list_arguments()
    cg = compile_graph(sym._outputs, names, for_training=False, passes=False)
    for _ in range(3):
        outs, saved = cg.forward([args[n] for n in names])
        assert saved is None
        for a, b in zip(outs, want[0]):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    _, runs = compiled_run(sym, args, aux, heads, mirror=True)
    for k, got in enumerate(runs):
        assert_same(got, want, f"mirror run {k}")


# -- golden per-op cases: the compiled code gives what the step-by-step run gives --------------

def _bind_case(case: dict, arrays: dict):
    from hybridgraph.symbol.json_io import load_json
    sym = load_json(case["symbol_json"])
    args, grads, reqs, aux = {}, {}, {}, {}
    for spec in case["inputs"]:
        a = nd.array(arrays["in:" + spec["name"]], dtype=spec["dtype"])
        if spec["role"] == "aux":
            aux[spec["name"]] = a
            continue
        args[spec["name"]] = a
        reqs[spec["name"]] = "write" if case["has_grad"] and spec["grad"] else "null"
        grads[spec["name"]] = nd.zeros(a.shape, dtype=a.dtype)
    return sym.bind(nd.cpu(), args, grads, reqs, aux)


def _case_run(exe, case: dict, arrays: dict):
    for spec in case["inputs"]:
        target = exe.aux_dict if spec["role"] == "aux" else exe.arg_dict
        target[spec["name"]][:] = arrays["in:" + spec["name"]]
    outs = [o.asnumpy() for o in exe.forward(is_train=case["is_train"])]
    grads = {}
    if case["has_grad"]:
        heads = [nd.array(arrays[f"head{j}"], dtype=o.dtype) if f"head{j}" in arrays else
                 nd.zeros(o.shape, dtype=o.dtype) for j, o in enumerate(exe.outputs)]
        exe.backward(heads)
        grads = {n: g.asnumpy() for n, g in exe.grad_dict.items() if g is not None}
    return outs, grads, {k: v.asnumpy() for k, v in exe.aux_dict.items()}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_golden_case_compiled_equals_step_by_step(case, golden):
    reason = skip_reason(case)
    if reason:
        pytest.skip(reason)
    assert has_op(case["op"]), f"{case['op']} (written by MXNet) is not registered"
    arrays = case_arrays(golden, case)
    exe = _bind_case(case, arrays)
    first = _case_run(exe, case, arrays)
    again = [_case_run(exe, case, arrays) for _ in range(2)]
    plan = exe._last_plan
    assert plan.compiled, "the plan should be compiled after the first runs"
    if get_op(case["op"]).random_for(get_op(case["op"]).parse_attrs(case["attrs"])):
        for got in again:
            assert [o.shape for o in got[0]] == [o.shape for o in first[0]]
        return
    for got in again:
        assert_same(got, first, case["id"], rtol=1e-6, atol=1e-7)


# -- golden models ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sym_mlp", "gluon_mlp", "bn_net", "lenet", "conv_net", "sym_convbn"])
def test_golden_model_through_compile_graph(name, golden):
    from tests.symbol.test_executor import MANIFEST, _load_model
    model = MANIFEST[name]
    missing = sorted(o for o in model["ops"] if not has_op(o))
    if missing:
        pytest.fail(f"{name} uses operators that are not registered: {missing}")
    sym, params, io = _load_model(golden, name)
    args, aux = sym.list_arguments(), sym.list_auxiliary_states()
    values = {n: io[n] if n in io else params["arg:" + n].asnumpy() for n in args}
    values.update({n: params["aux:" + n].asnumpy() for n in aux})
    tol = model["tolerances"]
    wrt = [n for n in args if f"grad:{n}" in io]
    cg = compile_graph(sym._outputs, args + aux, for_training=True, passes=False, wrt=wrt)
    for _ in range(2):
        inputs = [values[n].copy() for n in args + aux]
        outs, _ = cg.forward(inputs, is_train=False)
        for j, o in enumerate(outs):
            np.testing.assert_allclose(o, io[f"out{j}"], **tol.get("forward_per_output", [tol["forward"]] * 9)[j])
    for _ in range(2):
        inputs = [values[n].copy() for n in args + aux]
        outs, saved = cg.forward(inputs, is_train=True)
        grads = cg.backward(saved, [io[f"cot{j}"] for j in range(len(outs))])
        for j, o in enumerate(outs):
            t = tol.get("train_per_key", {}).get(f"train:out{j}", tol["train"])
            np.testing.assert_allclose(o, io[f"train:out{j}"], **t)
        by_name = dict(zip(args + aux, grads))
        for n in wrt:
            key = f"grad:{n}"
            if "LeakyReLU" in model["ops"] and name not in ("bn_net",):
                continue      # PReLU/SELU golden defects are handled in test_executor
            t = tol.get("train_per_key", {}).get(key, tol["train"])
            np.testing.assert_allclose(by_name[n], io[key], **t, err_msg=f"{name} {key}")
        after = dict(zip(args + aux, inputs))
        for n in aux:
            key = f"aux_after:{n}"
            if key in io:
                t = tol.get("train_per_key", {}).get(key, tol["train"])
                np.testing.assert_allclose(after[n], io[key], **t, err_msg=f"{name} {key}")


# -- compile_graph API ---------------------------------------------------------------------------

def _mlp(hidden: int = 16, classes: int = 4):
    x = S.var("data")
    h = S.relu(S.FullyConnected(x, num_hidden=hidden, name="fc1"))
    h = S.relu(S.FullyConnected(h, num_hidden=hidden, name="fc2"))
    return S.SoftmaxOutput(S.FullyConnected(h, num_hidden=classes, name="fc3"), S.var("label"), name="sm")


def _mlp_inputs(sym, batch: int, rs, dtype=np.float32):
    shapes, _, _ = sym.infer_shape(data=(batch, 8), label=(batch,))
    vals = [rs.randn(*s).astype(dtype) * 0.5 for s in shapes]
    vals[sym.list_arguments().index("label")] = (np.arange(batch) % 4).astype(dtype)
    return vals


def test_threads_get_their_own_buffers():
    sym = _mlp()
    names = sym.list_arguments()
    cg = compile_graph(sym._outputs, names, for_training=True, passes=False)
    rs = np.random.RandomState(0)
    inputs = [_mlp_inputs(sym, 6, rs) for _ in range(8)]
    want = []
    for vals in inputs:
        o, saved = cg.forward(vals, is_train=True)
        grads = cg.backward(saved, [None])
        want.append(([np.array(a) for a in o], [None if g is None else np.array(g) for g in grads]))
    errors = []

    def work(k: int) -> None:
        try:
            for _ in range(20):
                o, saved = cg.forward(inputs[k], is_train=True)
                g = cg.backward(saved, [None])
                np.testing.assert_allclose(o[0], want[k][0][0], rtol=1e-6)
                for a, b in zip(g, want[k][1]):
                    if b is not None:
                        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_outputs_survive_later_calls_and_static_alloc_reuses_one_arena():
    sym = _mlp()
    names = sym.list_arguments()
    rs = np.random.RandomState(1)
    a, b = _mlp_inputs(sym, 5, rs), _mlp_inputs(sym, 5, rs)
    for static in (False, True):
        cg = compile_graph(sym._outputs, names, for_training=False, passes=False, static_alloc=static)
        first = [cg.forward(a)[0][0] for _ in range(2)][-1]
        keep = first.copy()
        cg.forward(b)
        np.testing.assert_array_equal(first, keep)      # outputs are never arena memory
        plan = cg.last_plan
        assert plan.compiled and (plan._static_arena is not None) == static


def test_new_shapes_replan_without_retrace():
    sym = _mlp()
    names = sym.list_arguments()
    cg = compile_graph(sym._outputs, names, for_training=False, passes=False, shapes=None)
    rs = np.random.RandomState(2)
    for batch in (3, 7, 3):
        out, _ = cg.forward(_mlp_inputs(sym, batch, rs))
        assert out[0].shape == (batch, 4)
    assert len(cg._plans) == 2
    stats = cg.memory_stats()
    assert stats["planned"] <= stats["naive"]


def test_saved_state_is_consumed_unless_retained():
    sym = _mlp()
    names = sym.list_arguments()
    cg = compile_graph(sym._outputs, names, for_training=True, passes=False)
    vals = _mlp_inputs(sym, 4, np.random.RandomState(3))
    for _ in range(2):       # step by step first, then compiled
        _, saved = cg.forward(vals, is_train=True)
        g1 = cg.backward(saved, [None], retain_graph=True)
        g2 = cg.backward(saved, [None])
        for a, b in zip(g1, g2):
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-6)
        with pytest.raises(Exception, match="already used by a backward"):
            cg.backward(saved, [None])
    assert cg.last_plan.compiled


def test_inference_forward_saves_nothing_and_record_needs_training():
    sym = _mlp()
    names = sym.list_arguments()
    vals = _mlp_inputs(sym, 4, np.random.RandomState(4))
    cg = compile_graph(sym._outputs, names, for_training=False, passes=False)
    assert cg.forward(vals, is_train=False)[1] is None
    with pytest.raises(Exception, match="for_training=False"):
        cg.forward(vals, is_train=True, record=True)


def test_errors_in_compiled_steps_name_the_node(monkeypatch):
    x = S.var("x")
    y = S.cos(S.sin(x, name="mysin"), name="mycos")
    cg = compile_graph(y._outputs, ["x"], for_training=False, passes=False)
    for _ in range(2):
        cg.forward([np.ones((2, 3), np.float32)])
    assert cg.last_plan.compiled

    def boom(xp, a, x, out=None):
        raise FloatingPointError("bad value")
    monkeypatch.setattr(cg.last_plan.fwd.fn.__globals__["K1"], "__call__", boom, raising=False)
    monkeypatch.setitem(cg.last_plan.fwd.fn.__globals__, "K1", boom)
    with pytest.raises(ExecutionError, match=r"while executing node mycos \(cos\) with input shapes \[\(2, 3\)\]"):
        cg.forward([np.ones((2, 3), np.float32)])


def test_executor_debug_str_and_memory_stats():
    sym = _mlp()
    exe = sym.simple_bind(nd.cpu(), data=(4, 8), label=(4,))
    before = exe.memory_stats()
    assert not before["calibrated"]
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward()
    stats = exe.memory_stats()
    assert stats["calibrated"] and 0 < stats["planned"] <= stats["naive"]
    text = exe.debug_str()
    assert "Schedule: 6 forward steps" in text and "MB allocated (naive" in text
    assert "inplace<-fc1_output" in text


def test_executor_mirror_option_gives_the_same_gradients():
    x = S.var("x")
    y = x
    for i in range(8):
        y = S.tanh(S.sin(y, name=f"s{i}"), name=f"t{i}")
    loss = S.MakeLoss(S.sum(y)) if has_op("MakeLoss") else S.sum(y)
    rs = np.random.RandomState(5)
    xv = rs.randn(16, 16).astype(np.float64)
    results = []
    for mirror in (False, True):
        with executor_options(mirror=mirror):
            exe = loss.simple_bind(nd.cpu(), x=(16, 16), type_dict={"x": "float64"})
        exe.arg_dict["x"][:] = xv
        for _ in range(2):
            exe.forward(is_train=True)
            exe.backward() if has_op("MakeLoss") else exe.backward(nd.ones((1,), dtype="float64"))
        results.append((exe.grad_dict["x"].asnumpy(), exe.memory_stats()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    assert "mirror" in exe.debug_str()


def test_executor_with_passes_lists_the_pipeline():
    sym = _mlp()
    with executor_options(passes=True):
        exe = sym.simple_bind(nd.cpu(), data=(4, 8), label=(4,))
    vals = _mlp_inputs(sym, 4, np.random.RandomState(6))
    for name, v in zip(sym.list_arguments(), vals):
        exe.arg_dict[name][:] = v
    plain = sym.simple_bind(nd.cpu(), data=(4, 8), label=(4,))
    for name, v in zip(sym.list_arguments(), vals):
        plain.arg_dict[name][:] = v
    for _ in range(2):
        for e in (exe, plain):
            e.forward(is_train=True)
            e.backward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), plain.outputs[0].asnumpy(), rtol=1e-5)
    for k, g in plain.grad_dict.items():
        if g is not None:
            np.testing.assert_allclose(exe.grad_dict[k].asnumpy(), g.asnumpy(), rtol=1e-4, atol=1e-6)
    assert "Passes: (none)" not in exe.debug_str()


def test_views_keep_their_memory_alive_in_compiled_code(monkeypatch):
    """A kernel returning a view of a pooled value (here Reshape, patched to return views as
    numpy does): the pool must not reuse that memory while the view is alive, and nothing may
    be written in place over it."""
    op = get_op("Reshape")
    copying = op.forward

    def as_view(xp, a, x):
        return (x.reshape(copying(xp, a, x)[0].shape),)
    monkeypatch.setattr(op, "forward", as_view)
    x = S.var("x")
    a = S.sin(x, name="a")
    v = S.reshape(a, shape=(-1,), name="v")
    b = S.cos(a, name="b")                       # reads a while v (a view of a) is still needed
    c = S.exp(S.sin(b, name="s2"), name="c")      # fresh temporaries that must not land on a
    out = S.elemwise_add(S.reshape(v, shape=(4, 4)), c, name="out")
    xv = np.linspace(-1, 1, 16).reshape(4, 4)
    want = np.sin(xv) + np.exp(np.sin(np.cos(np.sin(xv))))
    cg = compile_graph(out._outputs, ["x"], for_training=False, passes=False)
    for _ in range(3):
        np.testing.assert_allclose(cg.forward([xv.copy()])[0][0], want, rtol=1e-12)
    plan = cg.last_plan
    ids = {n: i for i, n in enumerate(plan.sched.names)}
    assert plan.memory.root[ids["v_output"]] == ids["a_output"]
    validate_plan(plan.sched, plan.memory)


def test_unused_outputs_are_dropped_at_once_in_inference():
    """BatchNorm's batch mean/var outputs are not needed at inference: the generated code
    does not even name them, so they are freed as soon as the kernel returns."""
    x = S.BatchNorm(S.var("x"), S.var("g"), S.var("b"), S.var("m"), S.var("v"), name="bn")
    names = x.list_arguments() + x.list_auxiliary_states()
    cg = compile_graph(x._outputs, names, for_training=False, passes=False)
    vals = [np.random.RandomState(7).rand(4, 3)] + [np.ones(3)] * 4
    for _ in range(2):
        cg.forward(vals)
    assert ", _, _, = K0(" in cg.last_plan.fwd.source


def test_a_recording_plan_compiles_without_ever_seeing_a_backward():
    """Two recorded forwards with no backward finalise the plan (unseen backward kernels are
    planned conservatively); the compiled backward must still be right."""
    sym = _mlp()
    names = sym.list_arguments()
    vals = _mlp_inputs(sym, 4, np.random.RandomState(8))
    ref = compile_graph(sym._outputs, names, for_training=True, passes=False)
    _, saved = ref.forward(vals, is_train=True)
    want = ref.backward(saved, [None])
    cg = compile_graph(sym._outputs, names, for_training=True, passes=False)
    cg.forward(vals, is_train=True)
    cg.forward(vals, is_train=True)
    assert cg.last_plan.compiled
    _, saved = cg.forward(vals, is_train=True)
    got = cg.backward(saved, [None])
    for a, b in zip(got, want):
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_passes_that_fail_to_import_are_an_error_not_an_unoptimised_run(monkeypatch):
    """Issue 13, item 5: a broken symbol.passes must not make graphs run unoptimised."""
    import sys
    sym = S.FullyConnected(S.var("data"), num_hidden=3, name="fc")
    import hybridgraph.symbol as symbol_package
    monkeypatch.setitem(sys.modules, "hybridgraph.symbol.passes", None)   # import raises ImportError
    monkeypatch.delattr(symbol_package, "passes", raising=False)
    names = sym.list_arguments()
    cg = compile_graph(sym._outputs, names, for_training=False, passes=True)
    values = [np.ones((2, 4), np.float32), np.ones((3, 4), np.float32), np.ones(3, np.float32)]
    with pytest.raises(ImportError):
        cg.forward(values)
