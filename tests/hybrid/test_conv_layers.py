"""Gluon convolution, pooling and padding layers: MXNet 1.9.1 numbers, reprs, parameter shapes and
exported graphs; eager vs hybridized consistency on drawn shapes; conv models MXNet exported."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph.gluon import nn
from hybridgraph.gluon.hybrid_block import HybridBlock
from hybridgraph.gluon.testing import check_hybrid_consistency
from hybridgraph.nd import autograd

from . import _gluon_ref as ref

CONV_OPS = ("Convolution", "Deconvolution", "Pooling", "Pad")


@pytest.fixture(autouse=True)
def _conv_ops():
    ref.require_ops(*CONV_OPS)


@pytest.mark.parametrize("mode", ["eager", "hybrid", "static"])
@pytest.mark.parametrize("case", ref.CONV_CASES, ids=[c[0] for c in ref.CONV_CASES])
def test_matches_mxnet(case, mode):
    ref.check_against_mxnet(case, mode)


@pytest.mark.parametrize("case", ref.CONV_CASES, ids=[c[0] for c in ref.CONV_CASES])
def test_export_json_matches_mxnet(case, tmp_path):
    ref.check_export(case, tmp_path)


# -- reprs and weight shapes: what MXNet 1.9.1 prints, quirks included ----------------------------------------------
REPRS = [
    (lambda: nn.Conv2D(8, 3), "Conv2D(None -> 8, kernel_size=(3, 3), stride=(1, 1))", (8, 0, 3, 3)),
    (lambda: nn.Conv2D(8, 3, in_channels=4, groups=2),
     "Conv2D(2 -> 8, kernel_size=(3, 3), stride=(1, 1), groups=2)", (8, 2, 3, 3)),
    # channel-last weights are (filters, kh, kw, C), and MXNet's repr reads shape[1] all the same
    (lambda: nn.Conv2D(8, 3, layout="NHWC", in_channels=4), "Conv2D(3 -> 8, kernel_size=(3, 3), stride=(1, 1))",
     (8, 3, 3, 4)),
    (lambda: nn.Conv1D(6, (3,), in_channels=3), "Conv1D(3 -> 6, kernel_size=(3,), stride=(1,))", (6, 3, 3)),
    (lambda: nn.Conv3D(4, 2, layout="NDHWC", in_channels=2),
     "Conv3D(2 -> 4, kernel_size=(2, 2, 2), stride=(1, 1, 1))", (4, 2, 2, 2, 2)),
    (lambda: nn.Conv2DTranspose(8, 3, in_channels=4, groups=2),
     "Conv2DTranspose(4 -> 4, kernel_size=(3, 3), stride=(1, 1), groups=2)", (4, 4, 3, 3)),
    (lambda: nn.Conv2DTranspose(8, 3), "Conv2DTranspose(8 -> 0, kernel_size=(3, 3), stride=(1, 1))", (0, 8, 3, 3)),
    # MXNet never shows output_padding (it tests for `out_pad`, stores `outpad`)
    (lambda: nn.Conv1DTranspose(5, 2, output_padding=1, strides=2, in_channels=3, activation="relu", use_bias=False),
     "Conv1DTranspose(5 -> 3, kernel_size=(2,), stride=(2,), bias=False, Activation(relu))", (3, 5, 2)),
    (lambda: nn.Conv2D(8, 3, strides=2, padding=1, dilation=2, activation="tanh"),
     "Conv2D(None -> 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), dilation=(2, 2), Activation(tanh))",
     (8, 0, 3, 3)),
    (nn.MaxPool2D, "MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, "
     "global_pool=False, pool_type=max, layout=NCHW)", None),
    (lambda: nn.AvgPool1D(3, ceil_mode=True), "AvgPool1D(size=(3,), stride=(3,), padding=(0,), ceil_mode=True, "
     "global_pool=False, pool_type=avg, layout=NCW)", None),
    (nn.GlobalAvgPool2D, "GlobalAvgPool2D(size=(1, 1), stride=(1, 1), padding=(0, 0), ceil_mode=True, "
     "global_pool=True, pool_type=avg, layout=NCHW)", None),
    (lambda: nn.ReflectionPad2D(2), "ReflectionPad2D(\n\n)", None),
]


@pytest.mark.parametrize("make,text,wshape", REPRS, ids=[f"{r[1].split('(')[0]}{i}" for i, r in enumerate(REPRS)])
def test_repr_and_weight_shape_match_mxnet(make, text, wshape):
    block = make()
    assert repr(block) == text
    if wshape is not None:
        assert block.weight.shape == wshape


def test_layer_names_and_pooling_attributes():
    assert nn.Conv2D(2, 1, prefix="c_").bias.name == "c_bias"
    pool = nn.AvgPool2D(2, count_include_pad=False)
    assert pool._kwargs["count_include_pad"] is False
    assert "count_include_pad" not in nn.MaxPool2D()._kwargs
    assert "count_include_pad" not in nn.GlobalAvgPool1D()._kwargs


@pytest.mark.parametrize("make,msg", [
    (lambda: nn.Conv1D(2, 3, layout="NWC"), "Only supports 'NCW'"),
    (lambda: nn.Conv2D(2, (3, 3, 3)), "list of 2 ints"),
    (lambda: nn.MaxPool2D(layout="NCW"), "NCHW and NHWC"),
    (lambda: nn.Conv2DTranspose(2, 3, output_padding=(1, 1, 1)), "output_padding must be"),
])
def test_bad_arguments_are_rejected(make, msg):
    with pytest.raises(AssertionError, match=msg):
        make()


def test_conv_defers_in_channels():
    layer = nn.Conv2D(4, 3, padding=1)
    layer.initialize()
    out = layer(nd.ones((2, 5, 6, 6)))
    assert out.shape == (2, 4, 6, 6)
    assert layer.weight.shape == (4, 5, 3, 3)


def test_transpose_output_shape():
    layer = nn.Conv2DTranspose(3, 3, strides=2, padding=1, output_padding=1, in_channels=2)
    layer.initialize()
    assert layer(nd.ones((1, 2, 4, 5))).shape == (1, 3, 8, 10)


def test_reflection_pad_mirrors_edges():
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    out = nn.ReflectionPad2D(1)(nd.array(x)).asnumpy()
    np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect"))


# -- eager vs hybridized on drawn shapes --------------------------------------------------------------------------
def _consistent(block, x):
    block.initialize()
    with autograd.pause():
        block(nd.array(x))
    check_hybrid_consistency(block, [x], rtol=1e-5, atol=1e-5)


@given(st.integers(1, 2), st.integers(1, 3), st.integers(3, 6), st.integers(1, 3), st.integers(1, 2),
       st.integers(0, 1), st.integers(0, 2 ** 16))
def test_conv2d_consistent(batch, channels, size, kernel, stride, pad, seed):
    x = np.random.RandomState(seed).randn(batch, channels, size, size + 1).astype(np.float32)
    _consistent(nn.Conv2D(2, kernel, strides=stride, padding=pad, activation="relu"), x)


@given(st.integers(1, 2), st.integers(2, 5), st.integers(1, 3), st.integers(1, 2), st.integers(0, 2 ** 16))
def test_conv1d_transpose_consistent(batch, width, kernel, stride, seed):
    x = np.random.RandomState(seed).randn(batch, 2, width).astype(np.float32)
    _consistent(nn.Conv1DTranspose(3, kernel, strides=stride, output_padding=stride - 1), x)


POOLS = [lambda: nn.MaxPool2D(2, 1), lambda: nn.AvgPool2D(2, padding=1), lambda: nn.MaxPool2D(3, 2, ceil_mode=True),
         lambda: nn.AvgPool2D(2, 1, 1, count_include_pad=False), nn.GlobalMaxPool2D,
         nn.GlobalAvgPool2D, lambda: nn.ReflectionPad2D(1)]


@given(st.integers(0, len(POOLS) - 1), st.integers(1, 2), st.integers(3, 5), st.integers(0, 2 ** 16))
def test_pooling_consistent(which, batch, size, seed):
    x = np.random.RandomState(seed).randn(batch, 2, size, size + 1).astype(np.float32)
    _consistent(POOLS[which](), x)


# -- models MXNet exported -----------------------------------------------------------------------------------------
class BNNet(HybridBlock):
    """The architecture of golden/mxnet/bn_net."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv0 = nn.Conv2D(8, 3, padding=1)
            self.bn0 = nn.BatchNorm()
            self.conv1 = nn.Conv2D(8, 3, padding=1, use_bias=False)
            self.bn1 = nn.BatchNorm(momentum=0.8, epsilon=1e-3, center=False)
            self.act = nn.LeakyReLU(0.1)
            self.pool = nn.MaxPool2D()
            self.bn2 = nn.BatchNorm(scale=False)
            self.drop = nn.Dropout(0)
            self.flat = nn.Flatten()
            self.dense0 = nn.Dense(6)
            self.bn3 = nn.BatchNorm()
            self.dense1 = nn.Dense(3)

    def hybrid_forward(self, F, x):
        x = F.relu(self.bn0(self.conv0(x)))
        x = self.pool(self.act(self.bn1(self.conv1(x))))
        x = self.flat(self.drop(self.bn2(x)))
        return self.dense1(self.bn3(self.dense0(x)))


