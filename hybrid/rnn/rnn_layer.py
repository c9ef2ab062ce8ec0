"""Recurrent layers backed by the fused `RNN` operator (`mx.gluon.rnn.RNN/LSTM/GRU`).

The layers emit exactly MXNet 1.9.1's graph: `SwapAxis` for NTC data, a
`Reshape(shape=-1)` per weight, `_rnn_param_concat(dim=0, num_args=N)`, `_zeros`
begin states (shape `(L, 0, H)`, `__layout__` "LNC") when traced without states,
and `RNN` with `state_outputs=True`.
"""
from __future__ import annotations

import re
from typing import Any

from hybridgraph import nd
from hybridgraph import symbol
from hybridgraph.symbol import Symbol
from hybridgraph.symbol.tracer import Tracer

from ..hybrid_block import HybridBlock
from ..parameter import Parameter

__all__ = ["RNN", "LSTM", "GRU"]

_TENSOR_TYPES = (nd.NDArray, Symbol)


def _static_shape(x: Any) -> tuple | None:
    """The shape of an array, or of a traced value without making the trace shape-specific."""
    if isinstance(x, Tracer):
        return x._aval()[0]
    if isinstance(x, nd.NDArray):
        return x.shape
    return None


class _RNNLayer(HybridBlock):
    """Implementation of recurrent layers."""

    def __init__(self, hidden_size: int, num_layers: int, layout: str, dropout: float,
                 bidirectional: bool, input_size: int, i2h_weight_initializer: Any,
                 h2h_weight_initializer: Any, i2h_bias_initializer: Any, h2h_bias_initializer: Any,
                 mode: str, projection_size: int | None, h2r_weight_initializer: Any,
                 lstm_state_clip_min: float | None, lstm_state_clip_max: float | None,
                 lstm_state_clip_nan: bool, dtype: Any, use_sequence_length: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise ValueError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]
        self._register_params()

    def _register_params(self) -> None:
        ng, ni, nh = self._gates, self._input_size, self._hidden_size
        nr = self._projection_size or nh
        for i in range(self._num_layers):
            for j in ["l", "r"][:self._dir]:
                self._register_param(f"{j}{i}_i2h_weight", (ng * nh, ni), self._i2h_weight_initializer)
                self._register_param(f"{j}{i}_h2h_weight", (ng * nh, nr), self._h2h_weight_initializer)
                self._register_param(f"{j}{i}_i2h_bias", (ng * nh,), self._i2h_bias_initializer)
                self._register_param(f"{j}{i}_h2h_bias", (ng * nh,), self._h2h_bias_initializer)
                if self._projection_size:
                    self._register_param(f"{j}{i}_h2r_weight", (nr, nh), self._h2r_weight_initializer)
            ni = nr * self._dir

    def _register_param(self, name: str, shape: tuple, init: Any) -> Parameter:
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True, dtype=self._dtype)
        setattr(self, name, p)
        return p

    def __repr__(self) -> str:
        s = "{name}({mapping}, {_layout}"
        if self._num_layers != 1:
            s += ", num_layers={_num_layers}"
        if self._dropout != 0:
            s += ", dropout={_dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        s += ")"
        shape = self.l0_i2h_weight.shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0] // self._gates}"
        return s.format(name=self.__class__.__name__, mapping=mapping, **self.__dict__)

    def _collect_params_with_prefix(self, prefix: str = "") -> dict[str, Parameter]:
        """Structural names of MXNet's unfused cells (`_unfused.0.l_cell.i2h_weight`), which
        `save_parameters` writes, for compatibility with older parameter files."""
        if prefix:
            prefix += "."
        pattern = re.compile(r"(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z")
        bidirectional = any(pattern.match(k).group(1) == "r" for k in self._reg_params)

        def convert_key(m: re.Match) -> str:
            d, layer, g, t = (m.group(i) for i in range(1, 5))
            if bidirectional:
                return f"_unfused.{layer}.{d}_cell.{g}_{t}"
            return f"_unfused.{layer}.{g}_{t}"

        ret = {prefix + convert_key(pattern.match(key)): val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size: int = 0) -> list[dict]:
        """One state h per layer and direction (RNN, GRU); LSTM adds its cell state."""
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]

    def cast(self, dtype: Any) -> None:
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size: int = 0, func: Any = nd.zeros, **kwargs: Any) -> list:
        """Initial state for this cell.

        Parameters
        ----------
        batch_size: int
            Only required for `NDArray` API. Size of the batch ('N' in layout).
        func : callable, default `ndarray.zeros`
            Function for creating initial state: `symbol.zeros`, `symbol.var`, ...
            for the Symbol API, `ndarray.zeros`, `ndarray.ones`, ... for NDArrays.
        **kwargs :
            Additional keyword arguments passed to func (`dtype`, `ctx`, ...).

        Returns
        -------
        states : list of Symbol or NDArray
            Starting states for the first RNN step.
        """
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(func(name=f"{self.prefix}h0_{i}", **info))
        return states

    def __call__(self, inputs: Any, states: Any = None, sequence_length: Any = None, **kwargs: Any):
        skip_states = states is None
        if skip_states != self.skip_states:  # the traced output format depends on it
            self._clear_cache()
        self.skip_states = skip_states
        if states is None:
            if isinstance(inputs, nd.NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, _TENSOR_TYPES):
            states = [states]
        self._infer_input_size(inputs)
        if self._use_sequence_length:
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def infer_shape(self, inputs: Any, *args: Any) -> None:
        """Infer the parameters' shapes from example inputs (the first i2h weights take
        the input's feature size, as on a call)."""
        self._infer_input_size(inputs)
        super().infer_shape(inputs, *args)

    def _infer_input_size(self, inputs: Any) -> None:
        """Deferred initialisation: the first layer's i2h weights take the input's feature size."""
        shape = _static_shape(inputs)
        if not shape or len(shape) != 3 or not shape[2]:
            return
        for j in ["l", "r"][:self._dir]:
            p = getattr(self, f"{j}0_i2h_weight")
            if p.shape is not None and p.shape[1] == 0:
                p.shape = (p.shape[0], shape[2])

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, sequence_length: Any = None,  # noqa: N803
                       **kwargs: Any) -> Any:
        if F is nd:
            batch_size = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info["shape"]:
                    raise ValueError(f"Invalid recurrent state shape. Expecting {info['shape']}, "
                                     f"got {state.shape}.")
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        # out is (output, state)
        return out[0] if self.skip_states else out

    def _packed_params(self, F: Any, kwargs: dict) -> Any:  # noqa: N803
        """Every weight, then every bias, flattened and concatenated in MXNet's order."""
        gates = ["i2h", "h2h", "h2r"] if self._projection_size else ["i2h", "h2h"]
        params = [F.Reshape(kwargs[f"{d}{layer}_{g}_{t}"], shape=-1)
                  for t in ["weight", "bias"]
                  for layer in range(self._num_layers)
                  for d in ["l", "r"][:self._dir]
                  for g in gates
                  if g != "h2r" or t != "bias"]
        return F._internal._rnn_param_concat(*params, dim=0)

    def _forward_kernel(self, F: Any, inputs: Any, states: list, sequence_length: Any,  # noqa: N803
                        **kwargs: Any) -> tuple:
        """Forward with the fused RNN operator."""
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, 0, 1)
        params = self._packed_params(F, kwargs)
        rnn_args = list(states) + ([sequence_length] if self._use_sequence_length else [])
        rnn = F.RNN(inputs, params, *rnn_args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=self._projection_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        if self._mode == "lstm":
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs, states


_COMMON_DOC = """
    layout : str, default 'TNC'
        The format of input and output tensors. T, N and C stand for
        sequence length, batch size, and feature dimensions respectively.
    dropout: float, default 0
        If non-zero, introduces a dropout layer on the outputs of each
        RNN layer except the last layer.
    bidirectional: bool, default False
        If `True`, becomes a bidirectional RNN.
    i2h_weight_initializer : str or Initializer
        Initializer for the input weights matrix.
    h2h_weight_initializer : str or Initializer
        Initializer for the recurrent weights matrix.
    i2h_bias_initializer : str or Initializer, default 'zeros'
        Initializer for the bias vector.
    h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializer for the bias vector.
    input_size: int, default 0
        The number of expected features in the input x.
        If not specified, it will be inferred from input.
    dtype : str, default 'float32'
        Type to initialize the parameters and default states to
    prefix : str or None
        Prefix of this `Block`.
    params : ParameterDict or None
        Shared Parameters for this `Block`."""

_ONE_STATE_IO_DOC = """

    Inputs:
        - **data**: `(sequence_length, batch_size, input_size)` for layout "TNC".
        - **states**: initial state `(num_layers * num_directions, batch_size, num_hidden)`;
          zeros when None.

    Outputs:
        - **out**: `(sequence_length, batch_size, num_directions * num_hidden)` for "TNC".
        - **out_states**: the final state; not returned when `states` is None.
    """


class RNN(_RNNLayer):
    __doc__ = r"""Applies a multi-layer Elman RNN with `tanh` or `ReLU` non-linearity to an input sequence.

    For each element in the input sequence, each layer computes
    :math:`h_t = \tanh(w_{ih} * x_t + b_{ih}  +  w_{hh} * h_{(t-1)} + b_{hh})`
    (`ReLU` instead of `tanh` with activation='relu').

    Parameters
    ----------
    hidden_size: int
        The number of features in the hidden state h.
    num_layers: int, default 1
        Number of recurrent layers.
    activation: {'relu' or 'tanh'}, default 'relu'
        The activation function to use.""" + _COMMON_DOC + _ONE_STATE_IO_DOC

    def __init__(self, hidden_size: int, num_layers: int = 1, activation: str = "relu",
                 layout: str = "TNC", dropout: float = 0, bidirectional: bool = False,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 input_size: int = 0, dtype: Any = "float32", **kwargs: Any):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer,
                         "rnn_" + activation, None, None, None, None, False, dtype, **kwargs)


