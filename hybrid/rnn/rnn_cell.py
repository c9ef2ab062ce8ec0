"""Recurrent cells (`mx.gluon.rnn.RNNCell`, `LSTMCell`, ...): one time step per call,
`unroll` for a whole sequence, and modifiers (dropout, zoneout, residual,
bidirectional). The ops each step emits, and their names (`t0_i2h`, `t0_plus0`,
...), are MXNet 1.9.1's.
"""
from __future__ import annotations

import numbers
from typing import Any

import nd
import symbol
from symbol import Symbol
from symbol.tracer import Tracer

from ..block import Block, _indent
from ..hybrid_block import HybridBlock

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]

_TENSOR_TYPES = (Symbol, nd.NDArray)


def _as_list(obj: Any) -> list:
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _split(F: Any, x: Any, **kwargs: Any) -> list:  # noqa: N803
    """F.split as a list of arrays (a multi-output Symbol, a list, or one NDArray)."""
    res = F.split(x, **kwargs)
    return list(res) if isinstance(res, Symbol) else _as_list(res)


def _cells_state_info(cells, batch_size: int) -> list:
    return sum([c.state_info(batch_size) for c in cells], [])


def _cells_begin_state(cells, **kwargs: Any) -> list:
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _get_begin_state(cell: "RecurrentCell", F: Any, begin_state: Any, inputs: Any,  # noqa: N803
                     batch_size: int) -> list:
    if begin_state is not None:
        return begin_state
    if F is nd:
        ctx = inputs.context if isinstance(inputs, _TENSOR_TYPES) else inputs[0].context
        with ctx:
            return cell.begin_state(func=F.zeros, batch_size=batch_size)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)


def _batch_size(x: Any, axis: int) -> int:
    """The batch size of an array; of a traced value too (the trace then depends on it), since
    shape inference cannot take a zero-state's batch size back through FullyConnected; 0 (unknown)
    for a plain Symbol, as in MXNet."""
    if isinstance(x, (nd.NDArray, Tracer)):
        return x.shape[axis]
    return 0


def _format_sequence(length: int | None, inputs: Any, layout: str, merge: bool | None,
                     in_layout: str | None = None) -> tuple:
    """Inputs as one (merge) or a list of per-step arrays; returns (inputs, axis, F, batch)."""
    if inputs is None:
        raise ValueError("unroll(inputs=None) has been deprecated. Please create input variables "
                         "outside unroll.")
    axis = layout.find("T")
    batch_axis = layout.find("N")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, Symbol):
        F = symbol  # noqa: N806
        batch_size = _batch_size(inputs, batch_axis)
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError("unroll doesn't allow grouped symbol as input. Please convert to "
                                 "list with list(inputs) first or let unroll handle splitting.")
            inputs = _split(symbol, inputs, axis=in_axis, num_outputs=length, squeeze_axis=1)
    elif isinstance(inputs, nd.NDArray):
        F = nd  # noqa: N806
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            if length is not None and length != inputs.shape[in_axis]:
                raise ValueError(f"unroll: length {length} does not match the input's time axis "
                                 f"({inputs.shape[in_axis]})")
            inputs = _split(nd, inputs, axis=in_axis, num_outputs=inputs.shape[in_axis], squeeze_axis=1)
    else:
        if length is not None and len(inputs) != length:
            raise ValueError(f"unroll: length {length} does not match the {len(inputs)} inputs")
        F = symbol if isinstance(inputs[0], Symbol) else nd  # noqa: N806
        batch_size = _batch_size(inputs[0], 0)
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, _TENSOR_TYPES) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _mask_sequence_variable_length(F: Any, data: Any, length: int, valid_length: Any,  # noqa: N803
                                   time_axis: int, merge: bool) -> Any:
    if not isinstance(data, _TENSOR_TYPES):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                             axis=time_axis)
    if not merge:
        outputs = _split(F, outputs, num_outputs=length, axis=time_axis, squeeze_axis=True)
    return outputs


