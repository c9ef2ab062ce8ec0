"""Convolution, pooling and padding layers (`mx.gluon.nn.conv_layers`).

The layers call `Convolution` / `Deconvolution` / `Pooling` / `pad` with
MXNet 1.9.1's attributes (`kernel`, `stride`, `dilate`, `pad`, `num_filter`,
`num_group`, `no_bias`, `layout`, `adj`; `pool_type`, `global_pool`,
`pooling_convention`, `count_include_pad`) and `name='fwd'`, so exported
graphs match MXNet's. Reprs reproduce MXNet's, quirks included.
"""
from __future__ import annotations

import numbers
from typing import Any

from ..hybrid_block import HybridBlock
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D",
           "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
           "MaxPool1D", "MaxPool2D", "MaxPool3D",
           "AvgPool1D", "AvgPool2D", "AvgPool3D",
           "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D",
           "ReflectionPad2D"]


def _tuple(value: Any, n: int) -> tuple:
    return (value,) * n if isinstance(value, numbers.Number) else tuple(value)


def _weight_shape(op_name: str, layout: str, in_channels: int, channels: int, kernel: tuple,
                  groups: int) -> tuple:
    """The weight shape MXNet's shape inference gives for this layer (0 = unknown channels).

    Convolution: `(channels, in_channels / groups, *kernel)`; Deconvolution:
    `(in_channels, channels / groups, *kernel)`. With a channel-last layout
    the channel dimension moves to the end, as in MXNet.
    """
    if op_name == "Convolution":
        lead, chan = channels, in_channels // groups
    else:
        lead, chan = in_channels, channels // groups
    if layout.find("C") == 1:
        return (lead, chan, *kernel)
    return (lead, *kernel, chan)


