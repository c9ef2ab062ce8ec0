"""VGG networks (MXNet 1.9.1's ``gluon.model_zoo.vision.vgg``)."""
from __future__ import annotations

from typing import Any, Callable

from ... import nn
from ...hybrid_block import HybridBlock
from ...initializer import Xavier
from ._common import entry_point, finish

__all__ = ["VGG",
           "vgg11", "vgg13", "vgg16", "vgg19",
           "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn",
           "get_vgg"]


def _make_features(layers: list, filters: list, batch_norm: bool) -> nn.HybridSequential:
    featurizer = nn.HybridSequential(prefix="")
    for i, num in enumerate(layers):
        for _ in range(num):
            featurizer.add(nn.Conv2D(filters[i], kernel_size=3, padding=1,
                                     weight_initializer=Xavier(rnd_type="gaussian", factor_type="out", magnitude=2),
                                     bias_initializer="zeros"))
            if batch_norm:
                featurizer.add(nn.BatchNorm())
            featurizer.add(nn.Activation("relu"))
        featurizer.add(nn.MaxPool2D(strides=2))
    return featurizer


class VGG(HybridBlock):
    r"""VGG model from the `"Very Deep Convolutional Networks for Large-Scale Image Recognition"
    <https://arxiv.org/abs/1409.1556>`_ paper.

    Parameters
    ----------
    layers : list of int
        Numbers of layers in each feature block.
    filters : list of int
        Numbers of filters in each feature block. List length should match the layers.
    classes : int, default 1000
        Number of classification classes.
    batch_norm : bool, default False
        Use batch normalization.
    """

    def __init__(self, layers: list, filters: list, classes: int = 1000, batch_norm: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        assert len(layers) == len(filters)
        with self.name_scope():
            self.features = _make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                           bias_initializer="zeros"))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer="normal", bias_initializer="zeros")

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers: int, pretrained: Any = False, ctx: Any = None, root: str | None = None,
            **kwargs: Any) -> VGG:
    r"""VGG model from the `"Very Deep Convolutional Networks for Large-Scale Image Recognition"
    <https://arxiv.org/abs/1409.1556>`_ paper.

    Parameters
    ----------
    num_layers : int
        Number of layers for the variant of VGG. Options are 11, 13, 16, 19.
    pretrained : bool or str, default False
        Load pretrained weights: True looks for MXNet's ``vgg<N>[_bn]-<hash>.params`` in `root`
        (never downloads); a path loads that ``save_parameters`` file.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location of the model parameter files.
    """
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    suffix = "_bn" if kwargs.get("batch_norm") else ""
    return finish(net, f"vgg{num_layers}{suffix}", pretrained, ctx, root)


def _vgg(num_layers: int, batch_norm: bool) -> Callable[..., VGG]:
    if batch_norm:
        return entry_point(f"vgg{num_layers}_bn", f"VGG-{num_layers} with batch normalization", get_vgg,
                           num_layers, batch_norm=True)
    return entry_point(f"vgg{num_layers}", f"VGG-{num_layers}", get_vgg, num_layers)


vgg11, vgg13, vgg16, vgg19 = (_vgg(n, False) for n in vgg_spec)
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_vgg(n, True) for n in vgg_spec)
