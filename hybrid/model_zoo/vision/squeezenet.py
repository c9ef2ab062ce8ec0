"""SqueezeNet 1.0 and 1.1 (MXNet 1.9.1's ``gluon.model_zoo.vision.squeezenet``)."""
from __future__ import annotations

from typing import Any

from ... import nn
from ...hybrid_block import HybridBlock
from ._common import HybridConcurrent, entry_point, finish

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1", "get_squeezenet"]


def _make_fire_conv(channels: int, kernel_size: int, padding: int = 0) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation("relu"))
    return out


def _make_fire(squeeze_channels: int, expand1x1_channels: int, expand3x3_channels: int) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = HybridConcurrent(axis=1, prefix="")
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


def _pool() -> nn.MaxPool2D:
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


# the feature stack after the stem: ints are fire modules' squeeze channels (expand = 4x), "pool" a max-pool
_FIRES = {"1.0": (16, 16, 32, "pool", 32, 48, 48, 64, "pool", 64),
          "1.1": (16, 16, "pool", 32, 32, "pool", 48, 48, 64, 64)}


class SqueezeNet(HybridBlock):
    r"""SqueezeNet model from the `"SqueezeNet: AlexNet-level accuracy with 50x fewer parameters
    and <0.5MB model size" <https://arxiv.org/abs/1602.07360>`_ paper. SqueezeNet 1.1 is from the
    `official SqueezeNet repo <https://github.com/DeepScale/SqueezeNet/tree/master/SqueezeNet_v1.1>`_
    and needs 2.4x less computation than 1.0 at no loss of accuracy.

    Parameters
    ----------
    version : str
        Version of squeezenet. Options are '1.0', '1.1'.
    classes : int, default 1000
        Number of classification classes.
    """

    def __init__(self, version: str, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        assert version in ["1.0", "1.1"], f"Unsupported SqueezeNet version {version}:1.0 or 1.1 expected"
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if version == "1.0":
                self.features.add(nn.Conv2D(96, kernel_size=7, strides=2))
            else:
                self.features.add(nn.Conv2D(64, kernel_size=3, strides=2))
            self.features.add(nn.Activation("relu"))
            self.features.add(_pool())
            for item in _FIRES[version]:
                self.features.add(_pool() if item == "pool" else _make_fire(item, 4 * item, 4 * item))
            self.features.add(nn.Dropout(0.5))

            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation("relu"))
            self.output.add(nn.AvgPool2D(13))
            self.output.add(nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version: str, pretrained: Any = False, ctx: Any = None, root: str | None = None,
                   **kwargs: Any) -> SqueezeNet:
    r"""SqueezeNet model from the `"SqueezeNet: AlexNet-level accuracy with 50x fewer parameters
    and <0.5MB model size" <https://arxiv.org/abs/1602.07360>`_ paper.

    Parameters
    ----------
    version : str
        Version of squeezenet. Options are '1.0', '1.1'.
    pretrained : bool or str, default False
        Load pretrained weights: True looks for MXNet's ``squeezenet<version>-<hash>.params`` in
        `root` (never downloads); a path loads that ``save_parameters`` file.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location of the model parameter files.
    """
    return finish(SqueezeNet(version, **kwargs), f"squeezenet{version}", pretrained, ctx, root)


squeezenet1_0, squeezenet1_1 = (entry_point(f"squeezenet{v.replace('.', '_')}", f"SqueezeNet {v}", get_squeezenet, v)
                                for v in ("1.0", "1.1"))