class NormNet(HybridBlock):
    """The architecture of golden/mxnet/norm_net."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv = nn.Conv2D(6, 1)
            self.inorm = nn.InstanceNorm()
            self.gnorm = nn.GroupNorm(num_groups=3)
            self.lnorm = nn.LayerNorm(axis=1, epsilon=1e-3)

    def hybrid_forward(self, F, x):
        x = self.conv(x)
        mixed = F.L2Normalization(x, mode="channel") * F.L2Normalization(F.relu(x), mode="instance")
        return self.inorm(x), self.gnorm(x) + self.lnorm(x), mixed


class DropoutNet(HybridBlock):
    """The architecture of golden/mxnet/dropout_net."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv = nn.Conv2D(4, 3)
            self.drop0 = nn.Dropout(0.5)
            self.drop1 = nn.Dropout(0.3, axes=(2, 3))
            self.dense = nn.Dense(3)

    def hybrid_forward(self, F, x):
        return self.dense(self.drop0(self.drop1(F.relu(self.conv(x)))))


GOLDEN_MODELS = [
    ("bn_net", lambda: BNNet(prefix="bnnet0_")),
    ("norm_net", lambda: NormNet(prefix="normnet0_")),
    ("dropout_net", lambda: DropoutNet(prefix="dropoutnet0_")),
]


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name,make", GOLDEN_MODELS, ids=[m[0] for m in GOLDEN_MODELS])
def test_golden_model_matches_mxnet(golden, name, make, hybridize):
    ref.check_golden(golden, name, make, hybridize=hybridize)


@pytest.mark.parametrize("name,make", GOLDEN_MODELS, ids=[m[0] for m in GOLDEN_MODELS])
def test_golden_model_export_matches_mxnet_json(golden, name, make, tmp_path):
    ref.check_golden_json(golden, name, make, tmp_path)
