"""Gluon basic layers and activations: MXNet 1.9.1 numbers, names, reprs and exported graphs;
eager vs hybridized consistency on hypothesis-drawn shapes; models MXNet exported."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph.gluon import nn
from hybridgraph.gluon.hybrid_block import HybridBlock
from hybridgraph.gluon.parameter import DeferredInitializationError
from hybridgraph.gluon.testing import check_hybrid_consistency
from hybridgraph.nd import autograd

from . import _gluon_ref as ref

MODES = ("eager", "hybrid", "static")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", ref.LAYER_CASES, ids=[c[0] for c in ref.LAYER_CASES])
def test_matches_mxnet(case, mode):
    ref.check_against_mxnet(case, mode)


@pytest.mark.parametrize("case", ref.LAYER_CASES, ids=[c[0] for c in ref.LAYER_CASES])
def test_export_json_matches_mxnet(case, tmp_path):
    ref.check_export(case, tmp_path)


def test_selu_gradient_is_the_true_derivative():
    x = nd.array([[-2.0, -0.5, 0.0, 0.5, 3.0]])
    x.attach_grad()
    with autograd.record():
        y = nn.SELU()(x)
    y.backward()
    lam, alpha = 1.0507009873554805, 1.6732632423543772
    xs = x.asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), np.where(xs > 0, lam, lam * alpha * np.exp(xs)), rtol=1e-5)


# -- reprs, names and parameters: strings printed by MXNet 1.9.1 ----------------------------------------------------
REPRS = [
    (lambda: nn.Dense(3), "Dense(None -> 3, linear)", [("weight", (3, 0), "write"), ("bias", (3,), "write")]),
    (lambda: nn.Dense(3, in_units=5, activation="relu"), "Dense(5 -> 3, Activation(relu))",
     [("weight", (3, 5), "write"), ("bias", (3,), "write")]),
    (lambda: nn.Dense(2, use_bias=False), "Dense(None -> 2, linear)", [("weight", (2, 0), "write")]),
    (nn.BatchNorm,
     "BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, in_channels=None)",
     [("gamma", (0,), "write"), ("beta", (0,), "write"), ("running_mean", (0,), "null"),
      ("running_var", (0,), "null")]),
    (lambda: nn.BatchNorm(in_channels=3, scale=False),
     "BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=True, use_global_stats=False, in_channels=3)",
     [("gamma", (3,), "null"), ("beta", (3,), "write"), ("running_mean", (3,), "null"),
      ("running_var", (3,), "null")]),
    (nn.LayerNorm, "LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=0)",
     [("gamma", (0,), "write"), ("beta", (0,), "write")]),
    (nn.InstanceNorm, "InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, in_channels=0)",
     [("gamma", (0,), "null"), ("beta", (0,), "write")]),
    (nn.GroupNorm, "GroupNorm(eps=1e-05, num_groups=1, center=True, scale=True)",
     [("gamma", (1,), "write"), ("beta", (1,), "write")]),
    (lambda: nn.Embedding(10, 4), "Embedding(10 -> 4, float32)", [("weight", (10, 4), "write")]),
    (nn.Flatten, "Flatten", []),
    (lambda: nn.Dropout(0.5), "Dropout(p = 0.5, axes=())", []),
    (lambda: nn.Dropout(0.3, axes=(1,)), "Dropout(p = 0.3, axes=(1,))", []),
    (nn.PReLU, "PReLU(\n\n)", [("alpha", (1,), "write")]),
    (nn.ELU, "ELU(\n\n)", []),
    (nn.Swish, "Swish(\n\n)", []),
    (lambda: nn.Activation("relu"), "Activation(relu)", []),
    (lambda: nn.LeakyReLU(0.1), "LeakyReLU(0.1)", []),
]


@pytest.mark.parametrize("make,text,params", REPRS, ids=[r[1].split("(")[0] + str(i) for i, r in enumerate(REPRS)])
def test_repr_and_parameters_match_mxnet(make, text, params):
    block = make()
    assert repr(block) == text
    got = [(p.name[len(block.prefix):], p.shape, p.grad_req) for p in block.collect_params().values()]
    assert got == params


def test_names_follow_mxnet_scopes():
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Dense(4, activation="relu"), nn.Activation("tanh"), nn.BatchNorm(), nn.Dense(2))
    assert [c.name for c in net._children.values()] == ["net_dense0", "net_tanh0", "net_batchnorm0", "net_dense1"]
    assert net[0].act.name == "net_dense0_relu"
    assert list(net.collect_params()) == [
        "net_dense0_weight", "net_dense0_bias", "net_batchnorm0_gamma", "net_batchnorm0_beta",
        "net_batchnorm0_running_mean", "net_batchnorm0_running_var", "net_dense1_weight", "net_dense1_bias"]


def test_prelu_default_initializer_is_quarter():
    layer = nn.PReLU(in_channels=3)
    layer.initialize()
    np.testing.assert_array_equal(layer.alpha.data().asnumpy(), np.full(3, 0.25, np.float32))


def test_leaky_relu_rejects_negative_slope():
    with pytest.raises(AssertionError, match="no less than 0"):
        nn.LeakyReLU(-0.1)


# -- deferred initialisation and dtype --------------------------------------------------------------------------
def test_dense_defers_then_infers_in_units():
    layer = nn.Dense(3, flatten=True)
    layer.initialize()
    with pytest.raises(DeferredInitializationError):
        layer.weight.data()
    out = layer(nd.ones((2, 4, 5)))
    assert out.shape == (2, 3)
    assert layer.weight.shape == (3, 20)
    assert repr(layer) == "Dense(20 -> 3, linear)"


def test_dense_flatten_false_keeps_leading_axes():
    layer = nn.Dense(3, flatten=False)
    layer.initialize()
    assert layer(nd.ones((2, 4, 5))).shape == (2, 4, 3)
    assert layer.weight.shape == (3, 5)


def test_dense_dtype_float64():
    layer = nn.Dense(2, dtype="float64", in_units=3)
    layer.initialize()
    out = layer(nd.ones((1, 3), dtype="float64"))
    assert out.dtype == np.float64 and layer.bias.data().dtype == np.float64


def test_batchnorm_cast_float16_stays_float32():
    layer = nn.BatchNorm(in_channels=2)
    layer.initialize()
    layer.cast("float16")
    assert layer.gamma.data().dtype == np.float32
    layer.cast("float64")
    assert layer.gamma.data().dtype == np.float64


# -- Dropout and BatchNorm: train vs predict mode -----------------------------------------------------------------
@pytest.mark.parametrize("hybridize", [False, True])
def test_dropout_scales_kept_units_in_training_only(hybridize):
    layer = nn.Dropout(0.25)
    if hybridize:
        layer.hybridize()
    x = nd.ones((200, 50))
    np.testing.assert_array_equal(layer(x).asnumpy(), x.asnumpy())
    with autograd.record():
        y = layer(x).asnumpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    assert abs(kept.mean() - 0.75) < 0.02


def test_dropout_axes_share_the_mask():
    layer = nn.Dropout(0.5, axes=(1,))
    with autograd.record():
        y = layer(nd.ones((64, 7))).asnumpy()
    assert all(len(set(row)) == 1 for row in y)


def test_dropout_zero_rate_is_a_copy_node():
    layer = nn.Dropout(0, prefix="d_")
    layer.hybridize()
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    with autograd.record():
        y = layer(x)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    ops = [n.op.name for n in _op_nodes(layer)]
    assert ops == ["_copy"]


def _op_nodes(block):
    from hybridgraph.symbol.graph import IndexedGraph
    return [n for n in IndexedGraph(block._last_trace.symbol._outputs).nodes if n.op is not None]


@pytest.mark.parametrize("hybridize", [False, True])
def test_batchnorm_updates_running_stats_in_training_backward(hybridize):
    """As in MXNet 1.x, the moving statistics move when a train-mode pass is differentiated."""
    layer = nn.BatchNorm(in_channels=3, momentum=0.5)
    layer.initialize()
    if hybridize:
        layer.hybridize()
    x = nd.array(np.random.RandomState(0).randn(8, 3, 2).astype(np.float32) * 2 + 1)
    layer(x)
    np.testing.assert_array_equal(layer.running_mean.data().asnumpy(), np.zeros(3, np.float32))
    with autograd.record():
        y = layer(x)
    y.backward()
    mean = x.asnumpy().mean(axis=(0, 2))
    np.testing.assert_allclose(layer.running_mean.data().asnumpy(), 0.5 * mean, rtol=1e-5, atol=1e-6)


def test_batchnorm_use_global_stats_ignores_batch():
    layer = nn.BatchNorm(in_channels=2, use_global_stats=True)
    layer.initialize()
    x = nd.array(np.random.RandomState(1).randn(4, 2).astype(np.float32))
    with autograd.record():
        y = layer(x)
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() / np.sqrt(1 + 1e-5), rtol=1e-5)


# -- eager vs hybridized on drawn shapes --------------------------------------------------------------------------
def _consistent(block, inputs, **kw):
    block.initialize()
    with autograd.pause():
        block(*[nd.array(x) for x in inputs])
    check_hybrid_consistency(block, inputs, rtol=1e-5, atol=1e-5, **kw)


def _normal(shape, seed):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


dims = st.integers(1, 4)


@given(st.tuples(dims, dims, dims), st.booleans(), st.booleans(), st.integers(0, 2 ** 16))
def test_dense_consistent(shape, flatten, use_bias, seed):
    _consistent(nn.Dense(3, flatten=flatten, use_bias=use_bias, activation="sigmoid"), [_normal(shape, seed)])


@given(st.tuples(st.integers(2, 4), dims, dims), st.sampled_from([1, -1]), st.booleans(), st.integers(0, 2 ** 16))
def test_batchnorm_consistent(shape, axis, scale, seed):
    _consistent(nn.BatchNorm(axis=axis, scale=scale), [_normal(shape, seed)])


@given(st.tuples(dims, st.integers(2, 4), st.integers(2, 4)), st.integers(0, 2 ** 16))
def test_norm_layers_consistent(shape, seed):
    x = [_normal(shape, seed)]
    _consistent(nn.LayerNorm(axis=1), x)
    _consistent(nn.InstanceNorm(scale=True), x)
    _consistent(nn.InstanceNorm(axis=2, scale=True), x)


@given(st.integers(1, 3), st.sampled_from([1, 2, 4]), st.integers(0, 2 ** 16))
def test_groupnorm_consistent(batch, groups, seed):
    _consistent(nn.GroupNorm(num_groups=groups), [_normal((batch, 4, 3), seed)])


@given(st.tuples(dims, dims), st.integers(0, 2 ** 16))
def test_embedding_consistent(shape, seed):
    ids = np.random.RandomState(seed).randint(0, 7, shape).astype(np.float32)
    _consistent(nn.Embedding(7, 3), [ids])


ACTIVATIONS = [lambda: nn.Activation("softrelu"), lambda: nn.LeakyReLU(0.2), lambda: nn.PReLU(in_channels=3),
               lambda: nn.ELU(0.7), nn.SELU, nn.GELU, lambda: nn.Swish(1.5), nn.SiLU,
               nn.Flatten, lambda: nn.Dropout(0)]


@given(st.integers(0, len(ACTIVATIONS) - 1), st.tuples(dims, st.just(3), dims), st.integers(0, 2 ** 16))
def test_activations_consistent(which, shape, seed):
    _consistent(ACTIVATIONS[which](), [_normal(shape, seed)])


def test_silu_is_swish_with_unit_beta():
    x = nd.array(_normal((3, 4), 0))
    np.testing.assert_allclose(nn.SiLU()(x).asnumpy(), nn.Swish()(x).asnumpy(), rtol=1e-6)


# -- concatenation containers ---------------------------------------------------------------------------------------
def _branches(block):
    with block.name_scope():
        block.add(nn.Dense(2), nn.Identity(), nn.Dense(3, activation="relu"))
    block.initialize()
    return block


def test_hybrid_concatenate_joins_children_along_axis():
    net = _branches(nn.HybridConcatenate(axis=1, prefix="cat_"))
    x = nd.array(_normal((4, 5), 3))
    out = net(x)
    want = np.concatenate([net[0](x).asnumpy(), x.asnumpy(), net[2](x).asnumpy()], axis=1)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    check_hybrid_consistency(net, [x.asnumpy()])
    net.hybridize()
    net(x)
    assert [n.name for n in _op_nodes(net) if n.op.name == "Concat"] == ["cat_concat0"]


def test_concatenate_block():
    net = _branches(nn.Concatenate(axis=-1))
    x = nd.array(_normal((2, 5), 4))
    assert net(x).shape == (2, 10)


# -- models MXNet exported -----------------------------------------------------------------------------------------
class GluonMLP(HybridBlock):
    """The architecture of golden/mxnet/gluon_mlp."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense0 = nn.Dense(64, activation="relu")
            self.dense1 = nn.Dense(32, activation="tanh")
            self.dense2 = nn.Dense(16, activation="sigmoid")
            self.dense3 = nn.Dense(10)

    def hybrid_forward(self, F, x):
        return self.dense3(self.dense2(self.dense1(self.dense0(x))))


