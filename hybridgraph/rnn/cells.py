"""MXNet 1.x's legacy symbolic RNN cells (`mx.rnn`): they build Symbol graphs step by step.

A cell holds its weights as Symbol variables (`RNNParams`, shared between cells
by passing `params=`), `__call__(inputs, states)` adds one time step to the
graph and `unroll(length, inputs)` the whole sequence. Node and variable names
follow MXNet 1.9.1 (`<prefix>t<i>_out`, `<prefix>i2h_weight`, ...) so graphs,
checkpoints and BucketingModule code written for MXNet keep working.
`unpack_weights` / `pack_weights` convert between fused and per-gate arrays.
"""
from __future__ import annotations

import warnings
from typing import Any

from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph.gluon import initializer as init
from hybridgraph.gluon.initializer_extra import fused_rnn_layout, fused_rnn_num_input

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell", "SequentialRNNCell",
           "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


def normalize_sequence(length: int | None, inputs: Any, layout: str, merge: bool | None,
                       in_layout: str | None = None) -> tuple[Any, int]:
    """Inputs as one merged Symbol (merge=True), a list of per-step Symbols (False) or as given
    (None); returns them with the time axis of `layout`."""
    if inputs is None:
        raise AssertionError("unroll(inputs=None) has been deprecated. Please create input variables outside "
                             "unroll.")
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, sym.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise AssertionError("unroll doesn't allow grouped symbol as input. Please convert to list with "
                                     "list(inputs) first or let unroll handle splitting.")
            inputs = list(sym.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise AssertionError(f"unroll: got {len(inputs)} inputs for length {length}")
        if merge is True:
            inputs = sym.Concat(*[sym.expand_dims(i, axis=axis) for i in inputs], dim=axis)
            in_axis = axis
    if isinstance(inputs, sym.Symbol) and axis != in_axis:
        inputs = sym.swapaxes(inputs, dim0=axis, dim1=in_axis)
    return inputs, axis


class RNNParams:
    """The weight variables of one or more cells, created on first `get` under `prefix + name`."""

    def __init__(self, prefix: str = ""):
        self._prefix = prefix
        self._params: dict[str, Any] = {}

    def get(self, name: str, **kwargs: Any) -> Any:
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = sym.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """Base of the symbolic cells: parameters, begin states, unrolling, weight (un)packing."""

    def __init__(self, prefix: str = "", params: RNNParams | None = None):
        self._own_params = params is None
        self._prefix = prefix
        self._params = RNNParams(prefix) if params is None else params
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Restart the step counters (and those of child cells) before a new unroll."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        raise NotImplementedError()

    @property
    def params(self) -> RNNParams:
        self._own_params = False
        return self._params

    @property
    def state_info(self) -> list:
        raise NotImplementedError()

    @property
    def state_shape(self) -> list:
        return [ele["shape"] for ele in self.state_info]

    @property
    def _gate_names(self) -> tuple:
        return ()

    def _check_unmodified(self) -> None:
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. DropoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")

    def begin_state(self, func: Any = sym.zeros, **kwargs: Any) -> list:
        """Initial states, one `func(name=<prefix>begin_state_<i>, **state_info)` each."""
        self._check_unmodified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **kwargs))
        return states

    def unpack_weights(self, args: dict) -> dict:
        """Split each fused i2h/h2h weight and bias into per-gate arrays."""
        args = args.copy()
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h:(j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args: dict) -> dict:
        """Join per-gate arrays back into fused i2h/h2h weights and biases."""
        args = args.copy()
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            weight = [args.pop(f"{self._prefix}{group}{g}_weight") for g in self._gate_names]
            bias = [args.pop(f"{self._prefix}{group}{g}_bias") for g in self._gate_names]
            args[f"{self._prefix}{group}_weight"] = nd.concat(*weight, dim=0)
            args[f"{self._prefix}{group}_bias"] = nd.concat(*bias, dim=0)
        return args

    def unroll(self, length: int, inputs: Any, begin_state: list | None = None, layout: str = "NTC",
               merge_outputs: bool | None = None) -> tuple[Any, list]:
        """Apply the cell `length` times; outputs merged into one Symbol when `merge_outputs`."""
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs: Any, activation: Any, **kwargs: Any) -> Any:
        if isinstance(activation, str):
            return sym.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)

    def _step_name(self) -> str:
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"


