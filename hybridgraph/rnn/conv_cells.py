"""Convolutional symbolic RNN cells (`mx.rnn.ConvRNNCell`, `ConvLSTMCell`, `ConvGRUCell`):
the i2h and h2h transforms are convolutions (Shi et al. 2015, "Convolutional LSTM Network")."""
from __future__ import annotations

import functools
from typing import Any

from hybridgraph import symbol as sym

from .cells import BaseRNNCell

__all__ = ["BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]

_LEAKY = functools.partial(sym.LeakyReLU, act_type="leaky", slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Shared by the convolutional cells: the state shape follows from the i2h convolution of
    `input_shape`; h2h keeps it (odd kernel, 'same' padding)."""

    _default_prefix = ""

    def __init__(self, input_shape: tuple, num_hidden: int, h2h_kernel: tuple = (3, 3),
                 h2h_dilate: tuple = (1, 1), i2h_kernel: tuple = (3, 3), i2h_stride: tuple = (1, 1),
                 i2h_pad: tuple = (1, 1), i2h_dilate: tuple = (1, 1), i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", activation: Any = _LEAKY, prefix: str | None = None,
                 params: Any = None, conv_layout: str = "NCHW"):
        """MXNet's arguments and defaults; `prefix` defaults to the cell's own ("ConvLSTM_", ...)."""
        super().__init__(prefix=self._default_prefix if prefix is None else prefix, params=params)
        if h2h_kernel[0] % 2 != 1 or h2h_kernel[1] % 2 != 1:
            raise AssertionError(f"Only support odd number, get h2h_kernel= {h2h_kernel}")
        self._h2h_kernel, self._h2h_dilate = h2h_kernel, h2h_dilate
        self._h2h_pad = (h2h_dilate[0] * (h2h_kernel[0] - 1) // 2, h2h_dilate[1] * (h2h_kernel[1] - 1) // 2)
        self._i2h_kernel, self._i2h_stride, self._i2h_pad, self._i2h_dilate = i2h_kernel, i2h_stride, i2h_pad, \
            i2h_dilate
        self._num_hidden, self._input_shape = num_hidden, input_shape
        self._conv_layout, self._activation = conv_layout, activation
        probe = sym.Convolution(data=sym.Variable("data"), num_filter=num_hidden, kernel=i2h_kernel,
                                stride=i2h_stride, pad=i2h_pad, dilate=i2h_dilate, layout=conv_layout)
        shape = probe.infer_shape(data=input_shape)[1][0]
        self._state_shape = (0,) + tuple(shape[1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self) -> int:
        return len(self._gate_names)

    @property
    def state_info(self) -> list:
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}] * 2

    def _conv_forward(self, inputs, states, name):
        n = self._num_hidden * self._num_gates
        i2h = sym.Convolution(name=f"{name}i2h", data=inputs, num_filter=n, kernel=self._i2h_kernel,
                              stride=self._i2h_stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
                              weight=self._iW, bias=self._iB, layout=self._conv_layout)
        h2h = sym.Convolution(name=f"{name}h2h", data=states[0], num_filter=n, kernel=self._h2h_kernel,
                              dilate=self._h2h_dilate, pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                              bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is abstract class for convolutional RNN")




class ConvRNNCell(BaseConvRNNCell):
    """Convolutional Elman cell."""

    _default_prefix = "ConvRNN_"

    @property
    def _gate_names(self) -> tuple:
        return ("",)

    @property
    def state_info(self) -> list:
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}]

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM cell (gates i, f, c, o along the channel axis)."""

    _default_prefix = "ConvLSTM_"

    @property
    def _gate_names(self) -> tuple:
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = sym.SliceChannel(i2h + h2h, num_outputs=4, axis=self._conv_layout.find("C"), name=f"{name}slice")
        in_gate = sym.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = sym.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = self._get_activation(gates[2], self._activation, name=f"{name}c")
        out_gate = sym.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = sym._internal._plus(forget_gate * states[1], in_gate * in_transform, name=f"{name}state")
        next_h = sym._internal._mul(out_gate, self._get_activation(next_c, self._activation), name=f"{name}out")
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU cell (gates r, z, o)."""

    _default_prefix = "ConvGRU_"

    @property
    def _gate_names(self) -> tuple:
        return ("_r", "_z", "_o")

    @property
    def state_info(self) -> list:
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}]

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        i2h_r, i2h_z, i2h = sym.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = sym.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset_gate = sym.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update_gate = sym.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        next_h_tmp = self._get_activation(i2h + reset_gate * h2h, self._activation, name=f"{name}_h_act")
        next_h = sym._internal._plus((1.0 - update_gate) * next_h_tmp, update_gate * states[0], name=f"{name}out")
        return next_h, [next_h]
