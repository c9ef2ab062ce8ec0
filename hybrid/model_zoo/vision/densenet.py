"""DenseNets (MXNet 1.9.1's ``gluon.model_zoo.vision.densenet``)."""
from __future__ import annotations

from typing import Any

from ... import nn
from ...hybrid_block import HybridBlock
from ._common import HybridConcurrent, entry_point, finish

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201", "get_densenet"]


def _make_dense_layer(growth_rate: int, bn_size: int, dropout: float) -> HybridConcurrent:
    new_features = nn.HybridSequential(prefix="")
    new_features.add(nn.BatchNorm())
    new_features.add(nn.Activation("relu"))
    new_features.add(nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False))
    new_features.add(nn.BatchNorm())
    new_features.add(nn.Activation("relu"))
    new_features.add(nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(nn.Identity())
    out.add(new_features)
    return out


def _make_dense_block(num_layers: int, bn_size: int, growth_rate: int, dropout: float,
                      stage_index: int) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix=f"stage{stage_index}_")
    with out.name_scope():
        for _ in range(num_layers):
            out.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return out


def _make_transition(num_output_features: int) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    out.add(nn.BatchNorm())
    out.add(nn.Activation("relu"))
    out.add(nn.Conv2D(num_output_features, kernel_size=1, use_bias=False))
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    r"""Densenet-BC model from the `"Densely Connected Convolutional Networks"
    <https://arxiv.org/pdf/1608.06993.pdf>`_ paper.

    Parameters
    ----------
    num_init_features : int
        Number of filters to learn in the first convolution layer.
    growth_rate : int
        Number of filters to add each layer (`k` in the paper).
    block_config : list of int
        List of integers for numbers of layers in each pooling block.
    bn_size : int, default 4
        Multiplicative factor for number of bottle neck layers.
        (i.e. bn_size * k features in the bottleneck layer)
    dropout : float, default 0
        Rate of dropout after each dense layer.
    classes : int, default 1000
        Number of classification classes.
    """

    def __init__(self, num_init_features: int, growth_rate: int, block_config: list, bn_size: int = 4,
                 dropout: float = 0, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3, use_bias=False))
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_make_dense_block(num_layers, bn_size, growth_rate, dropout, i + 1))
                num_features += num_layers * growth_rate
                if i != len(block_config) - 1:
                    self.features.add(_make_transition(num_features // 2))
                    num_features //= 2
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.AvgPool2D(pool_size=7))
            self.features.add(nn.Flatten())

            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers: int, pretrained: Any = False, ctx: Any = None, root: str | None = None,
                 **kwargs: Any) -> DenseNet:
    r"""Densenet-BC model from the `"Densely Connected Convolutional Networks"
    <https://arxiv.org/pdf/1608.06993.pdf>`_ paper.

    Parameters
    ----------
    num_layers : int
        Number of layers for the variant of densenet. Options are 121, 161, 169, 201.
    pretrained : bool or str, default False
        Load pretrained weights: True looks for MXNet's ``densenet<N>-<hash>.params`` in `root`
        (never downloads); a path loads that ``save_parameters`` file.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location of the model parameter files.
    """
    num_init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(num_init_features, growth_rate, block_config, **kwargs)
    return finish(net, f"densenet{num_layers}", pretrained, ctx, root)


densenet121, densenet161, densenet169, densenet201 = (
    entry_point(f"densenet{n}", f"Densenet-BC {n}-layer", get_densenet, n) for n in densenet_spec)