def _nc(num_hidden: int) -> dict:
    return {"shape": (0, num_hidden), "__layout__": "NC"}


class RNNCell(BaseRNNCell):
    """Elman cell: h' = act(W_i x + b_i + W_h h + b_h)."""

    def __init__(self, num_hidden: int, activation: Any = "tanh", prefix: str = "rnn_", params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden, self._activation = num_hidden, activation
        self._iW, self._iB = self.params.get("i2h_weight"), self.params.get("i2h_bias")
        self._hW, self._hB = self.params.get("h2h_weight"), self.params.get("h2h_bias")

    @property
    def state_info(self) -> list:
        return [_nc(self._num_hidden)]

    @property
    def _gate_names(self) -> tuple:
        return ("",)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h = sym.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=self._num_hidden,
                                 name=f"{name}i2h")
        h2h = sym.FullyConnected(data=states[0], weight=self._hW, bias=self._hB, num_hidden=self._num_hidden,
                                 name=f"{name}h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(BaseRNNCell):
    """LSTM cell (gates i, f, c, o); the i2h bias starts with `forget_bias` on the forget gate."""

    def __init__(self, num_hidden: int, prefix: str = "lstm_", params: Any = None, forget_bias: float = 1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW, self._hW = self.params.get("i2h_weight"), self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias", init=init.LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self) -> list:
        return [_nc(self._num_hidden), _nc(self._num_hidden)]

    @property
    def _gate_names(self) -> tuple:
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        n = self._num_hidden * 4
        i2h = sym.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=n, name=f"{name}i2h")
        h2h = sym.FullyConnected(data=states[0], weight=self._hW, bias=self._hB, num_hidden=n, name=f"{name}h2h")
        gates = sym.SliceChannel(i2h + h2h, num_outputs=4, name=f"{name}slice")
        in_gate = sym.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = sym.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = sym.Activation(gates[2], act_type="tanh", name=f"{name}c")
        out_gate = sym.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = sym._internal._plus(forget_gate * states[1], in_gate * in_transform, name=f"{name}state")
        next_h = sym._internal._mul(out_gate, sym.Activation(next_c, act_type="tanh"), name=f"{name}out")
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """GRU cell (gates r, z, o), as in MXNet (Cho et al. 2014 with the reset gate on h2h)."""

    def __init__(self, num_hidden: int, prefix: str = "gru_", params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW, self._iB = self.params.get("i2h_weight"), self.params.get("i2h_bias")
        self._hW, self._hB = self.params.get("h2h_weight"), self.params.get("h2h_bias")

    @property
    def state_info(self) -> list:
        return [_nc(self._num_hidden)]

    @property
    def _gate_names(self) -> tuple:
        return ("_r", "_z", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        prev_h = states[0]
        n = self._num_hidden * 3
        i2h = sym.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=n, name=f"{name}_i2h")
        h2h = sym.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB, num_hidden=n, name=f"{name}_h2h")
        i2h_r, i2h_z, i2h = sym.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = sym.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset_gate = sym.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update_gate = sym.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        next_h_tmp = sym.Activation(i2h + reset_gate * h2h, act_type="tanh", name=f"{name}_h_act")
        next_h = sym._internal._plus((1.0 - update_gate) * next_h_tmp, update_gate * prev_h, name=f"{name}out")
        return next_h, [next_h]


_MODE_GATES = {"rnn_relu": ("",), "rnn_tanh": ("",), "lstm": ("_i", "_f", "_c", "_o"), "gru": ("_r", "_z", "_o")}


class FusedRNNCell(BaseRNNCell):
    """All layers and time steps in one `RNN` operator, its weights in one `parameters` vector."""

    def __init__(self, num_hidden: int, num_layers: int = 1, mode: str = "lstm", bidirectional: bool = False,
                 dropout: float = 0.0, get_next_state: bool = False, forget_bias: float = 1.0,
                 prefix: str | None = None, params: Any = None):
        super().__init__(prefix=f"{mode}_" if prefix is None else prefix, params=params)
        if mode not in _MODE_GATES:
            raise ValueError(f"FusedRNNCell: mode must be one of {sorted(_MODE_GATES)}, got {mode!r}")
        self._num_hidden, self._num_layers, self._mode = num_hidden, num_layers, mode
        self._bidirectional, self._dropout, self._get_next_state = bidirectional, dropout, get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        initializer = init.FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get("parameters", init=initializer)

    @property
    def state_info(self) -> list:
        b = 2 if self._bidirectional else 1
        n = 2 if self._mode == "lstm" else 1
        return [{"shape": (b * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"} for _ in range(n)]

    @property
    def _gate_names(self) -> tuple:
        return _MODE_GATES[self._mode]

    def _slices(self, arr: Any, num_input: int) -> dict:
        layout = fused_rnn_layout(self._mode, self._num_layers, self._bidirectional, self._num_hidden, num_input,
                                  prefix=self._prefix)
        end = layout[-1][1] + layout[-1][2][0]
        if end != arr.size:
            raise AssertionError("Invalid parameters size for FusedRNNCell")
        return {name: arr[start:start + int(_prod(shape))].reshape(shape) for name, start, shape in layout}

    def unpack_weights(self, args: dict) -> dict:
        args = args.copy()
        arr = args.pop(self._parameter.name)
        num_input = fused_rnn_num_input(arr.size, self._mode, self._num_layers, self._bidirectional,
                                        self._num_hidden)
        args.update({name: part.copy() for name, part in self._slices(arr, num_input).items()})
        return args

    def pack_weights(self, args: dict) -> dict:
        args = args.copy()
        h, m, b = self._num_hidden, len(self._gate_names), len(self._directions)
        w0 = args[f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"]
        num_input = w0.shape[1]
        total = (num_input + h + 2) * h * m * b + (self._num_layers - 1) * m * h * (h + b * h + 2) * b
        arr = nd.zeros((total,), ctx=w0.context, dtype=w0.dtype)
        for name, part in self._slices(arr, num_input).items():
            part[:] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for faster speed", stacklevel=2)
            inputs = sym.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise AssertionError(f"Unsupported layout {layout}")
        states = self.begin_state() if begin_state is None else begin_state
        kw = {"state": states[0], "state_cell": states[1]} if self._mode == "lstm" else {"state": states[0]}
        rnn = sym.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                      num_layers=self._num_layers, bidirectional=self._bidirectional, p=self._dropout,
                      state_outputs=self._get_next_state, mode=self._mode, name=self._prefix + "rnn", **kw)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            n = 2 if self._mode == "lstm" else 1
            for i in range(1, n + 1):
                rnn[i]._set_attr(__layout__="LNC")
            outputs, states = rnn[0], [rnn[i] for i in range(1, n + 1)]
        if axis == 1:
            outputs = sym.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self) -> "SequentialRNNCell":
        """The same network as a SequentialRNNCell of per-layer (bidirectional) cells."""
        make = {"rnn_relu": lambda p: RNNCell(self._num_hidden, activation="relu", prefix=p),
                "rnn_tanh": lambda p: RNNCell(self._num_hidden, activation="tanh", prefix=p),
                "lstm": lambda p: LSTMCell(self._num_hidden, prefix=p),
                "gru": lambda p: GRUCell(self._num_hidden, prefix=p)}[self._mode]
        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make(f"{self._prefix}l{i}_"), make(f"{self._prefix}r{i}_"),
                                            output_prefix=f"{self._prefix}bi_l{i}_"))
            else:
                stack.add(make(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack


def _prod(shape: tuple) -> int:
    out = 1
    for d in shape:
        out *= d
    return out


from .cell_wrappers import (BidirectionalCell, DropoutCell, ModifierCell, ResidualCell,  # noqa: E402
                            SequentialRNNCell, ZoneoutCell)
