"""Recurrent cells (`mx.gluon.rnn.RNNCell`, `LSTMCell`, ...): one time step per call,
`unroll` for a whole sequence, and modifiers (dropout, zoneout, residual,
bidirectional). The ops each step emits, and their names (`t0_i2h`, `t0_plus0`,
...), are MXNet 1.9.1's.

This module holds the basic cells (RNNCell, LSTMCell, GRUCell) and re-exports
the base classes (cell_base.py) and the stacks and modifiers
(modifier_cells.py), so every cell can be imported from here.
"""
from __future__ import annotations

from typing import Any

from .cell_base import HybridRecurrentCell, RecurrentCell
from .modifier_cells import (BidirectionalCell, DropoutCell, HybridSequentialRNNCell, ModifierCell, ResidualCell,
                             SequentialRNNCell, ZoneoutCell)

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


def _mapping(cell: Any) -> str:
    shape = cell.i2h_weight.shape
    return f"{shape[1] if shape[1] else None} -> {shape[0]}"


class _GatedCell(HybridRecurrentCell):
    """The i2h/h2h weights and biases every basic cell has (`gates` x `hidden_size` rows), and
    its `_num_states` states of `(batch_size, hidden_size)`."""

    _num_states = 1

    def __init__(self, hidden_size: int, gates: int, i2h_weight_initializer: Any,
                 h2h_weight_initializer: Any, i2h_bias_initializer: Any, h2h_bias_initializer: Any,
                 input_size: int, prefix: str | None, params: Any):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = gates * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(rows, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(rows, hidden_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def _i2h_h2h(self, F: Any, inputs: Any, state: Any, i2h_weight: Any, h2h_weight: Any,  # noqa: N803
                 i2h_bias: Any, h2h_bias: Any, rows: int) -> tuple:
        prefix = f"t{self._counter}_"
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=rows,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(data=state, weight=h2h_weight, bias=h2h_bias, num_hidden=rows,
                               name=prefix + "h2h")
        return i2h, h2h

    def state_info(self, batch_size: int = 0) -> list:
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"} for _ in range(self._num_states)]

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({_mapping(self)})"


class RNNCell(_GatedCell):
    r"""Elman RNN recurrent neural network cell:
    :math:`h_t = \tanh(w_{ih} * x_t + b_{ih}  +  w_{hh} * h_{(t-1)} + b_{hh})`.

    Parameters
    ----------
    hidden_size : int
        Number of units in output symbol
    activation : str or Symbol, default 'tanh'
        Type of activation function.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
        Initializers for the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers for the bias vectors.
    input_size : int, default 0
        Input feature size (inferred from the first input when 0).
    prefix : str, default ``'rnn_'``
        Prefix for name of `Block`s (and name of weight if params is `None`).
    params : Parameter or None
        Container for weight sharing between cells. Created if `None`.

    Inputs:
        - **data**: input tensor with shape `(batch_size, input_size)`.
        - **states**: a list of one state tensor with shape `(batch_size, num_hidden)`.

    Outputs:
        - **out**: output tensor with shape `(batch_size, num_hidden)`.
        - **next_states**: a list of one output state, shaped like `states`.
    """

    def __init__(self, hidden_size: int, activation: Any = "tanh", i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0, prefix: str | None = None,
                 params: Any = None):
        super().__init__(hidden_size, 1, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def _alias(self) -> str:
        return "rnn"

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({_mapping(self)}, {self._activation})"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,  # noqa: N803
                       i2h_bias: Any, h2h_bias: Any) -> tuple:
        prefix = f"t{self._counter}_"
        i2h, h2h = self._i2h_h2h(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                                 self._hidden_size)
        i2h_plus_h2h = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        output = self._get_activation(F, i2h_plus_h2h, self._activation, name=prefix + "out")
        return output, [output]


class LSTMCell(_GatedCell):
    r"""Long-Short Term Memory (LSTM) network cell (gates i, f, g, o):
    :math:`c_t = f_t * c_{(t-1)} + i_t * g_t`, :math:`h_t = o_t * \tanh(c_t)`.

    Parameters
    ----------
    hidden_size : int
        Number of units in output symbol.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
        Initializers for the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers for the bias vectors.
    input_size : int, default 0
        Input feature size (inferred from the first input when 0).
    prefix : str, default ``'lstm_'``
        Prefix for name of `Block`s (and name of weight if params is `None`).
    params : Parameter or None, default None
        Container for weight sharing between cells. Created if `None`.
    activation : str, default 'tanh'
        Activation type to use.
    recurrent_activation : str, default 'sigmoid'
        Activation type to use for the recurrent step.

    Inputs:
        - **data**: input tensor with shape `(batch_size, input_size)`.
        - **states**: a list of two state tensors (h, c), each `(batch_size, num_hidden)`.

    Outputs:
        - **out**: output tensor with shape `(batch_size, num_hidden)`.
        - **next_states**: a list of two output states, shaped like `states`.
    """

    _num_states = 2  # h and c

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0, prefix: str | None = None,
                 params: Any = None, activation: str = "tanh", recurrent_activation: str = "sigmoid"):
        super().__init__(hidden_size, 4, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def _alias(self) -> str:
        return "lstm"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,  # noqa: N803
                       i2h_bias: Any, h2h_bias: Any) -> tuple:
        prefix = f"t{self._counter}_"
        i2h, h2h = self._i2h_h2h(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                                 self._hidden_size * 4)
        gates = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        slice_gates = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice")
        rec, act = self._recurrent_activation, self._activation
        in_gate = self._get_activation(F, slice_gates[0], rec, name=prefix + "i")
        forget_gate = self._get_activation(F, slice_gates[1], rec, name=prefix + "f")
        in_transform = self._get_activation(F, slice_gates[2], act, name=prefix + "c")
        out_gate = self._get_activation(F, slice_gates[3], rec, name=prefix + "o")
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + "mul0"),
                                F.elemwise_mul(in_gate, in_transform, name=prefix + "mul1"),
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=act, name=prefix + "activation0"),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    r"""Gated Rectified Unit (GRU) network cell, cuDNN's variant (the reset gate is applied
    after the recurrent matrix product):
    :math:`n_t = \tanh(W_{in} x_t + b_{in} + r_t * (W_{hn} h_{(t-1)} + b_{hn}))`,
    :math:`h_t = (1 - i_t) * n_t + i_t * h_{(t-1)}`.

    Parameters
    ----------
    hidden_size : int
        Number of units in output symbol.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
        Initializers for the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers for the bias vectors.
    input_size : int, default 0
        Input feature size (inferred from the first input when 0).
    prefix : str, default ``'gru_'``
        prefix for name of `Block`s (and name of weight if params is `None`).
    params : Parameter or None, default None
        Container for weight sharing between cells. Created if `None`.

    Inputs:
        - **data**: input tensor with shape `(batch_size, input_size)`.
        - **states**: a list of one state tensor with shape `(batch_size, num_hidden)`.

    Outputs:
        - **out**: output tensor with shape `(batch_size, num_hidden)`.
        - **next_states**: a list of one output state, shaped like `states`.
    """

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0, prefix: str | None = None,
                 params: Any = None):
        super().__init__(hidden_size, 3, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self) -> str:
        return "gru"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,  # noqa: N803
                       i2h_bias: Any, h2h_bias: Any) -> tuple:
        prefix = f"t{self._counter}_"
        prev_state_h = states[0]
        i2h, h2h = self._i2h_h2h(F, inputs, prev_state_h, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                                 self._hidden_size * 3)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice")
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r, name=prefix + "plus0"),
                                  act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z, name=prefix + "plus1"),
                                   act_type="sigmoid", name=prefix + "z_act")
        next_h_tmp = F.Activation(F.elemwise_add(i2h, F.elemwise_mul(reset_gate, h2h, name=prefix + "mul0"),
                                                 name=prefix + "plus2"),
                                  act_type="tanh", name=prefix + "h_act")
        ones = F.ones_like(update_gate, name=prefix + "ones_like0")
        next_h = F.elemwise_add(F.elemwise_mul(F.elemwise_sub(ones, update_gate, name=prefix + "minus0"),
                                               next_h_tmp, name=prefix + "mul1"),
                                F.elemwise_mul(update_gate, prev_state_h, name=prefix + "mul20"),
                                name=prefix + "out")
        return next_h, [next_h]
