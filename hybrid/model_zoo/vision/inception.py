"""Inception V3 (MXNet 1.9.1's ``gluon.model_zoo.vision.inception``)."""
from __future__ import annotations

from typing import Any

from ... import nn
from ...hybrid_block import HybridBlock
from ._common import HybridConcurrent, finish

__all__ = ["Inception3", "inception_v3"]

# a conv setting is (channels, kernel_size, strides, padding); None keeps Conv2D's default
_SETTING_NAMES = ("channels", "kernel_size", "strides", "padding")


def _make_basic_conv(**kwargs: Any) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(use_bias=False, **kwargs))
    out.add(nn.BatchNorm(epsilon=0.001))
    out.add(nn.Activation("relu"))
    return out


def _make_branch(use_pool: str | None, *conv_settings: tuple) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    if use_pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif use_pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for setting in conv_settings:
        kwargs = {name: value for name, value in zip(_SETTING_NAMES, setting) if value is not None}
        out.add(_make_basic_conv(**kwargs))
    return out


def _concurrent(prefix: str, *branches: tuple) -> HybridConcurrent:
    """A HybridConcurrent named `prefix` whose children are made, in its name scope, by `branches`:
    each a tuple (function, *arguments)."""
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for fn, *args in branches:
            out.add(fn(*args))
    return out


def _make_A(pool_features: int, prefix: str) -> HybridConcurrent:
    return _concurrent(prefix,
                       (_make_branch, None, (64, 1, None, None)),
                       (_make_branch, None, (48, 1, None, None), (64, 5, None, 2)),
                       (_make_branch, None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
                       (_make_branch, "avg", (pool_features, 1, None, None)))


def _make_B(prefix: str) -> HybridConcurrent:
    return _concurrent(prefix,
                       (_make_branch, None, (384, 3, 2, None)),
                       (_make_branch, None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
                       (_make_branch, "max"))


def _make_C(channels_7x7: int, prefix: str) -> HybridConcurrent:
    c7 = channels_7x7
    return _concurrent(prefix,
                       (_make_branch, None, (192, 1, None, None)),
                       (_make_branch, None, (c7, 1, None, None), (c7, (1, 7), None, (0, 3)),
                        (192, (7, 1), None, (3, 0))),
                       (_make_branch, None, (c7, 1, None, None), (c7, (7, 1), None, (3, 0)),
                        (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)), (192, (1, 7), None, (0, 3))),
                       (_make_branch, "avg", (192, 1, None, None)))


def _make_D(prefix: str) -> HybridConcurrent:
    return _concurrent(prefix,
                       (_make_branch, None, (192, 1, None, None), (320, 3, 2, None)),
                       (_make_branch, None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                        (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
                       (_make_branch, "max"))


def _make_E_split(first: tuple) -> nn.HybridSequential:
    """A branch `first`, then a 1x3 and a 3x1 convolution side by side (made in MXNet's order)."""
    out = nn.HybridSequential(prefix="")
    out.add(_make_branch(None, *first))
    split = HybridConcurrent(axis=1, prefix="")
    split.add(_make_branch(None, (384, (1, 3), None, (0, 1))))
    split.add(_make_branch(None, (384, (3, 1), None, (1, 0))))
    out.add(split)
    return out


def _make_E(prefix: str) -> HybridConcurrent:
    return _concurrent(prefix,
                       (_make_branch, None, (320, 1, None, None)),
                       (_make_E_split, ((384, 1, None, None),)),
                       (_make_E_split, ((448, 1, None, None), (384, 3, None, 1))),
                       (_make_branch, "avg", (192, 1, None, None)))


def make_aux(classes: int) -> nn.HybridSequential:
    """The auxiliary classifier head of Inception V3 (not used by :class:`Inception3`)."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.AvgPool2D(pool_size=5, strides=3))
    out.add(_make_basic_conv(channels=128, kernel_size=1))
    out.add(_make_basic_conv(channels=768, kernel_size=5))
    out.add(nn.Flatten())
    out.add(nn.Dense(classes))
    return out


class Inception3(HybridBlock):
    r"""Inception v3 model from `"Rethinking the Inception Architecture for Computer Vision"
    <http://arxiv.org/abs/1512.00567>`_ paper.

    Parameters
    ----------
    classes : int, default 1000
        Number of classification classes.
    """

    def __init__(self, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(_make_basic_conv(channels=32, kernel_size=3, strides=2))
            self.features.add(_make_basic_conv(channels=32, kernel_size=3))
            self.features.add(_make_basic_conv(channels=64, kernel_size=3, padding=1))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_make_basic_conv(channels=80, kernel_size=1))
            self.features.add(_make_basic_conv(channels=192, kernel_size=3))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_make_A(32, "A1_"))
            self.features.add(_make_A(64, "A2_"))
            self.features.add(_make_A(64, "A3_"))
            self.features.add(_make_B("B_"))
            self.features.add(_make_C(128, "C1_"))
            self.features.add(_make_C(160, "C2_"))
            self.features.add(_make_C(160, "C3_"))
            self.features.add(_make_C(192, "C4_"))
            self.features.add(_make_D("D_"))
            self.features.add(_make_E("E1_"))
            self.features.add(_make_E("E2_"))
            self.features.add(nn.AvgPool2D(pool_size=8))
            self.features.add(nn.Dropout(0.5))

            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained: Any = False, ctx: Any = None, root: str | None = None, **kwargs: Any) -> Inception3:
    r"""Inception v3 model from `"Rethinking the Inception Architecture for Computer Vision"
    <http://arxiv.org/abs/1512.00567>`_ paper.

    Parameters
    ----------
    pretrained : bool or str, default False
        Load pretrained weights: True looks for MXNet's ``inceptionv3-<hash>.params`` in `root`
        (never downloads); a path loads that ``save_parameters`` file.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location of the model parameter files.
    """
    return finish(Inception3(**kwargs), "inceptionv3", pretrained, ctx, root)