def _reverse_sequences(sequences: list, unroll_step: int, valid_length: Any = None) -> list:
    F = symbol if isinstance(sequences[0], Symbol) else nd  # noqa: N806
    if valid_length is None:
        return list(reversed(sequences))
    rev = F.SequenceReverse(F.stack(*sequences, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    if unroll_step > 1 or F is symbol:
        return _split(F, rev, axis=0, num_outputs=unroll_step, squeeze_axis=True)
    return [rev[0]]


class RecurrentCell(Block):
    """Abstract base class for RNN cells.

    Parameters
    ----------
    prefix : str, optional
        Prefix for names of `Block`s (and of weights when `params` is None).
    params : Parameter or None, default None
        Container for weight sharing between cells; a new one when None.
    """

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Reset before re-using the cell for another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size: int = 0) -> list:
        """shape and layout information of states"""
        raise NotImplementedError()

    def begin_state(self, batch_size: int = 0, func: Any = nd.zeros, **kwargs: Any) -> list:
        """Initial state for this cell.

        Parameters
        ----------
        func : callable, default `ndarray.zeros`
            Function for creating initial state (`symbol.zeros`, `symbol.var`,
            `ndarray.zeros`, `ndarray.ones`, ...).
        batch_size: int, default 0
            Only required for NDArray API. Size of the batch ('N' in layout).
        **kwargs :
            Additional keyword arguments passed to func (`dtype`, ...).

        Returns
        -------
        states : nested list of Symbol or NDArray
            Starting states for the first RNN step.
        """
        if self._modified:
            raise RuntimeError("After applying modifier cells (e.g. ZoneoutCell) the base cell "
                               "cannot be called directly. Call the modifier cell instead.")
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **info))
        return states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple:
        """Unrolls an RNN cell across time steps.

        Parameters
        ----------
        length : int
            Number of steps to unroll.
        inputs : Symbol, NDArray or list of them
            One array shaped (batch_size, length, ...) for layout 'NTC' (or
            (length, batch_size, ...) for 'TNC'), or a list of per-step arrays.
        begin_state : nested list, optional
            Input states (`begin_state()` when None).
        layout : str, optional
            `layout` of input symbol. Only used if inputs is a single array.
        merge_outputs : bool, optional
            True: one array with the time axis; False: a list of arrays; None:
            whatever is faster.
        valid_length : Symbol, NDArray or None
            Lengths (batch_size,) of the sequences: the last valid state is
            returned and padded outputs are zero.

        Returns
        -------
        outputs : list of arrays or one array
        states : list
            The new state of this RNN after this unrolling.
        """
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)  # noqa: N806
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        states = begin_state
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*ele_list, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for ele_list in zip(*all_states)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F: Any, inputs: Any, activation: Any, **kwargs: Any) -> Any:  # noqa: N803
        """Apply an activation given by name, LeakyReLU block or callable."""
        from ..nn import LeakyReLU  # noqa: PLC0415 - nn imports the whole layer zoo
        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid,
                "softsign": F.softsign}.get(activation) if isinstance(activation, str) else None
        if func:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs: Any, states: Any) -> Any:
        """Unrolls the recurrent cell for one time step: returns (output, new states)."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """HybridRecurrentCell supports hybridize."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N803
        raise NotImplementedError


def _mapping(cell: Any) -> str:
    shape = cell.i2h_weight.shape
    return f"{shape[1] if shape[1] else None} -> {shape[0]}"


class _GatedCell(HybridRecurrentCell):
    """The i2h/h2h weights and biases every basic cell has (`gates` x `hidden_size` rows)."""

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

    def state_info(self, batch_size: int = 0) -> list:
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

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

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0, prefix: str | None = None,
                 params: Any = None, activation: str = "tanh", recurrent_activation: str = "sigmoid"):
        super().__init__(hidden_size, 4, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size: int = 0) -> list:
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "lstm"

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({_mapping(self)})"

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

    def state_info(self, batch_size: int = 0) -> list:
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "gru"

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({_mapping(self)})"

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


class _StackMixin:
    """What SequentialRNNCell and HybridSequentialRNNCell share: a stack of cells."""

    def __repr__(self) -> str:
        mods = "\n".join(f"({i}): {_indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{self.__class__.__name__}(\n{mods}\n)"

    def add(self, cell: RecurrentCell) -> None:
        """Appends a cell into the stack."""
        self.register_child(cell)

    def state_info(self, batch_size: int = 0) -> list:
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs: Any) -> list:
        if self._modified:
            raise RuntimeError("After applying modifier cells (e.g. ZoneoutCell) the base cell "
                               "cannot be called directly. Call the modifier cell instead.")
        return _cells_begin_state(self._children.values(), **kwargs)

    def __call__(self, inputs: Any, states: Any) -> tuple:
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise ValueError("a BidirectionalCell in a sequential stack cannot be stepped; use unroll")
            n = len(cell.state_info())
            state = states[p:p + n]
            p += n
            inputs, state = cell(inputs, state)
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple:
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)  # noqa: N806
        num_cells = len(self._children)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        p = 0
        next_states = []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states, layout=layout,
                                         merge_outputs=None if i < num_cells - 1 else merge_outputs,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i: int) -> RecurrentCell:
        return self._children[str(i)]

    def __len__(self) -> int:
        return len(self._children)


