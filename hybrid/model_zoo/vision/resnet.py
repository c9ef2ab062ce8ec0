"""ResNets V1 and V2 (MXNet 1.9.1's ``gluon.model_zoo.vision.resnet``)."""
from __future__ import annotations

from typing import Any, Callable

from ... import nn
from ...hybrid_block import HybridBlock
from ._common import entry_point, finish

__all__ = ["ResNetV1", "ResNetV2",
           "BasicBlockV1", "BasicBlockV2",
           "BottleneckV1", "BottleneckV2",
           "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
           "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2",
           "get_resnet"]


def _conv3x3(channels: int, stride: int, in_channels: int) -> nn.Conv2D:
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False, in_channels=in_channels)


def _downsample_v1(channels: int, stride: int, in_channels: int) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False, in_channels=in_channels))
    out.add(nn.BatchNorm())
    return out


_BLOCK_PARAMS_DOC = """

    Parameters
    ----------
    channels : int
        Number of output channels.
    stride : int
        Stride size.
    downsample : bool, default False
        Whether to downsample the input.
    in_channels : int, default 0
        Number of input channels. Default is 0, to infer from the graph.
    """


class _BlockV1(HybridBlock):
    """Post-activation residual block: relu(body(x) + shortcut(x)), the shortcut a 1x1 conv + BN
    when downsampling. `_shortcut_first`: the sum's operand order (MXNet's differs between the
    two V1 blocks, and the exported graph keeps it)."""

    _shortcut_first = True

    def hybrid_forward(self, F, x):
        out = self.body(x)
        residual = x if self.downsample is None else self.downsample(x)
        return F.Activation(residual + out if self._shortcut_first else out + residual, act_type="relu")


class _BlockV2(HybridBlock):
    """Pre-activation residual block: steps BN, relu, conv (``bn1, conv1`` ... ``bn<_depth>, conv<_depth>``);
    the shortcut (a 1x1 conv when downsampling) reads the first activation."""

    _depth = 2

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample is not None:
            residual = self.downsample(x)
        x = self.conv1(x)
        for i in range(2, self._depth + 1):
            x = getattr(self, f"conv{i}")(F.Activation(getattr(self, f"bn{i}")(x), act_type="relu"))
        return x + residual


class BasicBlockV1(_BlockV1):
    __doc__ = r"""BasicBlock V1 from `"Deep Residual Learning for Image Recognition"
    <http://arxiv.org/abs/1512.03385>`_ paper. Used by ResNet V1 with 18 and 34 layers.""" + _BLOCK_PARAMS_DOC

    def __init__(self, channels: int, stride: int, downsample: bool = False, in_channels: int = 0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        # as in MXNet, the children are made outside this block's name scope
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_conv3x3(channels, stride, in_channels))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(channels, 1, channels))
        self.body.add(nn.BatchNorm())
        self.downsample = _downsample_v1(channels, stride, in_channels) if downsample else None


class BottleneckV1(_BlockV1):
    __doc__ = r"""Bottleneck V1 from `"Deep Residual Learning for Image Recognition"
    <http://arxiv.org/abs/1512.03385>`_ paper. Used by ResNet V1 with 50, 101 and 152 layers.""" + _BLOCK_PARAMS_DOC

    _shortcut_first = False

    def __init__(self, channels: int, stride: int, downsample: bool = False, in_channels: int = 0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(channels // 4, 1, channels // 4))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(nn.Conv2D(channels, kernel_size=1, strides=1))
        self.body.add(nn.BatchNorm())
        self.downsample = _downsample_v1(channels, stride, in_channels) if downsample else None


class BasicBlockV2(_BlockV2):
    __doc__ = r"""BasicBlock V2 from `"Identity Mappings in Deep Residual Networks"
    <https://arxiv.org/abs/1603.05027>`_ paper. Used by ResNet V2 with 18 and 34 layers.""" + _BLOCK_PARAMS_DOC

    def __init__(self, channels: int, stride: int, downsample: bool = False, in_channels: int = 0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
                           if downsample else None)


class BottleneckV2(_BlockV2):
    __doc__ = r"""Bottleneck V2 from `"Identity Mappings in Deep Residual Networks"
    <https://arxiv.org/abs/1603.05027>`_ paper. Used by ResNet V2 with 50, 101 and 152 layers.""" + _BLOCK_PARAMS_DOC

    _depth = 3

    def __init__(self, channels: int, stride: int, downsample: bool = False, in_channels: int = 0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
                           if downsample else None)


def _add_stem(features: nn.HybridSequential, channels: int, thumbnail: bool) -> None:
    if thumbnail:
        features.add(_conv3x3(channels, 1, 0))
    else:
        features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False))
        features.add(nn.BatchNorm())
        features.add(nn.Activation("relu"))
        features.add(nn.MaxPool2D(3, 2, 1))


