"""Convolutional Gluon RNN cells (`gluon.contrib.rnn.Conv{1,2,3}D{RNN,LSTM,GRU}Cell`): the i2h and
h2h transforms are convolutions over the spatial dims (Shi et al. 2015). Parameter names, node
names (`t<i>_out`, ...) and shapes follow MXNet 1.9.1; a 0 in `input_shape`'s channels is filled
in from the first input (deferred initialisation)."""
from __future__ import annotations

import math
from typing import Any

from ...rnn import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell", "Conv2DLSTMCell",
           "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]


def _tuple(spec: Any, dims: int, what: str) -> tuple:
    if isinstance(spec, int):
        return (spec,) * dims
    spec = tuple(spec)
    if len(spec) != dims:
        raise AssertionError(f"For {dims}D convolution, the convolution settings can only be either int or "
                             f"list/tuple of length {dims} ({what}={spec})")
    return spec


def _conv_out(sizes: tuple, kernels: tuple, pads: tuple, dilates: tuple) -> tuple:
    return tuple(int(math.floor(x + 2 * p - d * (k - 1) - 1) + 1) if x else 0
                 for x, k, p, d in zip(sizes, kernels, pads, dilates))


class _ConvCell(HybridRecurrentCell):
    """Shared by the convolutional cells: parameter shapes, state shape and the two convolutions."""

    _gates: tuple = ("",)
    _kind = "conv_rnn"

    def __init__(self, input_shape: tuple, hidden_channels: int, i2h_kernel: Any, h2h_kernel: Any, i2h_pad: Any,
                 i2h_dilate: Any, h2h_dilate: Any, i2h_weight_initializer: Any, h2h_weight_initializer: Any,
                 i2h_bias_initializer: Any, h2h_bias_initializer: Any, dims: int, conv_layout: str,
                 activation: Any, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels, self._input_shape = hidden_channels, tuple(input_shape)
        self._conv_layout, self._activation = conv_layout, activation
        self._i2h_kernel = _tuple(i2h_kernel, dims, "i2h_kernel")
        self._i2h_pad = _tuple(i2h_pad, dims, "i2h_pad")
        self._i2h_dilate = _tuple(i2h_dilate, dims, "i2h_dilate")
        self._h2h_kernel = _tuple(h2h_kernel, dims, "h2h_kernel")
        self._h2h_dilate = _tuple(h2h_dilate, dims, "h2h_dilate")
        self._stride = (1,) * dims
        if any(k % 2 != 1 for k in self._h2h_kernel):
            raise AssertionError(f"Only support odd number, get h2h_kernel= {h2h_kernel}")
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel))
        self._channel_axis = conv_layout.find("C")
        channels_first = self._channel_axis == 1
        in_channels = self._input_shape[self._channel_axis - 1]
        spatial = self._input_shape[1:] if channels_first else self._input_shape[:-1]
        out = _conv_out(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate)
        total = hidden_channels * len(self._gates)
        if channels_first:
            i2h_shape = (total, in_channels) + self._i2h_kernel
            h2h_shape = (total, hidden_channels) + self._h2h_kernel
            self._state_shape = (hidden_channels,) + out
        else:
            i2h_shape = (total,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (total,) + self._h2h_kernel + (hidden_channels,)
            self._state_shape = out + (hidden_channels,)
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape, init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape, init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(total,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(total,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        return (f"{self.__class__.__name__}({in_channels if in_channels else None} -> {shape[0]}, "
                f"{self._activation}, {self._conv_layout})")

    def _alias(self) -> str:
        return self._kind

    def state_info(self, batch_size: int = 0) -> list:
        info = {"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
        return [info, dict(info)] if self._gates == ("_i", "_f", "_c", "_o") else [info]

    def _convs(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix):  # noqa: N803
        n = self._hidden_channels * len(self._gates)
        i2h = F.Convolution(data=inputs, num_filter=n, kernel=self._i2h_kernel, stride=self._stride,
                            pad=self._i2h_pad, dilate=self._i2h_dilate, weight=i2h_weight, bias=i2h_bias,
                            layout=self._conv_layout, name=prefix + "i2h")
        h2h = F.Convolution(data=states[0], num_filter=n, kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                            pad=self._h2h_pad, stride=self._stride, weight=h2h_weight, bias=h2h_bias,
                            layout=self._conv_layout, name=prefix + "h2h")
        return i2h, h2h


class _ConvRNN(_ConvCell):
    _gates = ("",)
    _kind = "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):  # noqa: N803
        prefix = f"t{self._counter}_"
        i2h, h2h = self._convs(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + "out")
        return output, [output]


class _ConvLSTM(_ConvCell):
    _gates = ("_i", "_f", "_c", "_o")
    _kind = "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):  # noqa: N803
        prefix = f"t{self._counter}_"
        i2h, h2h = self._convs(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + "slice", axis=self._channel_axis)
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        in_transform = self._get_activation(F, gates[2], self._activation, name=prefix + "c")
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform, name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation), name=prefix + "out")
        return next_h, [next_h, next_c]


class _ConvGRU(_ConvCell):
    _gates = ("_r", "_z", "_o")
    _kind = "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):  # noqa: N803
        prefix = f"t{self._counter}_"
        i2h, h2h = self._convs(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice", axis=self._channel_axis)
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice", axis=self._channel_axis)
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        next_h_tmp = self._get_activation(F, i2h + reset_gate * h2h, self._activation, name=prefix + "h_act")
        next_h = F.elemwise_add((1.0 - update_gate) * next_h_tmp, update_gate * states[0], name=prefix + "out")
        return next_h, [next_h]


_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _make(base: type, dims: int, name: str) -> type:
    def init(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=(0,) * dims,
             i2h_dilate=(1,) * dims, h2h_dilate=(1,) * dims, i2h_weight_initializer=None,
             h2h_weight_initializer=None, i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
             conv_layout=_LAYOUTS[dims], activation="tanh", prefix=None, params=None):
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate, h2h_dilate,
                      i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                      dims, conv_layout, activation, prefix, params)
    doc = f"{dims}D convolutional {base._kind.split('_')[1].upper()} cell (layout {_LAYOUTS[dims]} by default)."
    return type(name, (base,), {"__init__": init, "__doc__": doc, "__module__": __name__})


Conv1DRNNCell = _make(_ConvRNN, 1, "Conv1DRNNCell")
Conv2DRNNCell = _make(_ConvRNN, 2, "Conv2DRNNCell")
Conv3DRNNCell = _make(_ConvRNN, 3, "Conv3DRNNCell")
Conv1DLSTMCell = _make(_ConvLSTM, 1, "Conv1DLSTMCell")
Conv2DLSTMCell = _make(_ConvLSTM, 2, "Conv2DLSTMCell")
Conv3DLSTMCell = _make(_ConvLSTM, 3, "Conv3DLSTMCell")
Conv1DGRUCell = _make(_ConvGRU, 1, "Conv1DGRUCell")
Conv2DGRUCell = _make(_ConvGRU, 2, "Conv2DGRUCell")
Conv3DGRUCell = _make(_ConvGRU, 3, "Conv3DGRUCell")
