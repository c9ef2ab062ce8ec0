"""The recurrent cell base classes (`RecurrentCell`, `HybridRecurrentCell`):
state bookkeeping, `begin_state` and `unroll`, with the sequence helpers
(layout changes, masking and reversal of variable-length sequences) they and
the cells of rnn_cell.py and modifier_cells.py share.
"""
from __future__ import annotations

from typing import Any

from hybridgraph import nd
from hybridgraph import symbol
from hybridgraph.symbol import Symbol
from hybridgraph.symbol.tracer import Tracer

from ..block import Block
from ..hybrid_block import HybridBlock

_TENSOR_TYPES = (Symbol, nd.NDArray)


def _as_list(obj: Any) -> list:
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _split(F: Any, x: Any, **kwargs: Any) -> list:  # noqa: N803
    """F.split as a list of arrays (a multi-output Symbol, a list, or one NDArray)."""
    res = F.split(x, **kwargs)
    if isinstance(res, Symbol):   # one piece stays whole (a traced one would iterate its rows)
        return [res] if len(res._outputs) == 1 else list(res)
    return _as_list(res)


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
