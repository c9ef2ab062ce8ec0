"""fold_batchnorm: inference BatchNorm folded into FullyConnected / Convolution weights."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.symbol.passes import PassContext, PassError, apply_passes

from .graphs import assert_same_outputs, heads_of, ops_of, run

RNG = np.random.default_rng(7)


def _bn_params(prefix: str, c: int) -> dict:
    return {f"{prefix}_gamma": RNG.uniform(0.5, 2, c), f"{prefix}_beta": RNG.normal(size=c),
            f"{prefix}_moving_mean": RNG.normal(size=c), f"{prefix}_moving_var": RNG.uniform(0.2, 3, c)}


def _fold(heads, params, frozen=None, shapes=None):
    ctx = PassContext()
    out = apply_passes(heads, ["fold_batchnorm"], lint=True, context=ctx, for_training=False,
                       params=params, frozen=list(params) if frozen is None else frozen, shapes=shapes)
    return out, ctx.new_params


def _check(heads, data: dict, params: dict, expect_ops: list):
    out, new = _fold(heads, params, shapes={k: v.shape for k, v in data.items()})
    assert ops_of(out) == expect_ops
    before = run(heads, {**data, **params})
    after = run(out, {**data, **params, **new})
    assert_same_outputs(before, after, rtol=1e-10, atol=1e-10)
    return out, new


@pytest.mark.parametrize("no_bias", [False, True])
@pytest.mark.parametrize("fix_gamma", [False, True])
def test_fully_connected_then_batchnorm(no_bias, fix_gamma):
    x = S.var("x")
    fc = S.FullyConnected(x, num_hidden=3, no_bias=no_bias, name="fc")
    heads = heads_of(S.relu(S.BatchNorm(fc, fix_gamma=fix_gamma, eps=1e-3, name="bn"), name="act"))
    params = {"fc_weight": RNG.normal(size=(3, 5)), **_bn_params("bn", 3)}
    if not no_bias:
        params["fc_bias"] = RNG.normal(size=3)
    out, new = _check(heads, {"x": RNG.normal(size=(4, 5))}, params, ["FullyConnected", "relu"])
    assert sorted(new) == ["fc_bias_bnfold", "fc_weight_bnfold"]
    fc_node = out[0][0].inputs[0][0]
    assert fc_node.name == "fc" and fc_node.attrs.no_bias is False
    assert [src.name for src, _ in fc_node.inputs] == ["x", "fc_weight_bnfold", "fc_bias_bnfold"]


def test_fully_connected_without_flatten_and_a_last_axis_batchnorm():
    x = S.var("x")
    fc = S.FullyConnected(x, num_hidden=3, flatten=False, name="fc")
    heads = heads_of(S.BatchNorm(fc, axis=-1, fix_gamma=False, name="bn"))
    params = {"fc_weight": RNG.normal(size=(3, 5)), "fc_bias": RNG.normal(size=3), **_bn_params("bn", 3)}
    _check(heads, {"x": RNG.normal(size=(2, 4, 5))}, params, ["FullyConnected"])
    mismatch = heads_of(S.BatchNorm(S.FullyConnected(x, num_hidden=3, flatten=False, name="fc"), axis=1, name="bn"))
    assert ops_of(_fold(mismatch, params)[0]) == ["FullyConnected", "BatchNorm"]


@pytest.mark.parametrize("layout", [None, "NHWC"])
def test_convolution_then_batchnorm(layout):
    x = S.var("x")
    kw = {} if layout is None else {"layout": layout}
    conv = S.Convolution(x, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv", **kw)
    heads = heads_of(S.BatchNorm(conv, fix_gamma=False, axis=1 if layout is None else 3, name="bn"))
    w_shape = (4, 2, 3, 3) if layout is None else (4, 3, 3, 2)
    x_shape = (2, 2, 5, 5) if layout is None else (2, 5, 5, 2)
    params = {"conv_weight": RNG.normal(size=w_shape), "conv_bias": RNG.normal(size=4), **_bn_params("bn", 4)}
    _check(heads, {"x": RNG.normal(size=x_shape)}, params, ["Convolution"])


def test_not_folded_when_the_producer_has_other_users_or_params_are_not_frozen():
    x = S.var("x")
    fc = S.FullyConnected(x, num_hidden=3, name="fc")
    params = {"fc_weight": RNG.normal(size=(3, 5)), "fc_bias": RNG.normal(size=3), **_bn_params("bn", 3)}
    shared = heads_of(S.Group([S.BatchNorm(fc, name="bn"), fc]))
    assert ops_of(_fold(shared, params)[0]) == ["FullyConnected", "BatchNorm"]
    single = heads_of(S.BatchNorm(fc, name="bn"))
    assert ops_of(_fold(single, params, frozen=["fc_weight", "fc_bias"])[0]) == ["FullyConnected", "BatchNorm"]
    assert ops_of(_fold(single, {k: v for k, v in params.items() if k != "bn_moving_var"})[0]) == \
        ["FullyConnected", "BatchNorm"]


def test_not_folded_when_batchnorm_statistics_outputs_are_used():
    x = S.var("x")
    bn = S.BatchNorm(S.FullyConnected(x, num_hidden=3, name="fc"), output_mean_var=True, name="bn")
    params = {"fc_weight": RNG.normal(size=(3, 5)), "fc_bias": RNG.normal(size=3), **_bn_params("bn", 3)}
    assert ops_of(_fold(heads_of(bn), params)[0]) == ["FullyConnected", "BatchNorm"]


def test_a_training_pipeline_refuses_to_fold():
    x = S.var("x")
    heads = heads_of(S.BatchNorm(S.FullyConnected(x, num_hidden=3), name="bn"))
    with pytest.raises(PassError, match=r"pass fold_batchnorm failed after \[\]: .*inference rewrite"):
        apply_passes(heads, ["fold_batchnorm"], for_training=True)
