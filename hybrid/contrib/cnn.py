"""`mx.gluon.contrib.cnn`: MXNet 1.9.1's DeformableConvolution (v1, Dai et al., 2017) and
ModulatedDeformableConvolution (v2, Zhu et al., 2018) layers.

Each block holds two convolutions: a plain Convolution computing the offsets (v2: offsets and
mask logits) from the input (its weight and bias start at zero, so a fresh layer is an ordinary
convolution; v2's mask is 2 * sigmoid(logits), 1 at zero) and `contrib.DeformableConvolution` /
`contrib.ModulatedDeformableConvolution` sampling the input at the offset taps. Parameter
names, their order, defaults, deferred shapes and the printed forms are MXNet's.
"""
from __future__ import annotations

from typing import Any

from ..hybrid_block import HybridBlock
from ..nn import Activation
from ..nn.conv_layers import conv_repr

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(value: Any, n: int) -> tuple:
    return (value,) * n if isinstance(value, int) else tuple(value)


class _Deformable(HybridBlock):
    """What both layers share: the two convolutions' attributes and parameters. `_per_tap` is
    the offset convolution's channels per kernel tap and deformable group (2: dy, dx; v2 adds
    the mask's logit), `_deformable_first` whether MXNet creates the deformable convolution's
    parameters before the offset convolution's (v2) or after (v1)."""

    _per_tap = 2
    _deformable_first = False

    def __init__(self, channels: int, kernel_size: Any = (1, 1), strides: Any = (1, 1), padding: Any = (0, 0),
                 dilation: Any = (1, 1), groups: int = 1, num_deformable_group: int = 1, layout: str = "NCHW",
                 use_bias: bool = True, in_channels: int = 0, activation: str | None = None,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 offset_weight_initializer: Any = "zeros", offset_bias_initializer: Any = "zeros",
                 offset_use_bias: bool = True, op_name: str | None = None, adj: Any = None,
                 prefix: str | None = None, params: Any = None):
        """MXNet's signature for both layers; `op_name` defaults to the layer's class name
        (MXNet's default for each)."""
        op_name = op_name or type(self).__name__
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            assert layout in ("NCHW", "NHWC"), "Only supports 'NCHW' and 'NHWC' layout for now"
            kernel_size = _pair(kernel_size, 2)
            n = len(kernel_size)
            strides, padding, dilation = _pair(strides, n), _pair(padding, n), _pair(dilation, n)
            self._op_name = op_name
            offset_channels = self._per_tap * kernel_size[0] * kernel_size[1] * num_deformable_group
            self.offset_split_index = 2 * kernel_size[0] * kernel_size[1] * num_deformable_group
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
            makers = [lambda: self._offset_params(offset_shape, offset_channels, offset_use_bias,
                                                  offset_weight_initializer, offset_bias_initializer),
                      lambda: self._deformable_params(channels, kernel_size, use_bias, weight_initializer,
                                                      bias_initializer)]
            for make in (makers[::-1] if self._deformable_first else makers):
                make()
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def _offset_params(self, shape, channels, use_bias, weight_init, bias_init) -> None:
        self.offset_weight = self.params.get("offset_weight", shape=tuple(shape), init=weight_init,
                                             allow_deferred_init=True)
        self.offset_bias = (self.params.get("offset_bias", shape=(channels,), init=bias_init,
                                            allow_deferred_init=True) if use_bias else None)

    def _deformable_params(self, channels, kernel_size, use_bias, weight_init, bias_init) -> None:
        self.deformable_conv_weight = self.params.get(
            "deformable_conv_weight", shape=(channels, 0, *kernel_size), init=weight_init, allow_deferred_init=True)
        self.deformable_conv_bias = (self.params.get("deformable_conv_bias", shape=(channels,), init=bias_init,
                                                     allow_deferred_init=True) if use_bias else None)

    def _offsets(self, F, x, offset_weight, offset_bias):  # noqa: N803
        if offset_bias is None:
            return F.Convolution(x, offset_weight, cudnn_off=True, **self._kwargs_offset)
        return F.Convolution(x, offset_weight, offset_bias, cudnn_off=True, **self._kwargs_offset)

    def _activate(self, out):
        return self.act(out) if self.act else out


class DeformableConvolution(_Deformable):
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

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,  # noqa: N803
                       deformable_conv_bias=None):
        offset = self._offsets(F, x, offset_weight, offset_bias)
        bias = {} if deformable_conv_bias is None else {"bias": deformable_conv_bias}
        return self._activate(F.contrib.DeformableConvolution(data=x, offset=offset, weight=deformable_conv_weight,
                                                              name="fwd", **bias, **self._kwargs_deformable_conv))

    def _alias(self) -> str:
        return "deformable_conv"

    def __repr__(self) -> str:
        return conv_repr(self, self._kwargs_deformable_conv, self.deformable_conv_weight,
                         self.deformable_conv_bias)


class ModulatedDeformableConvolution(_Deformable):
    """2-D Deformable Convolution v2 (Zhu et al., 2018): v1 whose taps are also scaled by a
    learned mask, 2 * sigmoid of a third group of channels of the offset convolution.

    Parameters are those of :class:`DeformableConvolution`; the offset convolution has
    3 * kh * kw * num_deformable_group channels (offsets first, then the mask logits).

    Inputs: data (batch, in_channels, height, width). Output: (batch, channels, out_height,
    out_width), out = floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1.
    """

    _per_tap = 3
    _deformable_first = True

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,  # noqa: N803
                       deformable_conv_bias=None):
        offset = self._offsets(F, x, offset_weight, offset_bias)
        offset_t = F.slice_axis(offset, axis=1, begin=0, end=self.offset_split_index)
        mask = F.sigmoid(F.slice_axis(offset, axis=1, begin=self.offset_split_index, end=None)) * 2
        bias = {} if deformable_conv_bias is None else {"bias": deformable_conv_bias}
        return self._activate(F.contrib.ModulatedDeformableConvolution(
            data=x, offset=offset_t, mask=mask, weight=deformable_conv_weight, name="fwd", **bias,
            **self._kwargs_deformable_conv))

    def _alias(self) -> str:
        return "modulated_deformable_conv"
