"""Memory planning (symbol/plan/memory.py): liveness, in-place, pooled best fit, the
validator, statistics, mirror mode, and the golden models' planned bytes against the
lower bound and against MXNet 1.9.1's figures (tests/data/plan_memory_ref.json)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph import nd
from hybridgraph import symbol as S  # noqa: N812 - short like mx.sym
from hybridgraph.nd.registry import get_op, has_op
from hybridgraph.symbol.plan import PlanError, lower, plan_memory, validate_plan
from hybridgraph.symbol.plan.mirror import mirror_schedule
from tests.conftest import GOLDEN

REF = Path(__file__).resolve().parent.parent / "data" / "plan_memory_ref.json"


def schedule_of(sym, shapes: dict, wrt=(), dtype=np.float32):
    """The schedule of a symbol with every input given by shape (arguments then aux states)."""
    names = sym.list_arguments() + sym.list_auxiliary_states()
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    sched, _ = lower(sym._outputs, names, arg_shapes + aux_shapes, [dtype] * len(names), wrt=list(wrt))
    return sched


def names_of(sched) -> dict:
    return {n: i for i, n in enumerate(sched.names)}


# -- random graphs (shared with test_compiled.py) -------------------------------------------

UNARY = ["relu", "sigmoid", "tanh", "sin", "abs", "square", "negative"]
BINARY = ["elemwise_add", "elemwise_mul", "elemwise_sub"]
BCAST = ["broadcast_add", "broadcast_mul"]


@st.composite
def graph_specs(draw, max_ops: int = 10, allow_params: bool = True):
    """A random program over values of shape (M, N): a list of (kind, args) and the outputs."""
    m = draw(st.integers(2, 4))
    n = draw(st.sampled_from([2, 4, 6]))
    kinds = ["unary", "scalar", "binary", "bcast", "split", "reshape"]
    if allow_params:
        kinds += ["fc", "bn"]
    prog = []
    nvals = 1
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(kinds))
        pick = st.integers(0, nvals - 1)
        if kind == "unary":
            prog.append(("unary", draw(st.sampled_from(UNARY)), draw(pick)))
        elif kind == "scalar":
            prog.append(("scalar", draw(st.sampled_from(["_mul_scalar", "_plus_scalar"])),
                         draw(st.sampled_from([0.5, 2.0, -1.0])), draw(pick)))
        elif kind == "binary":
            prog.append(("binary", draw(st.sampled_from(BINARY)), draw(pick), draw(pick)))
        elif kind == "bcast":
            prog.append(("bcast", draw(st.sampled_from(BCAST)), draw(st.integers(0, 1)), draw(pick), draw(pick)))
        else:
            prog.append((kind, draw(pick)))
        nvals += 1
    extra = draw(st.lists(st.integers(0, nvals - 2), max_size=2, unique=True)) if nvals > 1 else []
    return {"m": m, "n": n, "prog": prog, "outputs": [nvals - 1] + extra}


def build_graph(spec: dict, F, param):  # noqa: N803 - F is the op namespace, as in gradient rules
    """Run a spec with namespace F (`symbol` or `nd`); `param(name, shape, aux)` gives inputs.

    Returns (outputs, input names in creation order).
    """
    m, n = spec["m"], spec["n"]
    vals = [param("x", (m, n), False)]
    for k, step in enumerate(spec["prog"]):
        kind = step[0]
        if kind == "unary":
            vals.append(getattr(F, step[1])(vals[step[2]]))
        elif kind == "scalar":
            vals.append(getattr(F._internal, step[1])(vals[step[3]], scalar=step[2]))
        elif kind == "binary":
            vals.append(getattr(F, step[1])(vals[step[2]], vals[step[3]]))
        elif kind == "bcast":
            row = F.sum(vals[step[4]], axis=step[2], keepdims=True)
            vals.append(getattr(F, step[1])(vals[step[3]], row))
        elif kind == "split":
            parts = F.SliceChannel(vals[step[1]], num_outputs=2, axis=1)
            vals.append(F.Concat(parts[1] * 2.0, parts[0], dim=1))
        elif kind == "reshape":
            flat = F.reshape(vals[step[1]], shape=(-1,))
            vals.append(F.reshape(F.sin(flat), shape=(m, n)))
        elif kind == "fc":
            w, b = param(f"w{k}", (n, n), False), param(f"b{k}", (n,), False)
            vals.append(F.FullyConnected(vals[step[1]], w, b, num_hidden=n))
        elif kind == "bn":
            g, b = param(f"gamma{k}", (n,), False), param(f"beta{k}", (n,), False)
            mm, mv = param(f"mean{k}", (n,), True), param(f"var{k}", (n,), True)
            vals.append(F.BatchNorm(vals[step[1]], g, b, mm, mv, fix_gamma=False))
    return [vals[i] for i in spec["outputs"]]


def symbol_of(spec: dict):
    made = {}

    def param(name, shape, aux):
        made[name] = S.var(name)
        return made[name]
    with S.NameManager():
        outs = build_graph(spec, S, param)
    return S.Group(outs) if len(outs) > 1 else outs[0]


def spec_shapes(sym, spec) -> dict:
    return {"x": (spec["m"], spec["n"])}


# -- hand-built graphs --------------------------------------------------------------------

def test_chain_runs_in_place_and_never_touches_the_argument():
    x = S.var("x")
    y = S.exp(S.cos(S.sin(x, name="s"), name="c"), name="e")
    sched = schedule_of(y, {"x": (4, 4)})
    ids = names_of(sched)
    plan = plan_memory(sched, fresh=())
    validate_plan(sched, plan)
    assert plan.storage[ids["x"]] == -1
    assert plan.inplace == {ids["c_output"]: ids["s_output"], ids["e_output"]: ids["c_output"]}
    assert plan.stats.planned == 64 and plan.stats.naive == 3 * 64
    # the output must be fresh memory by default (it leaves the call): not in place on the pool
    plan = plan_memory(sched)
    validate_plan(sched, plan)
    assert ids["e_output"] not in plan.inplace and plan.storage_kind[plan.storage[ids["e_output"]]] == "dynamic"


def test_fan_out_blocks_in_place_until_the_last_reader():
    x = S.var("x")
    y = S.sin(x, name="s")
    z = S.elemwise_add(S.cos(y, name="c"), y, name="add")
    sched = schedule_of(z, {"x": (3,)})
    ids = names_of(sched)
    plan = plan_memory(sched, fresh=())
    validate_plan(sched, plan)
    assert ids["c_output"] not in plan.inplace               # y is read again by add
    assert plan.inplace[ids["add_output"]] in (ids["c_output"], ids["s_output"])


def test_freed_buffers_are_reused_best_fit():
    x = S.var("x")
    a = S.sin(x, name="a")                                   # (8, 8): 256 bytes, dies at b
    b = S.sum(a, axis=1, keepdims=True, name="b")             # (8, 1): 32 bytes
    c = S.broadcast_add(x, b, name="c")                       # (8, 8) again: reuses a's buffer
    d = S.sin(c, name="d")
    sched = schedule_of(S.sum(d, name="out"), {"x": (8, 8)})
    ids = names_of(sched)
    plan = plan_memory(sched, fresh=(), inplace=False)
    validate_plan(sched, plan)
    assert plan.storage[ids["c_output"]] == plan.storage[ids["a_output"]]
    assert plan.storage_bytes[plan.storage[ids["a_output"]]] == 256
    assert plan.stats.lower_bound <= plan.stats.planned <= plan.stats.naive


def test_pool_respects_the_match_range():
    x = S.var("x")
    big = S.sin(x, name="big")                                   # 4096 bytes, dies at tiny
    tiny = S.sum(big, axis=(0, 1), name="tiny")                  # 4 bytes: must not take the 4 KB buffer
    out = S.sin(S.broadcast_add(x, tiny), name="out")
    sched = schedule_of(out, {"x": (32, 32)})
    ids = names_of(sched)
    plan = plan_memory(sched, fresh=(), inplace=False)
    validate_plan(sched, plan)
    assert plan.storage[ids["tiny_output"]] != plan.storage[ids["big_output"]]


def test_views_share_their_roots_memory():
    """A kernel that returns a view makes one group: the root lives as long as the view."""
    x = S.var("x")
    a = S.sin(x, name="a")
    v = S.reshape(a, shape=(-1,), name="v")
    out = S.elemwise_add(S.cos(S.sin(x, name="s2"), name="c2"), S.reshape(v, shape=(4, 4)), name="out")
    sched = schedule_of(out, {"x": (4, 4)})
    ids = names_of(sched)
    aliases = {ids["v_output"]: {ids["a_output"]}}
    plan = plan_memory(sched, aliases=aliases, fresh=())
    validate_plan(sched, plan)
    assert plan.root[ids["v_output"]] == ids["a_output"]
    assert plan.storage[ids["v_output"]] == plan.storage[ids["a_output"]]
    # a dies at its own last read, but its memory (through v) is still needed later
    assert plan.storage[ids["s2_output"]] != plan.storage[ids["a_output"]]


def test_validator_rejects_broken_plans():
    x = S.var("x")
    y = S.elemwise_mul(S.sin(x, name="s"), S.cos(x, name="c"), name="m")
    sched = schedule_of(y, {"x": (5,)})
    ids = names_of(sched)
    good = plan_memory(sched, fresh=())
    validate_plan(sched, good)

    shared = plan_memory(sched, fresh=())
    shared.storage[ids["c_output"]] = shared.storage[ids["s_output"]]     # both live at m
    with pytest.raises(PlanError, match="at the same time"):
        validate_plan(sched, shared)

    bad_ext = plan_memory(sched, fresh=())
    bad_ext.storage[ids["x"]] = 0
    with pytest.raises(PlanError, match="external"):
        validate_plan(sched, bad_ext)

    bad_inplace = plan_memory(sched, fresh=(), inplace=False)
    bad_inplace.inplace[ids["c_output"]] = ids["x"]
    with pytest.raises(PlanError, match="in place|in-place"):
        validate_plan(sched, bad_inplace)

    pooled_output = plan_memory(sched, fresh=())
    with pytest.raises(PlanError, match="fresh memory"):
        validate_plan(sched, pooled_output, fresh=[ids["m_output"]])


def test_training_schedule_keeps_saved_activations_until_their_last_use():
    x, w = S.var("x"), S.var("w")
    y = S.sum(S.elemwise_mul(S.sin(x, name="s"), w, name="m"), name="loss")
    sched = schedule_of(y, {"x": (6,), "w": (6,)}, wrt=["x", "w"])
    ids = names_of(sched)
    plan = plan_memory(sched)
    validate_plan(sched, plan)
    saved = sched.saved()
    assert ids["s_output"] in saved                   # d(loss)/dw = sin(x) * g
    s_last = plan.last_use[ids["s_output"]]
    assert s_last >= sched.n_forward                  # read by the backward
    assert all(plan.last_use[g] == len(sched.steps) for g in sched.grads if g is not None)


def test_mirror_recomputes_cheap_values_and_saves_memory():
    x = S.var("x")
    y = x
    for i in range(20):
        y = S.sin(y, name=f"s{i}")
    loss = S.sum(y, name="loss")
    sched = schedule_of(loss, {"x": (64, 64)}, wrt=["x"])
    mirrored = mirror_schedule(sched)
    assert len(mirrored.steps) > len(sched.steps)
    assert len(mirrored.saved()) < len(sched.saved())
    plain, mir = plan_memory(sched), plan_memory(mirrored)
    validate_plan(sched, plain)
    validate_plan(mirrored, mir)
    assert mir.stats.planned < plain.stats.planned
    assert mir.stats.lower_bound < plain.stats.lower_bound


# -- random graphs ------------------------------------------------------------------------------

@given(spec=graph_specs(max_ops=12), inplace=st.booleans(), pool=st.booleans(), train=st.booleans(),
       mirror=st.booleans())
def test_random_plans_validate(spec, inplace, pool, train, mirror):
    sym = symbol_of(spec)
    wrt = [n for n in sym.list_arguments()] if train else []
    sched = schedule_of(sym, spec_shapes(sym, spec), wrt=wrt)
    if mirror and train:
        sched = mirror_schedule(sched)
    plan = plan_memory(sched, inplace=inplace, pool=pool)
    validate_plan(sched, plan)
    s = plan.stats
    assert s.lower_bound <= s.naive and s.planned <= s.naive
    if not inplace:
        assert s.lower_bound <= s.planned


# -- golden models -------------------------------------------------------------------------------

MODELS = ["sym_mlp", "gluon_mlp", "bn_net", "lenet", "conv_net", "sym_convbn"]


def _golden_model(name: str, batch: int | None = None):
    manifest = json.loads((GOLDEN / "mxnet" / "manifest.json").read_text())["models"][name]
    missing = sorted(o for o in manifest["ops"] if not has_op(o))
    if missing:
        pytest.fail(f"{name} uses operators that are not registered: {missing}")
    from hybridgraph.symbol.json_io import load as load_symbol
    sym = load_symbol(GOLDEN / "mxnet" / f"{name}-symbol.json")
    with np.load(GOLDEN / "mxnet" / f"{name}-io.npz") as f:
        shapes = {k: f[k].shape for k in f.files if k in sym.list_arguments()}
    if batch:
        shapes = {k: (batch,) + tuple(v[1:]) for k, v in shapes.items()}
    return sym, shapes


def model_plan(name: str, train: bool, batch: int | None = None, like_mxnet: bool = False):
    """NNVM's view of the plan (every internal entry writable, outputs pooled).

    `like_mxnet`: every argument gets a gradient (simple_bind's grad_req='write') and the
    gradients are written into the bound arrays, so they are not counted (MXNet's total).
    """
    sym, shapes = _golden_model(name, batch)
    if like_mxnet:
        wrt = sym.list_arguments() if train else []
    else:
        wrt = [n for n in sym.list_arguments() if n not in shapes] if train else []
    sched = schedule_of(sym, shapes, wrt=wrt)
    plan = plan_memory(sched, fresh=(), external=sched.grads if like_mxnet else ())
    validate_plan(sched, plan, fresh=())
    return sched, plan


@pytest.mark.parametrize("name", MODELS)
def test_golden_inference_plans_are_near_the_lower_bound(name, golden):
    _, plan = model_plan(name, train=False)
    s = plan.stats
    assert s.planned <= 1.25 * s.lower_bound, s
    assert s.planned < s.naive


@pytest.mark.parametrize("name", MODELS)
def test_golden_training_plans_validate(name, golden):
    sched, plan = model_plan(name, train=True)
    assert sched.has_backward and plan.stats.planned < plan.stats.naive


def _activation_not_in_place() -> bool:
    return not get_op("Activation").inplace


#: where hybridgraph's registry (not the planner) still makes the plan bigger than MXNet's:
#: (model, grad_req) -> (reason, test that the reason still holds)
KNOWN_GAPS = {
    ("sym_mlp", "null"): ("Activation declares no in-place pair (MXNet's runs in place)",
                          _activation_not_in_place),
    ("gluon_mlp", "null"): ("Activation declares no in-place pair", _activation_not_in_place),
    ("lenet", "null"): ("Activation declares no in-place pair", _activation_not_in_place),
}


@pytest.mark.parametrize("name", MODELS)
def test_planned_bytes_are_not_above_mxnet(name, golden):
    """MXNet's debug_str total (whole MB) at the scaled batch; ours must not be larger."""
    ref = json.loads(REF.read_text())["models"][name]["scaled"]["subgraph_none"]
    batch = next(iter(ref["shapes"].values()))[0]
    for train, key in ((False, "null"), (True, "write")):
        _, plan = model_plan(name, train=train, batch=batch, like_mxnet=True)
        ours_mb = plan.stats.planned / 2 ** 20
        gap = KNOWN_GAPS.get((name, key))
        if gap is not None and gap[1]():
            continue      # documented above; the test demands the figure once the reason is gone
        assert ours_mb <= ref[key] + 1, (name, key, ours_mb, ref[key])


def test_executor_reports_the_plan():
    x = S.var("x")
    y = S.exp(S.cos(S.sin(x, name="s"), name="c"), name="e")
    exe = y.simple_bind(nd.cpu(), grad_req="null", x=(256, 256))
    exe.forward()
    exe.forward()
    stats = exe.memory_stats()
    assert stats["calibrated"] and stats["naive"] == 3 * 256 * 256 * 4
    # one pooled buffer (s, then c in place) and the executor's output array, which exp fills itself
    assert stats["planned"] == 2 * 256 * 256 * 4 and stats["pooled"] == 256 * 256 * 4
    held = exe.outputs[0]._data
    exe.arg_dict["x"][:] = 0.5
    exe.forward()
    assert exe.outputs[0]._data is held
    np.testing.assert_allclose(held, np.exp(np.cos(np.sin(0.5))), rtol=1e-6)
    text = exe.debug_str()
    assert "Total 0.5 MB allocated (naive 0.75 MB" in text and "bytes 524288 / 786432" in text
    assert "inplace<-s_output" in text and "Passes: (none)" in text
