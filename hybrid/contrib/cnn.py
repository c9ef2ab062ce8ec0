"""`mx.gluon.contrib.cnn`: MXNet 1.9.1's DeformableConvolution layer (Dai et al., 2017).

One block holds both convolutions: a plain Convolution computing the offsets from the input
(its weight and bias start at zero, so a fresh layer is an ordinary convolution) and
`contrib.DeformableConvolution` sampling the input at the offset taps. Parameter names,
defaults, deferred shapes and the printed form are MXNet's. ModulatedDeformableConvolution
(deformable convolution v2, with a learned mask) is not implemented.
"""
from __future__ import annotations

from typing import Any

from ..hybrid_block import HybridBlock
from ..nn import Activation

__all__ = ["DeformableConvolution"]


def _pair(value: Any, n: int) -> tuple:
    return (value,) * n if isinstance(value, int) else tuple(value)


class DeformableConvolution(HybridBlock):
    """2-D Deformable Convolution v1.

    Parameters
    ----------
    channels : int
        The number of output channels.
    kernel_size, strides, padding, dilation : int or tuple of 2 int
        The convolution window, its strides, implicit zero padding and dilation.
    groups : int, default 1
        Channel groups of both convolutions.
    num_deformable_group : int, default 1
        Deformable groups: channel groups sharing one set of offsets.
    layout : str, default 'NCHW'
        'NCHW' or 'NHWC' (MXNet's operator computes NCHW only and refuses NHWC when run).
    use_bias : bool, default True
        Whether the output convolution has a bias.
    in_channels : int, default 0
        Input channels; 0 infers them on the first forward pass.
    activation : str, optional
        Activation applied to the output (see :class:`Activation`).
    weight_initializer, bias_initializer : initializers of the output convolution.
    offset_weight_initializer, offset_bias_initializer : initializers of the offset convolution
        (default zeros).
    offset_use_bias : bool, default True
        Whether the offset convolution has a bias.

    Inputs: data (batch, in_channels, height, width). Output: (batch, channels, out_height,
    out_width), out = floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1.
    """

    def __init__(self, channels: int, kernel_size: Any = (1, 1), strides: Any = (1, 1), padding: Any = (0, 0),
                 dilation: Any = (1, 1), groups: int = 1, num_deformable_group: int = 1, layout: str = "NCHW",
                 use_bias: bool = True, in_channels: int = 0, activation: str | None = None,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 offset_weight_initializer: Any = "zeros", offset_bias_initializer: Any = "zeros",
                 offset_use_bias: bool = True, op_name: str = "DeformableConvolution", adj: Any = None,
                 prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            assert layout in ("NCHW", "NHWC"), "Only supports 'NCHW' and 'NHWC' layout for now"
            kernel_size = _pair(kernel_size, 2)
            n = len(kernel_size)
            strides, padding, dilation = _pair(strides, n), _pair(padding, n), _pair(dilation, n)
            self._op_name = op_name
            offset_channels = 2 * kernel_size[0] * kernel_size[1] * num_deformable_group
            self._kwargs_offset = {"kernel": kernel_size, "stride": strides, "dilate": dilation, "pad": padding,
                                   "num_filter": offset_channels, "num_group": groups,
                                   "no_bias": not offset_use_bias, "layout": layout}
            self._kwargs_deformable_conv = {"kernel": kernel_size, "stride": strides, "dilate": dilation,
                                            "pad": padding, "num_filter": channels, "num_group": groups,
                                            "num_deformable_group": num_deformable_group,
                                            "no_bias": not use_bias, "layout": layout}
            if adj:
                self._kwargs_offset["adj"] = adj
                self._kwargs_deformable_conv["adj"] = adj
            c_axis = layout.find("C")
            offset_shape = [offset_channels, 0, *kernel_size] if c_axis == 1 else [offset_channels, *kernel_size, 0]
            offset_shape[c_axis] = in_channels // groups if in_channels else 0
            self.offset_weight = self.params.get("offset_weight", shape=tuple(offset_shape),
                                                 init=offset_weight_initializer, allow_deferred_init=True)
            self.offset_bias = (self.params.get("offset_bias", shape=(offset_channels,), init=offset_bias_initializer,
                                                allow_deferred_init=True) if offset_use_bias else None)
            self.deformable_conv_weight = self.params.get(
                "deformable_conv_weight", shape=(channels, 0, *kernel_size), init=weight_initializer,
                allow_deferred_init=True)
            self.deformable_conv_bias = (self.params.get("deformable_conv_bias", shape=(channels,),
                                                         init=bias_initializer, allow_deferred_init=True)
                                         if use_bias else None)
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,  # noqa: N803
                       deformable_conv_bias=None):
        if offset_bias is None:
            offset = F.Convolution(x, offset_weight, cudnn_off=True, **self._kwargs_offset)
        else:
            offset = F.Convolution(x, offset_weight, offset_bias, cudnn_off=True, **self._kwargs_offset)
        if deformable_conv_bias is None:
            act = F.contrib.DeformableConvolution(data=x, offset=offset, weight=deformable_conv_weight, name="fwd",
                                                  **self._kwargs_deformable_conv)
        else:
            act = F.contrib.DeformableConvolution(data=x, offset=offset, weight=deformable_conv_weight,
                                                  bias=deformable_conv_bias, name="fwd", **self._kwargs_deformable_conv)
        if self.act:
            act = self.act(act)
        return act

    def _alias(self) -> str:
        return "deformable_conv"

    def __repr__(self) -> str:
        kw = self._kwargs_deformable_conv
        n = len(kw["kernel"])
        s = f"{self.__class__.__name__}({{mapping}}, kernel_size={kw['kernel']}, stride={kw['stride']}"
        if kw["pad"] != (0,) * n:
            s += f", padding={kw['pad']}"
        if kw["dilate"] != (1,) * n:
            s += f", dilation={kw['dilate']}"
        if kw["num_group"] != 1:
            s += f", groups={kw['num_group']}"
        if self.deformable_conv_bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        s += ")"
        shape = self.deformable_conv_weight.shape
        return s.format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}")


def __getattr__(name: str):
    if name == "ModulatedDeformableConvolution":
        raise NotImplementedError("gluon.contrib.cnn.ModulatedDeformableConvolution (deformable convolution v2, "
                                  "MXNet's contrib.ModulatedDeformableConvolution operator) is not implemented in "
                                  "hybridgraph; use gluon.contrib.cnn.DeformableConvolution (v1)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