def _add_stages(features: nn.HybridSequential, block: type, layers: list, channels: list) -> None:
    """Stage i+1 (``stage<i+1>_``): `layers[i]` blocks taking channels[i] to channels[i+1], the
    first of them striding by 2 (except in stage 1) and downsampling when the width changes."""
    for i, num_layer in enumerate(layers):
        stage = nn.HybridSequential(prefix=f"stage{i + 1}_")
        with stage.name_scope():
            out_channels, in_channels = channels[i + 1], channels[i]
            stage.add(block(out_channels, 1 if i == 0 else 2, out_channels != in_channels,
                            in_channels=in_channels, prefix=""))
            for _ in range(num_layer - 1):
                stage.add(block(out_channels, 1, False, in_channels=out_channels, prefix=""))
        features.add(stage)


def _net_params_doc(version: int) -> str:
    """The Parameters section of ResNetV<version>'s docstring."""
    return f"""

    Parameters
    ----------
    block : type
        Class of the residual block: BasicBlockV{version} or BottleneckV{version}.
    layers : list of int
        Numbers of layers in each block.
    channels : list of int
        Numbers of channels in each block. Length should be one larger than layers list.
    classes : int, default 1000
        Number of classification classes.
    thumbnail : bool, default False
        Enable thumbnail (a 3x3 stem without downsampling, for small images).
    """


class ResNetV1(HybridBlock):
    __doc__ = r"""ResNet V1 model from `"Deep Residual Learning for Image Recognition"
    <http://arxiv.org/abs/1512.03385>`_ paper.""" + _net_params_doc(1)

    def __init__(self, block: type, layers: list, channels: list, classes: int = 1000, thumbnail: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            _add_stem(self.features, channels[0], thumbnail)
            _add_stages(self.features, block, layers, channels)
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV2(HybridBlock):
    __doc__ = r"""ResNet V2 model from `"Identity Mappings in Deep Residual Networks"
    <https://arxiv.org/abs/1603.05027>`_ paper.""" + _net_params_doc(2)

    def __init__(self, block: type, layers: list, channels: list, classes: int = 1000, thumbnail: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.BatchNorm(scale=False, center=False))
            _add_stem(self.features, channels[0], thumbnail)
            _add_stages(self.features, block, layers, channels)
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}

resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
                         {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version: int, num_layers: int, pretrained: Any = False, ctx: Any = None, root: str | None = None,
               **kwargs: Any) -> HybridBlock:
    r"""ResNet V1 (`"Deep Residual Learning for Image Recognition"
    <http://arxiv.org/abs/1512.03385>`_) or V2 (`"Identity Mappings in Deep Residual Networks"
    <https://arxiv.org/abs/1603.05027>`_).

    Parameters
    ----------
    version : int
        Version of ResNet. Options are 1, 2.
    num_layers : int
        Numbers of layers. Options are 18, 34, 50, 101, 152.
    pretrained : bool or str, default False
        Load pretrained weights: True looks for MXNet's ``resnet<N>_v<V>-<hash>.params`` in `root`
        (never downloads); a path loads that ``save_parameters`` file.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location of the model parameter files.
    """
    assert num_layers in resnet_spec, f"Invalid number of layers: {num_layers}. Options are {resnet_spec.keys()}"
    block_type, layers, channels = resnet_spec[num_layers]
    assert 1 <= version <= 2, f"Invalid resnet version: {version}. Options are 1 and 2."
    block_class = resnet_block_versions[version - 1][block_type]
    net = resnet_net_versions[version - 1](block_class, layers, channels, **kwargs)
    return finish(net, f"resnet{num_layers}_v{version}", pretrained, ctx, root)


def _resnet(version: int, num_layers: int) -> Callable[..., HybridBlock]:
    return entry_point(f"resnet{num_layers}_v{version}", f"ResNet-{num_layers} V{version}", get_resnet,
                       version, num_layers)


resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1 = (_resnet(1, n) for n in resnet_spec)
resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2 = (_resnet(2, n) for n in resnet_spec)
