"""Cells built from other cells (`mx.gluon.rnn`): the stacks
SequentialRNNCell and HybridSequentialRNNCell, DropoutCell, and the modifiers
ModifierCell, ZoneoutCell, ResidualCell and BidirectionalCell. The ops each
step emits, and their names, are MXNet 1.9.1's.
"""
from __future__ import annotations

import numbers
from typing import Any

from hybridgraph import symbol

from ..block import _indent
from .cell_base import (HybridRecurrentCell, RecurrentCell, _TENSOR_TYPES, _cells_begin_state, _cells_state_info,
                        _format_sequence, _get_begin_state, _mask_sequence_variable_length, _reverse_sequences)


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
