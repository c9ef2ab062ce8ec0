"""Parameters and Blocks: deferred initialization, save/load_parameters with structural names
(including files MXNet 1.9.1 wrote), collect_params selection, hooks, summary and repr as
MXNet prints them, share_parameters, cast, apply and zero_grad."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon import Block, DeferredInitializationError, HybridBlock, nn
from hybridgraph.gluon.parameter import Parameter
from hybridgraph.nd import autograd

INTEROP = Path(__file__).resolve().parent.parent / "data" / "interop"
sys.path.insert(0, str(INTEROP))
from archs import nested, summary_net, two_output  # noqa: E402

MX_TEXT = json.loads((INTEROP / "mx_text.json").read_text())


def _rand(*shape: int, seed: int = 0) -> nd.NDArray:
    return nd.array(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


# -- deferred initialization ------------------------------------------------------------------------

@pytest.mark.parametrize("hybridize", [False, True])
def test_deferred_shapes_come_from_the_first_input(hybridize: bool) -> None:
    net = nested(nn)
    net.initialize()
    assert net.features[0].weight.shape == (4, 0, 3, 3)
    with pytest.raises(DeferredInitializationError, match=net.features[0].weight.name):
        net.features[0].weight.data()
    net.hybridize(hybridize)
    assert net(_rand(2, 3, 8, 8)).shape == (2, 5)
    shapes = {k: p.shape for k, p in net._collect_params_with_prefix().items()}
    assert shapes == {"features.0.weight": (4, 3, 3, 3), "features.0.bias": (4,),
                      "features.1.gamma": (4,), "features.1.beta": (4,), "features.1.running_mean": (4,),
                      "features.1.running_var": (4,), "head.weight": (5, 36), "head.bias": (5,)}
    assert net.features[0].weight.data().shape == (4, 3, 3, 3)


class _Unusable(HybridBlock):
    """A parameter whose shape nothing in the forward pass determines."""

    def __init__(self):
        super().__init__(prefix="unusable_")
        with self.name_scope():
            self.scale = self.params.get("scale", shape=(0,), allow_deferred_init=True)

    def hybrid_forward(self, F, x, scale):  # noqa: N803
        return F.broadcast_mul(x, scale)


@pytest.mark.parametrize("hybridize", [False, True])
def test_deferred_init_error_names_the_parameter(hybridize: bool) -> None:
    block = _Unusable()
    block.initialize()
    block.hybridize(hybridize)
    for _ in range(2):  # a failed attempt keeps the parameter deferred: the error repeats
        with pytest.raises(DeferredInitializationError, match=r"unusable_scale.*\(0,\)"):
            block(_rand(2, 3))


def test_parameter_without_deferred_init_needs_a_shape() -> None:
    p = Parameter("w", shape=(0, 3))
    with pytest.raises(ValueError, match="'w' because it has invalid shape"):
        p.initialize()


# -- save / load ---------------------------------------------------------------------------------

def _trained_nested(prefix: str | None = None):
    net = nested(nn, prefix=prefix)
    net.initialize()
    with autograd.record():
        y = net(_rand(3, 2, 8, 8))
    y.backward()
    return net


def test_save_load_parameters_roundtrip_with_structural_names(tmp_path: Path) -> None:
    net = _trained_nested()
    x = _rand(2, 2, 8, 8, seed=1)
    want = net(x).asnumpy()
    net.save_parameters(str(tmp_path / "p.params"))
    assert sorted(nd.load(str(tmp_path / "p.params"))) == sorted(net._collect_params_with_prefix())
    other = nested(nn, prefix="completely_different_")   # names do not matter, structure does
    other.load_parameters(str(tmp_path / "p.params"))
    np.testing.assert_array_equal(other(x).asnumpy(), want)
    other.hybridize()
    np.testing.assert_allclose(other(x).asnumpy(), want, rtol=1e-6)


def test_load_parameters_missing_and_extra(tmp_path: Path) -> None:
    net = _trained_nested()
    net.save_parameters(str(tmp_path / "p.params"))
    bigger = nn.HybridSequential()
    bigger.add(nn.Dense(3, in_units=4))
    bigger.initialize()
    with pytest.raises(AssertionError, match="is not present"):
        bigger.load_parameters(str(tmp_path / "p.params"), allow_missing=True)
    with pytest.raises(AssertionError, match="'0.weight' is missing"):
        bigger.load_parameters(str(tmp_path / "p.params"), ignore_extra=True)


def test_load_parameters_from_mxnet_save_parameters() -> None:
    """mx_nested.params was written by MXNet 1.9.1's save_parameters (tests/data/interop/gen_mx_reference.py)."""
    io = np.load(INTEROP / "mx_nested-io.npz")
    saved = nd.load(str(INTEROP / "mx_nested.params"))
    assert "features.1.running_mean" in saved and "head.weight" in saved
    net = nested(nn)
    net.load_parameters(str(INTEROP / "mx_nested.params"))
    np.testing.assert_allclose(net(nd.array(io["data"])).asnumpy(), io["out"], rtol=1e-5, atol=1e-6)
    net.hybridize()
    np.testing.assert_allclose(net(nd.array(io["data"])).asnumpy(), io["out"], rtol=1e-5, atol=1e-6)