class LSTM(_RNNLayer):
    __doc__ = r"""Applies a multi-layer long short-term memory (LSTM) RNN to an input sequence.

    Gates i, f, g, o (input, forget, cell, output); :math:`c_t = f_t * c_{(t-1)} + i_t * g_t`,
    :math:`h_t = o_t * \tanh(c_t)`, projected by `h2r_weight` when `projection_size` is set.

    Parameters
    ----------
    hidden_size: int
        The number of features in the hidden state h.
    num_layers: int, default 1
        Number of recurrent layers.""" + _COMMON_DOC + """
    projection_size: int, default None
        The number of features after projection.
    h2r_weight_initializer : str or Initializer, default None
        Initializer for the projected recurrent weights matrix.
    state_clip_min, state_clip_max : float or None, default None
        Clip range of the LSTM cell states (used together).
    state_clip_nan : boolean, default False
        Whether to stop NaN from propagating in state by clipping it to min/max.

    Inputs:
        - **data**: `(sequence_length, batch_size, input_size)` for layout "TNC".
        - **states**: a list of two initial states (h, c), each
          `(num_layers * num_directions, batch_size, num_hidden)`; zeros when None.

    Outputs:
        - **out**: `(sequence_length, batch_size, num_directions * num_hidden)` for "TNC".
        - **out_states**: the final [h, c]; not returned when `states` is None.
    """

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC",
                 dropout: float = 0, bidirectional: bool = False, input_size: int = 0,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 projection_size: int | None = None, h2r_weight_initializer: Any = None,
                 state_clip_min: float | None = None, state_clip_max: float | None = None,
                 state_clip_nan: bool = False, dtype: Any = "float32", **kwargs: Any):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer,
                         "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        ld = self._num_layers * self._dir
        h_size = self._projection_size or self._hidden_size
        return [{"shape": (ld, batch_size, h_size), "__layout__": "LNC", "dtype": self._dtype},
                {"shape": (ld, batch_size, self._hidden_size), "__layout__": "LNC", "dtype": self._dtype}]


class GRU(_RNNLayer):
    __doc__ = r"""Applies a multi-layer gated recurrent unit (GRU) RNN to an input sequence.

    cuDNN's variant: the reset gate multiplies the recurrent projection,
    :math:`n_t = \tanh(W_{in} x_t + b_{in} + r_t * (W_{hn} h_{(t-1)} + b_{hn}))`,
    :math:`h_t = (1 - i_t) * n_t + i_t * h_{(t-1)}`.

    Parameters
    ----------
    hidden_size: int
        The number of features in the hidden state h
    num_layers: int, default 1
        Number of recurrent layers.""" + _COMMON_DOC + _ONE_STATE_IO_DOC

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC",
                 dropout: float = 0, bidirectional: bool = False, input_size: int = 0,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 dtype: Any = "float32", **kwargs: Any):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer,
                         "gru", None, None, None, None, False, dtype, **kwargs)