class SequentialRNNCell(_StackMixin, RecurrentCell):
    """Sequentially stacking multiple RNN cells."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class HybridSequentialRNNCell(_StackMixin, HybridRecurrentCell):
    """Sequentially stacking multiple HybridRNN cells."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> tuple:  # noqa: N803
        return self.__call__(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Applies dropout on input.

    Parameters
    ----------
    rate : float
        Percentage of elements to drop out, which is 1 - percentage to retain.
    axes : tuple of int, default ()
        The axes on which dropout mask is shared. If empty, regular dropout is applied.

    Inputs:
        - **data**: input tensor with shape `(batch_size, size)`.
        - **states**: a list of recurrent state tensors.

    Outputs:
        - **out**: output tensor with shape `(batch_size, size)`.
        - **next_states**: returns input `states` directly.
    """

    def __init__(self, rate: float, axes: tuple = (), prefix: str | None = None, params: Any = None):
        if not isinstance(rate, numbers.Number):
            raise TypeError(f"rate must be a number, got {type(rate).__name__}")
        super().__init__(prefix, params)
        self._rate = rate
        self._axes = axes

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size: int = 0) -> list:
        return []

    def _alias(self) -> str:
        return "dropout"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> tuple:  # noqa: N803
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes, name=f"t{self._counter}_fwd")
        return inputs, states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple:
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)  # noqa: N806
        if isinstance(inputs, _TENSOR_TYPES):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """Base class for modifier cells. A modifier cell takes a base cell, applies
    modifications on it (e.g. Zoneout), and returns a new cell. After applying
    modifiers the base cell should no longer be called directly; the modifier
    cell should be used instead.
    """

    def __init__(self, base_cell: RecurrentCell):
        if base_cell._modified:
            raise ValueError(f"Cell {base_cell.name} is already modified. One cell cannot be "
                             "modified twice")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self) -> Any:
        return self.base_cell.params

    def state_info(self, batch_size: int = 0) -> list:
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func: Any = symbol.zeros, **kwargs: Any) -> list:
        if self._modified:
            raise RuntimeError("After applying modifier cells (e.g. DropoutCell) the base cell "
                               "cannot be called directly. Call the modifier cell instead.")
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(func=func, **kwargs)
        self.base_cell._modified = True
        return begin

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> tuple:  # noqa: N803
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_cell})"


class ZoneoutCell(ModifierCell):
    """Applies Zoneout on base cell: each output/state unit keeps its previous value with
    probability `zoneout_outputs` / `zoneout_states` in training."""

    def __init__(self, base_cell: RecurrentCell, zoneout_outputs: float = 0., zoneout_states: float = 0.):
        if isinstance(base_cell, BidirectionalCell):
            raise ValueError("BidirectionalCell doesn't support zoneout since it doesn't support step. "
                             "Please add ZoneoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(p_out={self.zoneout_outputs}, "
                f"p_state={self.zoneout_states}, {self.base_cell})")

    def _alias(self) -> str:
        return "zoneout"

    def reset(self) -> None:
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> tuple:  # noqa: N803
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p: float, like: Any) -> Any:
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = (F.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0. else next_output)
        states = ([F.where(mask(p_states, new_s), new_s, old_s)
                   for new_s, old_s in zip(next_states, states)] if p_states != 0. else next_states)
        self._prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds residual connection as described in Wu et al, 2016
    (https://arxiv.org/abs/1609.08144): the output is the base cell's output plus its input.
    """

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> tuple:  # noqa: N803
        output, states = self.base_cell(inputs, states)
        output = F.elemwise_add(output, inputs, name=f"t{self._counter}_fwd")
        return output, states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple:
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state,
                                                layout=layout, merge_outputs=merge_outputs,
                                                valid_length=valid_length)
        self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, _TENSOR_TYPES)
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge_outputs)  # noqa: N806
        if valid_length is not None:  # mask the padded inputs to zero
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            outputs = F.elemwise_add(outputs, inputs)
        else:
            outputs = [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(HybridRecurrentCell):
    """Bidirectional RNN cell.

    Parameters
    ----------
    l_cell : RecurrentCell
        Cell for forward unrolling
    r_cell : RecurrentCell
        Cell for backward unrolling
    """

    def __init__(self, l_cell: RecurrentCell, r_cell: RecurrentCell, output_prefix: str = "bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs: Any, states: Any) -> Any:
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(forward={self._children['l_cell']}, "
                f"backward={self._children['r_cell']})")

    def state_info(self, batch_size: int = 0) -> list:
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs: Any) -> list:
        if self._modified:
            raise RuntimeError("After applying modifier cells (e.g. DropoutCell) the base cell "
                               "cannot be called directly. Call the modifier cell instead.")
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple:
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)  # noqa: N806
        reversed_inputs = list(_reverse_sequences(inputs, length, valid_length))
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        states = begin_state
        l_cell, r_cell = self._children.values()
        n_l = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs, begin_state=states[n_l:],
                                            layout=layout, merge_outputs=False,
                                            valid_length=valid_length)
        reversed_r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, _TENSOR_TYPES)
            l_outputs, _, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _, _ = _format_sequence(None, reversed_r_outputs, layout, merge_outputs)
        if merge_outputs:
            reversed_r_outputs = F.stack(*reversed_r_outputs, axis=axis)
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2, name=f"{self._output_prefix}out")
        else:
            outputs = [F.concat(l_o, r_o, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed_r_outputs))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states