def test_our_save_parameters_file_equals_mxnets_layout(tmp_path: Path) -> None:
    net = nested(nn)
    net.load_parameters(str(INTEROP / "mx_nested.params"))
    net.save_parameters(str(tmp_path / "again.params"))
    assert (tmp_path / "again.params").read_bytes() == (INTEROP / "mx_nested.params").read_bytes()


# -- collect_params ------------------------------------------------------------------------------

def test_collect_params_regex_select() -> None:
    net = nested(nn, prefix="n_")
    names = list(net.collect_params())
    # as MXNet 1.9.1 names them (layers are created in Net's scope, then added to `features`)
    assert names == ["n_conv0_weight", "n_conv0_bias", "n_batchnorm0_gamma", "n_batchnorm0_beta",
                     "n_batchnorm0_running_mean", "n_batchnorm0_running_var", "n_dense0_weight", "n_dense0_bias"]
    assert list(net.collect_params(".*weight")) == ["n_conv0_weight", "n_dense0_weight"]
    assert list(net.collect_params(".*running_.*|n_dense0_bias")) == [
        "n_batchnorm0_running_mean", "n_batchnorm0_running_var", "n_dense0_bias"]
    assert list(net.collect_params("weight")) == []   # re.match: anchored at the start, as MXNet
    net.collect_params(".*weight").setattr("lr_mult", 0.5)
    assert [p.lr_mult for p in net.collect_params().values()] == [0.5, 1, 1, 1, 1, 1, 0.5, 1]


# -- hooks -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("hybridize", [False, True])
def test_forward_hooks_and_removable_handles(hybridize: bool) -> None:
    net = nn.Dense(3, in_units=2)
    net.initialize()
    net.hybridize(hybridize)
    calls = []
    pre = net.register_forward_pre_hook(lambda blk, args: calls.append(("pre", blk, args[0].shape)))
    post = net.register_forward_hook(lambda blk, args, out: calls.append(("post", blk, out.shape)))
    x = _rand(4, 2)
    net(x)
    assert calls == [("pre", net, (4, 2)), ("post", net, (4, 3))]
    pre.detach()
    net(x)
    assert calls[2:] == [("post", net, (4, 3))]
    with post:
        pass          # leaving the handle's context detaches it too
    net(x)
    assert len(calls) == 3


def test_hooks_on_children_of_an_eager_model() -> None:
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=4))
    net.initialize()
    shapes = []
    handles = [child.register_forward_hook(lambda b, a, o: shapes.append((b.name, o.shape))) for child in net]
    net(_rand(5, 3))
    assert shapes == [(net[0].name, (5, 4)), (net[1].name, (5, 2))]
    for h in handles:
        h.detach()
    net(_rand(5, 3))
    assert len(shapes) == 2


# -- summary and repr ----------------------------------------------------------------------------

def test_repr_equals_mxnets() -> None:
    assert repr(nested(nn, prefix="n_")) == MX_TEXT["nested_repr"]
    assert repr(summary_net(nn)) == MX_TEXT["summary_net_repr"]
    net = two_output(nn)
    net.initialize()
    assert repr(net) == MX_TEXT["two_output_repr"]


@pytest.mark.parametrize("builder, shape, key", [(summary_net, (2, 1, 12, 12), "summary_net_summary"),
                                                 (two_output, (3, 4), "two_output_summary")])
