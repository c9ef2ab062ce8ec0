"""MobileNet and MobileNetV2 (MXNet 1.9.1's ``gluon.model_zoo.vision.mobilenet``)."""
from __future__ import annotations

from typing import Any, Callable

from ... import nn
from ...hybrid_block import HybridBlock
from ._common import entry_point, finish

__all__ = ["MobileNet", "MobileNetV2", "mobilenet1_0", "mobilenet_v2_1_0", "mobilenet0_75",
           "mobilenet_v2_0_75", "mobilenet0_5", "mobilenet_v2_0_5", "mobilenet0_25",
           "mobilenet_v2_0_25", "get_mobilenet", "get_mobilenet_v2"]


class RELU6(HybridBlock):
    """ReLU6: ``clip(x, 0, 6)``, as in MobileNetV2."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name="relu6")


def _add_conv(out: nn.HybridSequential, channels: int = 1, kernel: int = 1, stride: int = 1, pad: int = 0,
              num_group: int = 1, active: bool = True, relu6: bool = False) -> None:
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out: nn.HybridSequential, dw_channels: int, channels: int, stride: int,
                 relu6: bool = False) -> None:
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1, num_group=dw_channels, relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    r"""LinearBottleneck used in MobileNetV2 model from the
    `"Inverted Residuals and Linear Bottlenecks: Mobile Networks for Classification, Detection and
    Segmentation" <https://arxiv.org/abs/1801.04381>`_ paper.

    Parameters
    ----------
    in_channels : int
        Number of input channels.
    channels : int
        Number of output channels.
    t : int
        Layer expansion ratio.
    stride : int
        Stride.
    """

    def __init__(self, in_channels: int, channels: int, t: int, stride: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, in_channels * t, relu6=True)
            _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1, num_group=in_channels * t,
                      relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        if self.use_shortcut:
            out = F.elemwise_add(out, x)
        return out


def _scaled(multiplier: float, widths: list) -> list:
    return [int(x * multiplier) for x in widths]


class MobileNet(HybridBlock):
    r"""MobileNet model from the `"MobileNets: Efficient Convolutional Neural Networks for Mobile
    Vision Applications" <https://arxiv.org/abs/1704.04861>`_ paper.

    Parameters
    ----------
    multiplier : float, default 1.0
        The width multiplier for controlling the model size. Only multipliers that are no
        less than 0.25 are supported. The actual number of channels is equal to the original
        channel size multiplied by this multiplier.
    classes : int, default 1000
        Number of classes for the output layer.
    """

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1, stride=2)
                dw_channels = _scaled(multiplier, [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024])
                channels = _scaled(multiplier, [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2)
                strides = [1, 2] * 3 + [1] * 5 + [2, 1]
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D())
                self.features.add(nn.Flatten())

            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    r"""MobileNetV2 model from the `"Inverted Residuals and Linear Bottlenecks: Mobile Networks for
    Classification, Detection and Segmentation" <https://arxiv.org/abs/1801.04381>`_ paper.

    Parameters
    ----------
    multiplier : float, default 1.0
        The width multiplier for controlling the model size. The actual number of channels
        is equal to the original channel size multiplied by this multiplier.
    classes : int, default 1000
        Number of classes for the output layer.
    """

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                self._add_features(multiplier)
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"), nn.Flatten())

    def _add_features(self, multiplier: float) -> None:
        _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1, relu6=True)
        in_channels_group = _scaled(multiplier, [32] + [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3
                                    + [160] * 3)
        channels_group = _scaled(multiplier, [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3
                                 + [320])
        ts = [1] + [6] * 16
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        for in_c, c, t, s in zip(in_channels_group, channels_group, ts, strides):
            self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t, stride=s))
        last_channels = int(1280 * multiplier) if multiplier > 1.0 else 1280
        _add_conv(self.features, last_channels, relu6=True)
        self.features.add(nn.GlobalAvgPool2D())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _version_suffix(multiplier: float) -> str:
    suffix = f"{multiplier:.2f}"
    return suffix[:-1] if suffix in ("1.00", "0.50") else suffix


def get_mobilenet(multiplier: float, pretrained: Any = False, ctx: Any = None, root: str | None = None,
                  **kwargs: Any) -> MobileNet:
    r"""MobileNet model from the `"MobileNets: Efficient Convolutional Neural Networks for Mobile
    Vision Applications" <https://arxiv.org/abs/1704.04861>`_ paper.

    Parameters
    ----------
    multiplier : float
        The width multiplier for controlling the model size. Only multipliers that are no
        less than 0.25 are supported.
    pretrained : bool or str, default False
        Load pretrained weights: True looks for MXNet's ``mobilenet<multiplier>-<hash>.params`` in
        `root` (never downloads); a path loads that ``save_parameters`` file.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location of the model parameter files.
    """
    net = MobileNet(multiplier, **kwargs)
    return finish(net, f"mobilenet{_version_suffix(multiplier)}", pretrained, ctx, root)


def get_mobilenet_v2(multiplier: float, pretrained: Any = False, ctx: Any = None, root: str | None = None,
                     **kwargs: Any) -> MobileNetV2:
    r"""MobileNetV2 model from the `"Inverted Residuals and Linear Bottlenecks: Mobile Networks for
    Classification, Detection and Segmentation" <https://arxiv.org/abs/1801.04381>`_ paper.

    Parameters
    ----------
    multiplier : float
        The width multiplier for controlling the model size.
    pretrained : bool or str, default False
        Load pretrained weights: True looks for MXNet's ``mobilenetv2_<multiplier>-<hash>.params``
        in `root` (never downloads); a path loads that ``save_parameters`` file.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location of the model parameter files.
    """
    net = MobileNetV2(multiplier, **kwargs)
    return finish(net, f"mobilenetv2_{_version_suffix(multiplier)}", pretrained, ctx, root)


def _mobilenet(multiplier: float, v2: bool) -> Callable[..., HybridBlock]:
    width = str(multiplier).replace(".", "_")
    if v2:
        return entry_point(f"mobilenet_v2_{width}", f"MobileNetV2 with width multiplier {multiplier}",
                           get_mobilenet_v2, multiplier)
    return entry_point(f"mobilenet{width}", f"MobileNet with width multiplier {multiplier}", get_mobilenet,
                       multiplier)


mobilenet1_0, mobilenet0_75, mobilenet0_5, mobilenet0_25 = (_mobilenet(m, False) for m in (1.0, 0.75, 0.5, 0.25))
mobilenet_v2_1_0, mobilenet_v2_0_75, mobilenet_v2_0_5, mobilenet_v2_0_25 = (
    _mobilenet(m, True) for m in (1.0, 0.75, 0.5, 0.25))
