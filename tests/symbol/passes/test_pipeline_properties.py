"""Properties: random valid graphs compute the same outputs (and gradients, and aux updates)
before and after each pass alone and after the default pipelines, with lint after every pass."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.symbol.passes import DEFAULT_INFERENCE, DEFAULT_TRAINING, PassContext, apply_passes, optimize

from .graphs import assert_same_outputs, heads_of, run, run_grads

DATA_SHAPES = {"x": (3, 4), "y": (3, 4), "b": (1, 4)}
UNARY = ["sin", "tanh", "sigmoid", "relu", "negative", "abs", "cos", "softsign"]
SCALARS = [("__mul__", 1), ("__add__", 0), ("__sub__", 0), ("__truediv__", 1), ("__mul__", 2.0),
           ("__add__", 0.5), ("__sub__", 1.5), ("__mul__", -0.5)]


@dataclass
class RandomGraph:
    """A graph under construction: a pool of (symbol, shape) values and the arrays it needs."""

    rng: np.random.Generator
    training: bool
    pool: list = field(default_factory=list)
    values: dict = field(default_factory=dict)    # data inputs
    params: dict = field(default_factory=dict)    # parameters and aux states
    count: int = 0

    def add(self, sym, shape):
        self.pool.append((sym, tuple(shape)))

    def param(self, name, array):
        self.params[name] = array
        return S.var(name)

    def name(self, hint):
        self.count += 1
        return f"{hint}{self.count}"


def _pick(draw, g: RandomGraph, pred=lambda s: True):
    cands = [v for v in g.pool if pred(v[1])]
    return draw(st.sampled_from(cands)) if cands else None


def _unary(draw, g):
    v, s = _pick(draw, g)
    op = draw(st.sampled_from(UNARY + ["_copy", "BlockGrad"]))
    fn = getattr(S, op, None) or getattr(S._internal, op)
    g.add(fn(v), s)


def _scalar(draw, g):
    v, s = _pick(draw, g)
    meth, k = draw(st.sampled_from(SCALARS))
    g.add(getattr(v, meth)(k), s)


def _binary(draw, g):
    v, s = _pick(draw, g)
    w, _ = _pick(draw, g, lambda t: t == s)
    op = draw(st.sampled_from(["elemwise_add", "elemwise_sub", "elemwise_mul", "maximum"]))
    g.add(getattr(S, op)(v, w), s)


def _broadcast(draw, g):
    v, s = _pick(draw, g, lambda t: len(t) == 2)
    row = (1, s[1])
    w = _pick(draw, g, lambda t: t == row)
    w = S.sum(v, axis=0, keepdims=True) if w is None else w[0]
    op = draw(st.sampled_from(["broadcast_add", "broadcast_mul", "broadcast_sub"]))
    g.add(getattr(S, op)(v, w) if draw(st.booleans()) else getattr(S, op)(w, v), s)


def _reduce(draw, g):
    v, s = _pick(draw, g, lambda t: len(t) == 2)
    axis = draw(st.sampled_from([0, 1]))
    g.add(S.sum(v, axis=axis, keepdims=True), tuple(1 if i == axis else d for i, d in enumerate(s)))


def _reshape(draw, g):
    v, s = _pick(draw, g)
    size = int(np.prod(s))
    mid = draw(st.sampled_from([(-1,), (size, 1), (1, -1)] + ([(0, -1)] if len(s) == 2 else [])))
    g.add(S.reshape(S.reshape(v, shape=mid), shape=s), s)


def _transpose(draw, g):
    v, s = _pick(draw, g, lambda t: len(t) == 2)
    if draw(st.booleans()):
        g.add(S.transpose(S.transpose(v)), s)
    else:
        g.add(S.transpose(v, axes=(1, 0)), s[::-1])


def _fully_connected(draw, g):
    v, s = _pick(draw, g, lambda t: len(t) == 2)
    name, hid = g.name("fc"), draw(st.sampled_from([2, 4]))
    no_bias = draw(st.booleans())
    w = g.param(f"{name}_weight", g.rng.uniform(-0.5, 0.5, (hid, s[1])))
    args = [v, w] if no_bias else [v, w, g.param(f"{name}_bias", g.rng.uniform(-0.5, 0.5, hid))]
    g.add(S.FullyConnected(*args, num_hidden=hid, no_bias=no_bias, name=name), (s[0], hid))


def _batchnorm(draw, g):
    v, s = _pick(draw, g, lambda t: len(t) == 2)
    _batchnorm_of(draw, g, v, s)


def _batchnorm_of(draw, g, v, s):
    name, c = g.name("bn"), s[1]
    ins = [g.param(f"{name}_{p}", g.rng.uniform(lo, hi, c))
           for p, lo, hi in (("gamma", 0.5, 1.5), ("beta", -0.5, 0.5), ("moving_mean", -0.5, 0.5),
                             ("moving_var", 0.5, 1.5))]
    g.add(S.BatchNorm(v, *ins, fix_gamma=draw(st.booleans()), name=name), s)


def _dense_then_batchnorm(draw, g):
    """The pattern fold_batchnorm rewrites (often with the FC output feeding only the BN)."""
    _fully_connected(draw, g)
    v, s = g.pool[-1]
    _batchnorm_of(draw, g, v, s)


def _dropout(draw, g):
    v, s = _pick(draw, g)
    g.add(S.Dropout(v, p=0.0 if g.training else 0.5), s)


def _split(draw, g):
    v, s = _pick(draw, g, lambda t: len(t) == 2 and t[1] % 2 == 0)
    if v is None:
        return
    parts = S.split(v, num_outputs=2, axis=1)
    for k in range(2):
        g.add(parts[k], (s[0], s[1] // 2))


def _constant(draw, g):
    v, s = _pick(draw, g)
    if len(s) == 2 and draw(st.booleans()):
        c = S.arange(0, s[1], dtype="float64") * 0.25 - 0.5
        g.add(S.broadcast_add(v, S.reshape(c, shape=(1, s[1]))), s)
    else:
        g.add(v * (S.ones(shape=s, dtype="float64") * 2 - 1.5), s)


BUILDERS = [_unary, _scalar, _binary, _broadcast, _reduce, _reshape, _transpose, _fully_connected,
            _batchnorm, _dense_then_batchnorm, _dropout, _split, _constant]


@st.composite
def random_graphs(draw, training: bool = False):
    seed = draw(st.integers(0, 2 ** 16))
    g = RandomGraph(np.random.default_rng(seed), training)
    for name, shape in DATA_SHAPES.items():
        g.add(S.var(name), shape)
        g.values[name] = g.rng.uniform(-1, 1, shape)
    for _ in range(draw(st.integers(2, 10))):
        draw(st.sampled_from(BUILDERS))(draw, g)
    outs = [g.pool[-1][0]] + [v for v, _ in draw(st.lists(st.sampled_from(g.pool[3:]), max_size=2))]
    return heads_of(S.Group(outs)), g


def _pass_options(g):
    return {"params": g.params, "frozen": list(g.params), "shapes": dict(DATA_SHAPES)}


@given(random_graphs())
def test_inference_pipeline_preserves_outputs(case):
    heads, g = case
    want = run(heads, {**g.values, **g.params})
    new_heads, new_params = optimize(heads, for_training=False, params=g.params, lint=True,
                                     shapes=dict(DATA_SHAPES))
    got = run(new_heads, {**g.values, **g.params, **new_params})
    assert_same_outputs(want, got, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", sorted(set(DEFAULT_INFERENCE)))
@given(case=random_graphs())
def test_each_inference_pass_alone_preserves_outputs(name, case):
    heads, g = case
    want = run(heads, {**g.values, **g.params})
    ctx = PassContext()
    new_heads = apply_passes(heads, [name], lint=True, context=ctx, for_training=False, **_pass_options(g))
    got = run(new_heads, {**g.values, **g.params, **ctx.new_params})
    assert_same_outputs(want, got, rtol=1e-9, atol=1e-9)


def _training_step(heads, g, extra=None, const=()):
    rng = np.random.default_rng(0)
    outs = run(heads, {**g.values, **g.params, **(extra or {})}, is_train=True)
    head_grads = [rng.standard_normal(o.shape) for o in outs]
    return run_grads(heads, {**g.values, **g.params, **(extra or {})}, head_grads, const=const)


@given(random_graphs(training=True))
def test_training_pipeline_preserves_outputs_gradients_and_aux_updates(case):
    heads, g = case
    want_out, want_grads, want_aux = _training_step(heads, g)
    new_heads, new_params = optimize(heads, for_training=True, lint=True, shapes=dict(DATA_SHAPES))
    got_out, got_grads, got_aux = _training_step(new_heads, g, new_params, const=list(new_params))
    assert_same_outputs(want_out, got_out, rtol=1e-9, atol=1e-9)
    assert set(got_grads) == set(want_grads)
    for k, w in want_grads.items():
        np.testing.assert_allclose(got_grads[k], w, rtol=1e-8, atol=1e-9, err_msg=k)
    assert set(got_aux) == set(want_aux)
    for k, w in want_aux.items():
        np.testing.assert_allclose(got_aux[k], w, rtol=1e-9, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("name", sorted(set(DEFAULT_TRAINING)))
@given(case=random_graphs(training=True))
def test_each_training_pass_alone_preserves_gradients(name, case):
    heads, g = case
    want_out, want_grads, _ = _training_step(heads, g)
    ctx = PassContext()
    new_heads = apply_passes(heads, [name], lint=True, context=ctx, for_training=True, shapes=dict(DATA_SHAPES))
    got_out, got_grads, _ = _training_step(new_heads, g, ctx.new_params, const=list(ctx.new_params))
    assert_same_outputs(want_out, got_out, rtol=1e-9, atol=1e-9)
    for k, w in want_grads.items():
        np.testing.assert_allclose(got_grads[k], w, rtol=1e-8, atol=1e-9, err_msg=k)


# -- the golden MXNet models: same outputs as MXNet recorded, same gradients passes on/off ------

GOLDEN_MODELS = ["sym_mlp", "gluon_mlp", "bn_net", "lenet", "conv_net", "sym_convbn", "dropout_net",
                 "branch_net", "mlp_float64", "norm_net", "shape_net"]


def _golden(name: str, golden):
    import json

    from hybridgraph import nd
    from hybridgraph.nd.registry import has_op
    from hybridgraph.symbol.json_io import load as load_symbol
    manifest = json.loads((golden / "mxnet" / "manifest.json").read_text())["models"][name]
    missing = sorted(o for o in manifest["ops"] if not has_op(o))
    if missing:
        pytest.fail(f"{name} uses operators that are not registered: {missing}")
    sym = load_symbol(golden / "mxnet" / f"{name}-symbol.json")
    saved = nd.load(str(golden / "mxnet" / f"{name}-0000.params"))
    params = {k.split(":", 1)[1]: v.asnumpy() for k, v in saved.items()}
    with np.load(golden / "mxnet" / f"{name}-io.npz") as f:
        io = {k: f[k] for k in f.files}
    data = {i["name"]: io[i["name"]] for i in manifest["inputs"]}
    return sym, params, data, io, manifest


@pytest.mark.parametrize("name", GOLDEN_MODELS)
def test_golden_models_give_mxnet_outputs_after_the_inference_pipeline(name, golden):
    sym, params, data, io, manifest = _golden(name, golden)
    heads = heads_of(sym)
    shapes = {k: v.shape for k, v in data.items()}
    new_heads, new_params = optimize(heads, for_training=False, params=params, lint=True, shapes=shapes)
    got = run(new_heads, {**data, **params, **new_params})
    for k, out in enumerate(manifest["outputs"]):
        tol = manifest["tolerances"]["forward"]
        np.testing.assert_allclose(got[k], io[out["name"]], rtol=tol["rtol"] * 10, atol=tol["atol"] * 10)


@pytest.mark.parametrize("name", ["sym_convbn", "bn_net", "lenet", "branch_net"])
def test_golden_models_train_the_same_with_the_training_pipeline(name, golden):
    sym, params, data, _, _ = _golden(name, golden)
    heads = heads_of(sym)
    values = {**data, **params}
    rng = np.random.default_rng(1)
    head_grads = [rng.standard_normal(o.shape).astype(o.dtype) for o in run(heads, values, is_train=True)]
    want = run_grads(heads, values, head_grads, const=list(data))
    new_heads, new_params = optimize(heads, for_training=True, lint=True, shapes={k: v.shape for k, v in data.items()})
    got = run_grads(new_heads, {**values, **new_params}, head_grads, const=list(data) + list(new_params))
    assert_same_outputs(want[0], got[0], rtol=1e-5, atol=1e-6)
    for part in (1, 2):
        for k, w in want[part].items():
            np.testing.assert_allclose(got[part][k], w, rtol=1e-5, atol=1e-6, err_msg=k)
