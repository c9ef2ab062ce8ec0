"""fuse_elemwise and the `_fused_elemwise` operator it emits."""
from __future__ import annotations

import json

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.nd import autograd
from hybridgraph.nd.backend import num_gpus
from hybridgraph.nd.ops.fused import cuda_source, parse_program
from hybridgraph.symbol.json_io import tojson
from hybridgraph.symbol.passes import apply_passes, optimize

from .graphs import assert_same_outputs, heads_of, ops_of, run, run_grads

RNG = np.random.default_rng(3)
A, B = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))


def _fuse(heads, **options):
    return apply_passes(heads, ["fuse_elemwise"], lint=True, **options)


def _program_of(heads):
    node = heads[0][0]
    assert node.op.name == "_fused_elemwise"
    return json.loads(node.attrs.program), [src.name for src, _ in node.inputs]


def test_a_chain_becomes_one_node_computed_in_the_output_buffer():
    x, y = S.var("x"), S.var("y")
    heads = heads_of(S.relu(S.exp(x) * 2 + y, name="out"))
    out = _fuse(heads)
    assert ops_of(out) == ["_fused_elemwise"] and out[0][0].name == "out"
    steps, inputs = _program_of(out)
    assert inputs == ["x", "y"]
    assert steps == [["exp", {}, [0]], ["_mul_scalar", {"scalar": "2"}, [2]],
                     ["elemwise_add", {}, [3, 1]], ["relu", {}, [4]]]
    prog = parse_program(out[0][0].attrs.program, 2)
    assert prog.dests == (-1, -1, -1, -1) and prog.num_temps == 0
    assert_same_outputs(run(heads, {"x": A, "y": B}), run(out, {"x": A, "y": B}))


def test_trees_use_few_temporaries():
    x, y = S.var("x"), S.var("y")
    heads = heads_of((S.sin(x) * S.cos(y)) + (S.exp(x) - S.tanh(y)))
    out = _fuse(heads)
    assert ops_of(out) == ["_fused_elemwise"]
    prog = parse_program(out[0][0].attrs.program, 2)
    assert prog.num_temps <= 2
    assert_same_outputs(run(heads, {"x": A, "y": B}), run(out, {"x": A, "y": B}))


def test_fan_out_and_heads_bound_the_groups():
    x = S.var("x")
    e = S.exp(x, name="e")                       # read twice: stays outside
    heads = heads_of(S.sin(e) * S.cos(e))
    out = _fuse(heads)
    assert ops_of(out) == ["exp", "_fused_elemwise"]
    t = S.tanh(x, name="t")                      # a head too: stays outside
    heads2 = heads_of(S.Group([S.sigmoid(S.negative(t)), t]))
    out2 = _fuse(heads2)
    assert ops_of(out2) == ["tanh", "_fused_elemwise"]
    assert_same_outputs(run(heads2, {"x": A}), run(out2, {"x": A}))


def test_broadcasting_members_need_known_equal_shapes():
    x, b = S.var("x"), S.var("b")
    heads = heads_of(S.exp(S.broadcast_add(S.sin(x), b)))
    assert ops_of(_fuse(heads)) == ["sin", "broadcast_add", "exp"]          # shapes unknown
    out = _fuse(heads, shapes={"x": (3, 4), "b": (1, 4)})
    assert ops_of(out) == ["_fused_elemwise"]
    vals = {"x": A, "b": RNG.normal(size=(1, 4))}
    assert_same_outputs(run(heads, vals), run(out, vals))
    small = heads_of(S.broadcast_add(S.exp(S.sin(b)), x))                  # sin(b) is (1, 4)
    out = _fuse(small, shapes={"x": (3, 4), "b": (1, 4)})
    assert ops_of(out) == ["_fused_elemwise", "broadcast_add"]
    assert_same_outputs(run(small, vals), run(out, vals))


def test_random_and_train_aware_ops_are_not_fused():
    x = S.var("x")
    heads = heads_of(S.exp(S.Dropout(S.sin(x), p=0.5)))
    assert ops_of(_fuse(heads)) == ["sin", "Dropout", "exp"]


def test_the_kernel_writes_into_a_given_buffer_and_allocates_otherwise():
    x, y = S.var("x"), S.var("y")
    node = _fuse(heads_of(S.sqrt(S.abs(x * y) + 1)))[0][0]
    want = np.sqrt(np.abs(A * B) + 1)
    (got,) = node.op.forward(np, node.attrs, A, B)
    np.testing.assert_allclose(got, want)
    buf = np.empty_like(A)
    (got,) = node.op.forward(np, node.attrs, A, B, out=(buf,))
    assert got is buf
    np.testing.assert_allclose(buf, want)