def test_summary_prints_mxnets_table(builder, shape, key, capsys: pytest.CaptureFixture) -> None:
    net = builder(nn)
    net.initialize()
    net.summary(nd.ones(shape))
    assert capsys.readouterr().out == MX_TEXT[key]


def test_summary_refuses_a_hybridized_block_and_removes_its_hooks() -> None:
    net = two_output(nn)
    net.initialize()
    net.features.hybridize()
    with pytest.raises(AssertionError, match="must not be hybridized to print summary"):
        net.summary(nd.ones((3, 4)))
    net.features.hybridize(False)
    assert all(not b._forward_hooks for b in (net, net.features, net.features[0], net.out))


def test_summary_counts_shared_parameters(capsys: pytest.CaptureFixture) -> None:
    net = nn.HybridSequential()
    first = nn.Dense(4, in_units=4)
    net.add(first, nn.Dense(4, in_units=4, params=first.params))
    net.initialize()
    net.summary(nd.ones((2, 4)))
    out = capsys.readouterr().out
    assert "   Total params: 40\n" in out
    assert "Shared params in forward computation graph: 20\n" in out
    assert "Unique parameters in model: 20\n" in out


# -- share_parameters, cast, apply, zero_grad -------------------------------------------------------

def test_share_parameters() -> None:
    a, b = nested(nn), nested(nn)
    a.initialize()
    b.initialize()
    x = _rand(2, 3, 8, 8)
    a(x)
    b(x)
    b.share_parameters(a._collect_params_with_prefix())
    assert b.head.weight is a.head.weight and b.features[1].running_var is a.features[1].running_var
    np.testing.assert_array_equal(b(x).asnumpy(), a(x).asnumpy())
    a.head.bias.set_data(nd.ones((5,)))
    np.testing.assert_array_equal(b(x).asnumpy(), a(x).asnumpy())
    b.hybridize()
    np.testing.assert_allclose(b(x).asnumpy(), a(x).asnumpy(), rtol=1e-6)


def test_cast() -> None:
    net = nested(nn)
    net.initialize()
    x = _rand(2, 3, 8, 8)
    want = net(x).asnumpy()
    net.cast("float64")
    assert {p.dtype for p in net.collect_params().values()} == {np.dtype(np.float64)}
    assert {p.data().dtype for p in net.collect_params().values()} == {np.float64}   # the scalar type, as MXNet
    out = net(x.astype("float64"))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)
    net.hybridize()
    np.testing.assert_allclose(net(x.astype("float64")).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_apply_visits_children_first() -> None:
    net = nested(nn, prefix="n_")
    seen = []
    assert net.apply(lambda b: seen.append(type(b).__name__)) is net
    # MXNet 1.9.1's order (Conv2D's activation is its child)
    assert seen == ["Activation", "Conv2D", "BatchNorm", "MaxPool2D", "Flatten", "HybridSequential", "Dense", "Net"]


@pytest.mark.parametrize("hybridize", [False, True])
def test_zero_grad(hybridize: bool) -> None:
    net = nested(nn)
    net.initialize()
    net.hybridize(hybridize)
    with autograd.record():
        y = net(_rand(2, 3, 8, 8))
    y.backward()
    grads = [p.grad() for p in net.collect_params().values() if p.grad_req != "null"]
    assert any(np.abs(g.asnumpy()).sum() > 0 for g in grads)
    net.zero_grad()
    assert all(not g.asnumpy().any() for g in grads)


def test_block_children_and_params_registration() -> None:
    class Custom(Block):
        def __init__(self):
            super().__init__(prefix="custom_")
            with self.name_scope():
                self.inner = nn.Dense(2, in_units=2)
                self.w = self.params.get("w", shape=(2,))

        def forward(self, x):
            return self.inner(x) * self.w.data()

    block = Custom()
    block.initialize()
    assert list(block._children) == ["inner"]
    assert sorted(block.collect_params()) == ["custom_dense0_bias", "custom_dense0_weight", "custom_w"]
    assert sorted(block._collect_params_with_prefix()) == ["inner.bias", "inner.weight", "w"]
    assert block(_rand(3, 2)).shape == (3, 2)
    with pytest.raises(ValueError, match="Children of HybridBlock must also be HybridBlock"):
        nn.HybridSequential().add(Custom())
