"""fuse_conv_epilogue: Convolution -> [residual add] -> ReLU as one `_fused_convolution`,
bitwise equal to the unfused inference plan, on every convolution kernel path."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.nd.ops import winograd
from hybridgraph.symbol.passes import PassContext, PassError, apply_passes, optimize
from hybridgraph.symbol.plan.compiled import compile_graph

from .graphs import heads_of, ops_of

RNG = np.random.default_rng(11)


def _block(stride=1, kernel=3, layout=None, residual="add", relu=True, no_bias=False):
    """conv -> BN -> (+ x') -> relu, where x' is the input or a 1x1 projection of it."""
    x = S.var("x")
    pad = (kernel // 2, kernel // 2)
    kw = {"layout": layout} if layout else {}
    c = S.Convolution(x, kernel=(kernel, kernel), stride=(stride, stride), pad=pad, num_filter=8,
                      no_bias=no_bias, name="c1", **kw)
    y = S.BatchNorm(c, name="bn1", axis=3 if layout == "NHWC" else 1)
    if residual == "add":
        skip = x if stride == 1 else S.Convolution(x, kernel=(1, 1), stride=(stride, stride), num_filter=8,
                                                   no_bias=True, name="down", **kw)
        y = y + skip
    if relu:
        y = S.Activation(y, act_type="relu", name="act")
    return y


def _params(sym, x_shape):
    arg_shapes, _, aux_shapes = sym.infer_shape(x=x_shape)
    names = sym.list_arguments() + sym.list_auxiliary_states()
    out = {}
    for name, shape in zip(names, arg_shapes + aux_shapes):
        if name == "x":
            continue
        v = RNG.standard_normal(shape).astype(np.float32)
        out[name] = np.abs(v) + 0.5 if ("var" in name or "gamma" in name) else v
    return out


def _run(sym, x, params, disable=()):
    names = ["x", *params]
    cg = compile_graph(sym._outputs, names, for_training=False, params=params, disable=disable)
    plan, outs, _ = cg.run([x, *params.values()])
    return outs[0], [st.op.name for st in plan.sched.steps]


@pytest.mark.parametrize("case", [
    {"stride": 1, "kernel": 3},                       # FlatGrid (or Winograd below)
    {"stride": 2, "kernel": 3},                       # im2col, 1x1 projection residual
    {"stride": 1, "kernel": 1},                       # pointwise GEMM
    {"stride": 1, "kernel": 3, "residual": None},     # conv -> relu only
    {"stride": 1, "kernel": 3, "relu": False},        # conv + residual, no activation
    {"stride": 1, "kernel": 3, "no_bias": True, "residual": None},
    {"stride": 1, "kernel": 3, "layout": "NHWC"},     # channel-last: epilogue on the result
], ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_fused_plan_equals_the_unfused_plan_bitwise(case):
    layout = case.get("layout")
    sym = _block(**case)
    shape = (2, 9, 9, 8) if layout == "NHWC" else (2, 8, 9, 9)
    x = RNG.standard_normal(shape).astype(np.float32)
    params = _params(sym, shape)
    fused, ops = _run(sym, x, params)
    plain, plain_ops = _run(sym, x, params, disable=("fuse_conv_epilogue",))
    assert "_fused_convolution" in ops and "_fused_convolution" not in plain_ops
    assert "BatchNorm" not in ops and "Activation" not in ops
    assert fused.dtype == plain.dtype and np.array_equal(fused, plain)


def test_winograd_chunks_run_the_epilogue(monkeypatch):
    monkeypatch.setattr(winograd, "WINO_MIN_CHANNELS", 1)
    monkeypatch.setattr(winograd, "WINO_MIN_TILES_PER_CHANNEL", 0)
    monkeypatch.setattr(winograd, "WINO_MIN_CHUNK_TILES", 1)
    monkeypatch.setattr(winograd, "WINO_CHUNK_BYTES", 1)     # one image per chunk
    sym = _block()
    x = RNG.standard_normal((3, 8, 10, 10)).astype(np.float32)
    params = _params(sym, x.shape)
    fused, ops = _run(sym, x, params)
    plain, _ = _run(sym, x, params, disable=("fuse_conv_epilogue",))
    assert "_fused_convolution" in ops and np.array_equal(fused, plain)


def test_the_environment_switch_turns_the_pass_off(monkeypatch):
    monkeypatch.setenv("HYBRIDGRAPH_CONV_EPILOGUE", "0")
    sym = _block()
    x = RNG.standard_normal((1, 8, 6, 6)).astype(np.float32)
    _, ops = _run(sym, x, _params(sym, x.shape))
    assert "_fused_convolution" not in ops and "Convolution" in ops


def test_a_convolution_read_twice_is_not_fused():
    x = S.var("x")
    c = S.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=4, name="c")
    out = S.Group([S.relu(c), c * 2])
    heads = apply_passes(heads_of(out), ["fuse_conv_epilogue"], lint=True, for_training=False)
    assert "_fused_convolution" not in ops_of(heads)


def test_a_head_relu_of_a_convolution_is_fused_and_keeps_its_name():
    x = S.var("x")
    out = S.relu(S.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=4, name="c"), name="r")
    heads = apply_passes(heads_of(out), ["fuse_conv_epilogue"], lint=True, for_training=False)
    assert ops_of(heads) == ["_fused_convolution"] and heads[0][0].name == "r"


def test_the_pass_is_inference_only_and_in_the_inference_pipeline():
    heads = heads_of(_block())
    with pytest.raises(PassError, match="inference rewrite"):
        apply_passes(heads, ["fuse_conv_epilogue"], context=PassContext(), for_training=True)
    trained, _ = optimize(heads, for_training=True)
    assert "_fused_convolution" not in ops_of(trained)