def test_the_gradient_replays_each_step_rule_eagerly_and_symbolically():
    x, y = S.var("x"), S.var("y")
    heads = heads_of(S.broadcast_mul(S.sigmoid(x) * y, S.tanh(y)) / 3)
    out = _fuse(heads, shapes={"x": (3, 4), "y": (3, 4)})
    assert ops_of(out) == ["_fused_elemwise"]
    hg = RNG.normal(size=(3, 4))
    want = run_grads(heads, {"x": A, "y": B}, [hg])
    got = run_grads(out, {"x": A, "y": B}, [hg])
    for w, g in zip(want[:2], got[:2]):
        for k in w if isinstance(w, dict) else range(len(w)):
            np.testing.assert_allclose(g[k], w[k], rtol=1e-10)
    node = out[0][0]
    xs = [nd.array(A, dtype=np.float64), nd.array(B, dtype=np.float64)]
    for v in xs:
        v.attach_grad()
    with autograd.record():
        r = nd._internal._fused_elemwise(*xs, **node.attrs.given)
    r.backward(nd.array(hg, dtype=np.float64))
    np.testing.assert_allclose(xs[0].grad.asnumpy(), want[1]["x"], rtol=1e-10)


def test_cuda_source_is_generated_from_the_c_expressions():
    x, y = S.var("x"), S.var("y")
    node = _fuse(heads_of(S.Activation(S.maximum(x, y) * 0.5 - 1e-5, act_type="sigmoid")))[0][0]
    prog = parse_program(node.attrs.program, node.attrs.num_args)
    assert cuda_source(prog) == (
        "T in0, T in1", "T out0",
        "T v0 = (T)(max(in0, in1));\n"
        "T v1 = (T)(v0 * ((T)(0.5)));\n"
        "T v2 = (T)(v1 - ((T)(1e-05)));\n"
        "out0 = (T)(1 / (1 + exp(-v2)));")


def test_cuda_source_is_none_when_a_step_has_no_c_expression():
    prog = parse_program('[["_digamma",{},[0]],["exp",{},[1]]]', 1)
    assert cuda_source(prog) is None


def test_export_never_sees_fused_nodes():
    x, y = S.var("x"), S.var("y")
    sym = S.relu(S.exp(x) * 2 + y)
    before = tojson(sym)
    new_heads, _ = optimize(heads_of(sym), for_training=False, lint=True)
    assert "_fused_elemwise" in ops_of(new_heads)
    assert tojson(sym) == before and "_fused_elemwise" not in before


class _FakeCupy:
    """numpy posing as cupy: records the ElementwiseKernel the fused op builds."""

    def __init__(self):
        self.built = []

    def __getattr__(self, name):
        return getattr(np, name)

    def ElementwiseKernel(self, in_params, out_params, operation, name):  # noqa: N802 - cupy's name
        self.built.append((in_params, out_params, operation, name))

        def kernel(*args):
            args[-1][...] = np.maximum(np.exp(args[0]) * 2 + args[1], 0)   # what the source says
        return kernel


def test_on_cupy_the_generated_kernel_is_built_once_and_writes_the_output():
    x, y = S.var("x"), S.var("y")
    node = _fuse(heads_of(S.relu(S.exp(x) * 2 + y, name="gpu_case")))[0][0]
    fake = _FakeCupy()
    for _ in range(2):
        (got,) = node.op.forward(fake, node.attrs, A, B)
        np.testing.assert_allclose(got, np.maximum(np.exp(A) * 2 + B, 0))
    assert len(fake.built) == 1
    assert fake.built[0][:3] == cuda_source(parse_program(node.attrs.program, 2))
    text = '[["hard_sigmoid",{},[0]],["exp",{},[1]]]'
    attrs = node.op.parse_attrs({"program": text, "num_args": 1})
    (got,) = node.op.forward(fake, attrs, A)                # no C expression: the step schedule runs
    assert parse_program(text, 1).dests == (None, -1) and len(fake.built) == 1
    np.testing.assert_allclose(got, np.exp(np.clip(0.2 * A + 0.5, 0, 1)))


@pytest.mark.skipif(num_gpus() == 0, reason="needs cupy and a GPU")
def test_the_generated_kernel_runs_on_cupy():  # pragma: no cover - GPU machines only
    x, y = S.var("x"), S.var("y")
    node = _fuse(heads_of(S.relu(S.exp(x) * 2 + y)))[0][0]
    xp = nd.gpu(0).xp
    (got,) = node.op.forward(xp, node.attrs, xp.asarray(A), xp.asarray(B))
    np.testing.assert_allclose(got.get(), np.maximum(np.exp(A) * 2 + B, 0), rtol=1e-12)