class _Conv(HybridBlock):
    """Abstract nD (transposed) convolution layer; see :class:`Conv2D` for the parameters."""

    def __init__(self, channels: int, kernel_size: tuple, strides: Any, padding: Any, dilation: Any,
                 groups: int, layout: str, in_channels: int = 0, activation: str | None = None,
                 use_bias: bool = True, weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 op_name: str = "Convolution", adj: tuple | None = None, prefix: str | None = None,
                 params: Any = None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            n = len(kernel_size)
            strides, padding, dilation = _tuple(strides, n), _tuple(padding, n), _tuple(dilation, n)
            self._op_name = op_name
            self._kwargs = {"kernel": kernel_size, "stride": strides, "dilate": dilation, "pad": padding,
                            "num_filter": channels, "num_group": groups, "no_bias": not use_bias,
                            "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = adj
            self.weight = self.params.get(
                "weight", shape=_weight_shape(op_name, layout, in_channels, channels, kernel_size, groups),
                init=weight_initializer, allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(channels,), init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            act = op(x, weight, name="fwd", **self._kwargs)
        else:
            act = op(x, weight, bias, name="fwd", **self._kwargs)
        if self.act is not None:
            act = self.act(act)
        return act

    def _alias(self) -> str:
        return "conv"

    def __repr__(self) -> str:
        return conv_repr(self, self._kwargs, self.weight, self.bias, getattr(self, "out_pad", None))


def _check(layout: str, allowed: tuple, what: str) -> None:
    assert layout in allowed, what


def _kernel(kernel_size: Any, n: int, name: str = "kernel_size") -> tuple:
    kernel_size = _tuple(kernel_size, n)
    assert len(kernel_size) == n, f"{name} must be a number or a list of {n} ints"
    return kernel_size


class Conv1D(_Conv):
    r"""1D convolution layer (e.g. temporal convolution).

    Parameters
    ----------
    channels : int
        The number of output channels (filters).
    kernel_size : int or tuple/list of 1 int
        The dimensions of the convolution window.
    strides : int or tuple/list of 1 int, default 1
        The strides of the convolution.
    padding : int or tuple/list of 1 int, default 0
        Implicit zero-padding on both sides.
    dilation : int or tuple/list of 1 int, default 1
        The dilation rate for dilated convolution.
    groups : int, default 1
        Number of groups the input and output channels are split into.
    layout : str, default 'NCW'
        Dimension ordering of data and weight; only 'NCW' is supported.
    activation : str, optional
        Activation function applied to the output (see :class:`Activation`).
    use_bias : bool, default True
        Whether the layer uses a bias vector.
    weight_initializer, bias_initializer : str or Initializer
    in_channels : int, default 0
        The number of input channels; if 0 it is inferred on the first forward pass.

    Inputs:
        - **data**: `(batch_size, in_channels, width)`.

    Outputs:
        - **out**: `(batch_size, channels, out_width)` with
          ``out_width = floor((width+2*padding-dilation*(kernel_size-1)-1)/stride)+1``.
    """

    def __init__(self, channels: int, kernel_size: Any, strides: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, layout: str = "NCW", activation: str | None = None, use_bias: bool = True,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros", in_channels: int = 0,
                 **kwargs: Any):
        _check(layout, ("NCW",), "Only supports 'NCW' layout for now")
        op_name = kwargs.pop("op_name", "Convolution")
        super().__init__(channels, _kernel(kernel_size, 1), strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer, op_name,
                         **kwargs)


class Conv2D(_Conv):
    r"""2D convolution layer (e.g. spatial convolution over images).

    Parameters
    ----------
    channels : int
        The number of output channels (filters).
    kernel_size : int or tuple/list of 2 int
        The dimensions of the convolution window.
    strides : int or tuple/list of 2 int, default (1, 1)
        The strides of the convolution.
    padding : int or tuple/list of 2 int, default (0, 0)
        Implicit zero-padding on both sides.
    dilation : int or tuple/list of 2 int, default (1, 1)
        The dilation rate for dilated convolution.
    groups : int, default 1
        Number of groups the input and output channels are split into.
    layout : str, default 'NCHW'
        Dimension ordering of data and weight: 'NCHW' or 'NHWC'.
    activation : str, optional
        Activation function applied to the output (see :class:`Activation`).
    use_bias : bool, default True
        Whether the layer uses a bias vector.
    weight_initializer, bias_initializer : str or Initializer
    in_channels : int, default 0
        The number of input channels; if 0 it is inferred on the first forward pass.

    Inputs:
        - **data**: `(batch_size, in_channels, height, width)` for 'NCHW'.

    Outputs:
        - **out**: `(batch_size, channels, out_height, out_width)` for 'NCHW', with
          ``out = floor((in+2*padding-dilation*(kernel_size-1)-1)/stride)+1`` per spatial axis.
    """

    def __init__(self, channels: int, kernel_size: Any, strides: Any = (1, 1), padding: Any = (0, 0),
                 dilation: Any = (1, 1), groups: int = 1, layout: str = "NCHW", activation: str | None = None,
                 use_bias: bool = True, weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 in_channels: int = 0, **kwargs: Any):
        _check(layout, ("NCHW", "NHWC"), "Only supports 'NCHW' and 'NHWC' layout for now")
        op_name = kwargs.pop("op_name", "Convolution")
        super().__init__(channels, _kernel(kernel_size, 2), strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer, op_name,
                         **kwargs)


class Conv3D(_Conv):
    r"""3D convolution layer (e.g. spatial convolution over volumes).

    Parameters are those of :class:`Conv2D` with 3-element tuples; `layout`
    is 'NCDHW' (default) or 'NDHWC'.

    Inputs:
        - **data**: `(batch_size, in_channels, depth, height, width)` for 'NCDHW'.

    Outputs:
        - **out**: `(batch_size, channels, out_depth, out_height, out_width)` for 'NCDHW'.
    """

    def __init__(self, channels: int, kernel_size: Any, strides: Any = (1, 1, 1), padding: Any = (0, 0, 0),
                 dilation: Any = (1, 1, 1), groups: int = 1, layout: str = "NCDHW",
                 activation: str | None = None, use_bias: bool = True, weight_initializer: Any = None,
                 bias_initializer: Any = "zeros", in_channels: int = 0, **kwargs: Any):
        _check(layout, ("NCDHW", "NDHWC"), "Only supports 'NCDHW' and 'NDHWC' layout for now")
        op_name = kwargs.pop("op_name", "Convolution")
        super().__init__(channels, _kernel(kernel_size, 3), strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer, op_name,
                         **kwargs)


class _ConvTranspose(_Conv):
    """Shared constructor of the transposed convolutions (`Deconvolution` with `adj`)."""

    _ndim = 0
    _layouts: tuple = ()
    _layout_msg = ""

    def __init__(self, channels: int, kernel_size: Any, strides: Any, padding: Any, output_padding: Any,
                 dilation: Any, groups: int, layout: str, activation: str | None, use_bias: bool,
                 weight_initializer: Any, bias_initializer: Any, in_channels: int, **kwargs: Any):
        _check(layout, self._layouts, self._layout_msg)
        n = self._ndim
        kernel_size = _kernel(kernel_size, n)
        output_padding = _kernel(output_padding, n, "output_padding")
        op_name = kwargs.pop("op_name", "Deconvolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout, in_channels,
                         activation, use_bias, weight_initializer, bias_initializer, op_name=op_name,
                         adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv1DTranspose(_ConvTranspose):
    r"""Transposed 1D convolution layer (sometimes called Deconvolution).

    Parameters are those of :class:`Conv1D`, plus `output_padding` (int or
    tuple of 1 int, default 0): extra size added to one side of the output.

    Inputs:
        - **data**: `(batch_size, in_channels, width)`.

    Outputs:
        - **out**: `(batch_size, channels, out_width)` with
          ``out_width = (width-1)*strides-2*padding+kernel_size+output_padding``.
    """

    _ndim, _layouts, _layout_msg = 1, ("NCW",), "Only supports 'NCW' layout for now"

    def __init__(self, channels: int, kernel_size: Any, strides: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, dilation: Any = 1, groups: int = 1, layout: str = "NCW",
                 activation: str | None = None, use_bias: bool = True, weight_initializer: Any = None,
                 bias_initializer: Any = "zeros", in_channels: int = 0, **kwargs: Any):
        super().__init__(channels, kernel_size, strides, padding, output_padding, dilation, groups, layout,
                         activation, use_bias, weight_initializer, bias_initializer, in_channels, **kwargs)


class Conv2DTranspose(_ConvTranspose):
    r"""Transposed 2D convolution layer (sometimes called Deconvolution).

    Parameters are those of :class:`Conv2D`, plus `output_padding` (int or
    tuple of 2 int, default (0, 0)).

    Inputs:
        - **data**: `(batch_size, in_channels, height, width)` for 'NCHW'.

    Outputs:
        - **out**: `(batch_size, channels, out_height, out_width)` with
          ``out = (in-1)*strides-2*padding+kernel_size+output_padding`` per spatial axis.
    """

    _ndim, _layouts, _layout_msg = 2, ("NCHW", "NHWC"), "Only supports 'NCHW' and 'NHWC' layout for now"

    def __init__(self, channels: int, kernel_size: Any, strides: Any = (1, 1), padding: Any = (0, 0),
                 output_padding: Any = (0, 0), dilation: Any = (1, 1), groups: int = 1, layout: str = "NCHW",
                 activation: str | None = None, use_bias: bool = True, weight_initializer: Any = None,
                 bias_initializer: Any = "zeros", in_channels: int = 0, **kwargs: Any):
        super().__init__(channels, kernel_size, strides, padding, output_padding, dilation, groups, layout,
                         activation, use_bias, weight_initializer, bias_initializer, in_channels, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    r"""Transposed 3D convolution layer (sometimes called Deconvolution).

    Parameters are those of :class:`Conv3D`, plus `output_padding` (int or
    tuple of 3 int, default (0, 0, 0)).

    Inputs:
        - **data**: `(batch_size, in_channels, depth, height, width)` for 'NCDHW'.

    Outputs:
        - **out**: `(batch_size, channels, out_depth, out_height, out_width)` for 'NCDHW'.
    """

    _ndim, _layouts, _layout_msg = 3, ("NCDHW", "NDHWC"), "Only supports 'NCDHW' and 'NDHWC' layout for now"

    def __init__(self, channels: int, kernel_size: Any, strides: Any = (1, 1, 1), padding: Any = (0, 0, 0),
                 output_padding: Any = (0, 0, 0), dilation: Any = (1, 1, 1), groups: int = 1,
                 layout: str = "NCDHW", activation: str | None = None, use_bias: bool = True,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros", in_channels: int = 0,
                 **kwargs: Any):
        super().__init__(channels, kernel_size, strides, padding, output_padding, dilation, groups, layout,
                         activation, use_bias, weight_initializer, bias_initializer, in_channels, **kwargs)


class _Pooling(HybridBlock):
    """Abstract pooling layer: one `Pooling` call with MXNet's attributes."""

    def __init__(self, pool_size: tuple, strides: Any, padding: Any, ceil_mode: bool, global_pool: bool,
                 pool_type: str, layout: str, count_include_pad: bool | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        n = len(pool_size)
        self._kwargs = {"kernel": pool_size, "stride": _tuple(strides, n), "pad": _tuple(padding, n),
                        "global_pool": global_pool, "pool_type": pool_type, "layout": layout,
                        "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name="fwd", **self._kwargs)

    def _alias(self) -> str:
        return "pool"

    def __repr__(self) -> str:
        kw = self._kwargs
        return (f"{self.__class__.__name__}(size={kw['kernel']}, stride={kw['stride']}, padding={kw['pad']}, "
                f"ceil_mode={kw['pooling_convention'] == 'full'}, global_pool={kw['global_pool']}, "
                f"pool_type={kw['pool_type']}, layout={kw['layout']})")


_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _pool_args(layout: str, pool_size: Any, n: int) -> tuple:
    assert layout in _LAYOUTS[n], f"Only {' and '.join(_LAYOUTS[n])} layouts are valid for {n}D Pooling"
    return _kernel(pool_size, n, "pool_size")


class MaxPool1D(_Pooling):
    """Max pooling operation for one dimensional data.

    Parameters
    ----------
    pool_size : int, default 2
        Size of the max pooling windows.
    strides : int or None
        Factor by which to downscale; `None` means `pool_size`.
    padding : int, default 0
        Implicit zero-padding on both sides.
    layout : str, default 'NCW'
        Dimension ordering of data and out ('NCW' or 'NWC').
    ceil_mode : bool, default False
        When True, use ceil instead of floor to compute the output shape.

    Inputs:
        - **data**: `(batch_size, channels, width)` for 'NCW'.

    Outputs:
        - **out**: `(batch_size, channels, out_width)` with
          ``out_width = floor((width+2*padding-pool_size)/strides)+1``.
    """

    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: Any = 0, layout: str = "NCW",
                 ceil_mode: bool = False, **kwargs: Any):
        super().__init__(_pool_args(layout, pool_size, 1), strides, padding, ceil_mode, False, "max", layout,
                         **kwargs)


class MaxPool2D(_Pooling):
    """Max pooling operation for two dimensional (spatial) data.

    Parameters are those of :class:`MaxPool1D` with 2-element tuples
    (default `pool_size=(2, 2)`, `layout='NCHW'`).
    """

    def __init__(self, pool_size: Any = (2, 2), strides: Any = None, padding: Any = 0, layout: str = "NCHW",
                 ceil_mode: bool = False, **kwargs: Any):
        super().__init__(_pool_args(layout, pool_size, 2), strides, padding, ceil_mode, False, "max", layout,
                         **kwargs)


class MaxPool3D(_Pooling):
    """Max pooling operation for 3D data (spatial or spatio-temporal).

    Parameters are those of :class:`MaxPool1D` with 3-element tuples
    (default `pool_size=(2, 2, 2)`, `layout='NCDHW'`); note that `ceil_mode`
    comes before `layout` here, as in MXNet.
    """

    def __init__(self, pool_size: Any = (2, 2, 2), strides: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, layout: str = "NCDHW", **kwargs: Any):
        super().__init__(_pool_args(layout, pool_size, 3), strides, padding, ceil_mode, False, "max", layout,
                         **kwargs)


class AvgPool1D(_Pooling):
    """Average pooling operation for temporal data.

    Parameters
    ----------
    pool_size : int, default 2
        Size of the average pooling windows.
    strides : int or None
        Factor by which to downscale; `None` means `pool_size`.
    padding : int, default 0
        Implicit zero-padding on both sides.
    layout : str, default 'NCW'
        Dimension ordering of data and out ('NCW' or 'NWC').
    ceil_mode : bool, default False
        When True, use ceil instead of floor to compute the output shape.
    count_include_pad : bool, default True
        When False, padding elements are excluded from the average.
    """

    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: Any = 0, layout: str = "NCW",
                 ceil_mode: bool = False, count_include_pad: bool = True, **kwargs: Any):
        super().__init__(_pool_args(layout, pool_size, 1), strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class AvgPool2D(_Pooling):
    """Average pooling operation for spatial data.

    Parameters are those of :class:`AvgPool1D` with 2-element tuples
    (default `pool_size=(2, 2)`, `layout='NCHW'`; `ceil_mode` comes before `layout`).
    """

    def __init__(self, pool_size: Any = (2, 2), strides: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 layout: str = "NCHW", count_include_pad: bool = True, **kwargs: Any):
        super().__init__(_pool_args(layout, pool_size, 2), strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class AvgPool3D(_Pooling):
    """Average pooling operation for 3D data (spatial or spatio-temporal).

    Parameters are those of :class:`AvgPool1D` with 3-element tuples
    (default `pool_size=(2, 2, 2)`, `layout='NCDHW'`; `ceil_mode` comes before `layout`).
    """

    def __init__(self, pool_size: Any = (2, 2, 2), strides: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, layout: str = "NCDHW", count_include_pad: bool = True, **kwargs: Any):
        super().__init__(_pool_args(layout, pool_size, 3), strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class _GlobalPooling(_Pooling):
    """Global pooling over all spatial axes (output spatial size 1)."""

    _ndim = 0
    _pool_type = ""

    def __init__(self, layout: str, **kwargs: Any):
        n = self._ndim
        _pool_args(layout, (1,) * n, n)
        super().__init__((1,) * n, None, 0, True, True, self._pool_type, layout, **kwargs)


def _global_pooling(name: str, ndim: int, pool_type: str, summary: str) -> type:
    """The public class `name`: global `pool_type` pooling over `ndim` spatial axes, constructed
    as ``name(layout=<channels-first layout>, **kwargs)`` (MXNet's signature)."""
    default_layout, other_layout = _LAYOUTS[ndim]

    def init(self, layout: str = default_layout, **kwargs: Any):
        _GlobalPooling.__init__(self, layout, **kwargs)

    init.__name__, init.__qualname__ = "__init__", f"{name}.__init__"
    doc = f"{summary}; `layout` '{default_layout}' or '{other_layout}'."
    return type(name, (_GlobalPooling,), {"__doc__": doc, "__init__": init, "__module__": __name__,
                                          "_ndim": ndim, "_pool_type": pool_type})


GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D, GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = (
    _global_pooling(*row) for row in (
        ("GlobalMaxPool1D", 1, "max", "Global max pooling operation for one dimensional (temporal) data"),
        ("GlobalMaxPool2D", 2, "max", "Global max pooling operation for two dimensional (spatial) data"),
        ("GlobalMaxPool3D", 3, "max", "Global max pooling operation for 3D data"),
        ("GlobalAvgPool1D", 1, "avg", "Global average pooling operation for temporal data"),
        ("GlobalAvgPool2D", 2, "avg", "Global average pooling operation for spatial data"),
        ("GlobalAvgPool3D", 3, "avg", "Global average pooling operation for 3D data")))


class ReflectionPad2D(HybridBlock):
    r"""Pads the input tensor using the reflection of the input boundary.

    Parameters
    ----------
    padding : int or tuple of 8 ints, default 0
        An integer padding size for H and W on both sides, or MXNet's full
        `pad_width` tuple.

    Inputs:
        - **data**: `(N, C, H_in, W_in)`.

    Outputs:
        - **out**: `(N, C, H_in + 2 * padding, W_in + 2 * padding)`.
    """

    def __init__(self, padding: Any = 0, **kwargs: Any):
        super().__init__(**kwargs)
        if isinstance(padding, numbers.Number):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        assert len(padding) == 8
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._padding)


def conv_repr(block: Any, kw: dict, weight: Any, bias: Any, out_pad: Any = None) -> str:
    """MXNet's printed form of a convolution layer (also the deformable ones): kernel, stride,
    the non-default padding / dilation / groups, a missing bias, the activation, in -> out."""
    n = len(kw["kernel"])
    s = f"{block.__class__.__name__}({{mapping}}, kernel_size={kw['kernel']}, stride={kw['stride']}"
    if kw["pad"] != (0,) * n:
        s += f", padding={kw['pad']}"
    if kw["dilate"] != (1,) * n:
        s += f", dilation={kw['dilate']}"
    # MXNet tests for `out_pad` but stores `outpad`, so output_padding is never shown; kept as is.
    if out_pad is not None and out_pad != (0,) * n:
        s += f", output_padding={out_pad}"
    if kw["num_group"] != 1:
        s += f", groups={kw['num_group']}"
    if bias is None:
        s += ", bias=False"
    if block.act:
        s += f", {block.act}"
    s += ")"
    shape = weight.shape
    return s.format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}")
