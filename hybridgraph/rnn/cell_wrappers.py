"""Cells made of other cells (`mx.rnn`): SequentialRNNCell, BidirectionalCell, DropoutCell and the
modifiers ZoneoutCell and ResidualCell."""
from __future__ import annotations

from numbers import Number
from typing import Any

from hybridgraph import symbol as sym

from .cells import BaseRNNCell, FusedRNNCell, normalize_sequence


def _state_info(cells: list) -> list:
    return sum((c.state_info for c in cells), [])


def _begin_state(cells: list, **kwargs: Any) -> list:
    return sum((c.begin_state(**kwargs) for c in cells), [])


def _unpack(cells: list, args: dict) -> dict:
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def _pack(cells: list, args: dict) -> dict:
    for cell in cells:
        args = cell.pack_weights(args)
    return args


class _Container(BaseRNNCell):
    """Shared by cells that own a list of child cells whose params they merge."""

    def _adopt(self, cell: BaseRNNCell, what: str) -> None:
        if self._override_cell_params:
            if not cell._own_params:
                raise AssertionError(f"Either specify params for {what} or child cells, not both.")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self) -> list:
        return _state_info(self._cells)

    def begin_state(self, **kwargs: Any) -> list:
        self._check_unmodified()
        return _begin_state(self._cells, **kwargs)

    def unpack_weights(self, args: dict) -> dict:
        return _unpack(self._cells, args)

    def pack_weights(self, args: dict) -> dict:
        return _pack(self._cells, args)


class SequentialRNNCell(_Container):
    """Cells stacked on top of each other."""

    def __init__(self, params: Any = None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells: list = []

    def add(self, cell: BaseRNNCell) -> None:
        self._cells.append(cell)
        self._adopt(cell, "SequentialRNNCell")

    def __call__(self, inputs, states):
        self._counter += 1
        next_states, p = [], 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise AssertionError("a SequentialRNNCell holding a BidirectionalCell cannot be stepped; use unroll")
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        begin_state = self.begin_state() if begin_state is None else begin_state
        p, next_states = 0, []
        last = len(self._cells) - 1
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n], layout=layout,
                                         merge_outputs=None if i < last else merge_outputs)
            p += n
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the inputs (no state)."""

    def __init__(self, dropout: float, prefix: str = "dropout_", params: Any = None):
        super().__init__(prefix, params)
        if not isinstance(dropout, Number):
            raise AssertionError("dropout probability must be a number")
        self.dropout = dropout

    @property
    def state_info(self) -> list:
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = sym.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, sym.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout, merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """Wraps a base cell, which may then only be used through the modifier."""

    def __init__(self, base_cell: BaseRNNCell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self) -> list:
        return self.base_cell.state_info

    def begin_state(self, init_sym: Any = sym.zeros, **kwargs: Any) -> list:
        self._check_unmodified()
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(init_sym, **kwargs)
        self.base_cell._modified = True
        return begin

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016): randomly keep the previous output / states."""

    def __init__(self, base_cell: BaseRNNCell, zoneout_outputs: float = 0.0, zoneout_states: float = 0.0):
        if isinstance(base_cell, FusedRNNCell):
            raise AssertionError("FusedRNNCell doesn't support zoneout. Please unfuse first.")
        if isinstance(base_cell, BidirectionalCell):
            raise AssertionError("BidirectionalCell doesn't support zoneout since it doesn't support step. Please "
                                 "add ZoneoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs, self.zoneout_states = zoneout_outputs, zoneout_states
        self.prev_output = None

    def reset(self) -> None:
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):
            return sym.Dropout(sym.ones_like(like), p=p)
        prev = self.prev_output if self.prev_output is not None else sym.zeros((0, 0))
        output = (sym.where(mask(self.zoneout_outputs, next_output), next_output, prev)
                  if self.zoneout_outputs != 0.0 else next_output)
        if self.zoneout_states != 0.0:
            next_states = [sym.where(mask(self.zoneout_states, new), new, old) for new, old in zip(next_states, states)]
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (He et al. 2015)."""

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return sym.elemwise_add(output, inputs, name=f"{output.name}_plus_residual"), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout,
                                                merge_outputs=merge_outputs)
        self.base_cell._modified = True
        merge = isinstance(outputs, sym.Symbol) if merge_outputs is None else merge_outputs
        inputs, _ = normalize_sequence(length, inputs, layout, merge)
        if merge:
            return sym.elemwise_add(outputs, inputs, name=f"{outputs.name}_plus_residual"), states
        return [sym.elemwise_add(o, i, name=f"{o.name}_plus_residual") for o, i in zip(outputs, inputs)], states


class BidirectionalCell(_Container):
    """A left-to-right and a right-to-left cell; outputs concatenated per step."""

    def __init__(self, l_cell: BaseRNNCell, r_cell: BaseRNNCell, params: Any = None, output_prefix: str = "bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        self._cells = [l_cell, r_cell]
        for cell in self._cells:
            self._adopt(cell, "BidirectionalCell")

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        l_cell, r_cell = self._cells
        n_l = len(l_cell.state_info)
        l_out, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l], layout=layout,
                                        merge_outputs=merge_outputs)
        r_out, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)), begin_state=states[n_l:],
                                        layout=layout, merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_out, sym.Symbol) and isinstance(r_out, sym.Symbol)
            if not merge_outputs:
                if isinstance(l_out, sym.Symbol):
                    l_out = list(sym.SliceChannel(l_out, axis=axis, num_outputs=length, squeeze_axis=1))
                if isinstance(r_out, sym.Symbol):
                    r_out = list(sym.SliceChannel(r_out, axis=axis, num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            l_out, r_out = [l_out], [sym.reverse(r_out, axis=axis)]
        else:
            r_out = list(reversed(r_out))
        outputs = [sym.Concat(lo, ro, dim=1 + merge_outputs,
                              name=f"{self._output_prefix}out" if merge_outputs else f"{self._output_prefix}t{i}")
                   for i, (lo, ro) in enumerate(zip(l_out, r_out))]
        return (outputs[0] if merge_outputs else outputs), [l_states, r_states]