class EmbedNet(HybridBlock):
    """The architecture of golden/mxnet/embed_net."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embedding = nn.Embedding(20, 6)
            self.norm = nn.LayerNorm()
            self.dense0 = nn.Dense(8, flatten=False)
            self.dense1 = nn.Dense(3)

    def hybrid_forward(self, F, tokens, extra):
        h = self.norm(self.embedding(tokens) + extra)
        d = self.dense0(h)
        return F.softmax(d, axis=-1), F.log_softmax(d, axis=1), self.dense1(F.mean(h, axis=1))


class ShapeNet(HybridBlock):
    """The architecture of golden/mxnet/shape_net (Dense plus shape operators)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = nn.Dense(5, flatten=False)

    def hybrid_forward(self, F, x):
        x = self.dense(x)
        o0 = F.reshape(x, shape=(0, -1))
        r = F.reshape(x, shape=(0, 0, -3))
        o1 = F.reshape(r, shape=(-4, 1, 2, -2)) * 2.0
        t = F.SwapAxis(F.transpose(x, axes=(0, 2, 1, 3)), dim1=1, dim2=3)
        o2 = F.slice_axis(t, axis=2, begin=1, end=3) + 1.0
        o3 = F.clip(F.slice(x, begin=(None, 1, 0), end=(None, 3, 3)), -0.5, 0.5)
        m4 = F.mean(x, axis=1, keepdims=True)
        s4 = F.expand_dims(F.expand_dims(F.sum(x, axis=(1, 3)), axis=1), axis=3)
        o5 = F.softmax(F.reshape(x, shape=(-3, -2)), axis=1)
        o6 = F.log_softmax(r, axis=-1)
        o7 = F.broadcast_add(F.sum(F.reshape(x, shape=(0, -4, 1, 3, -2)), axis=0, exclude=True),
                             F.mean(F.reshape(x, shape=(0, -1), reverse=True)))
        return o0, o1, o2, o3, F.broadcast_add(m4, s4), o5, o6, o7


GOLDEN_MODELS = [
    ("gluon_mlp", lambda: GluonMLP(prefix="gluonmlp0_"), ()),
    ("embed_net", lambda: EmbedNet(prefix="embednet0_"), ("data0",)),
    ("shape_net", lambda: ShapeNet(prefix="shapenet0_"), ()),
]


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name,make,no_grad", GOLDEN_MODELS, ids=[m[0] for m in GOLDEN_MODELS])
def test_golden_model_matches_mxnet(golden, name, make, no_grad, hybridize):
    ref.check_golden(golden, name, make, no_grad, hybridize)


@pytest.mark.parametrize("name,make,no_grad", GOLDEN_MODELS, ids=[m[0] for m in GOLDEN_MODELS])
def test_golden_model_export_matches_mxnet_json(golden, name, make, no_grad, tmp_path):
    ref.check_golden_json(golden, name, make, tmp_path)
