"""`gluon.contrib.rnn.VariationalDropoutCell`, `LSTMPCell` and `dynamic_unroll` (MXNet 1.9.1).

VariationalDropoutCell (Gal & Ghahramani 2016) draws one dropout mask per sequence for the
inputs, states and outputs of its base cell; LSTMPCell is an LSTM whose recurrent state is a
projection of the hidden state (Sak et al. 2014); dynamic_unroll runs a cell over a sequence
with contrib.foreach (so hybridized graphs hold one loop, not one copy per step).
"""
from __future__ import annotations

from typing import Any

from hybridgraph import nd

from ...rnn import BidirectionalCell, HybridRecurrentCell, ModifierCell, SequentialRNNCell
from ...rnn.cell_base import _format_sequence, _get_begin_state, _mask_sequence_variable_length

__all__ = ["VariationalDropoutCell", "LSTMPCell", "dynamic_unroll"]


class VariationalDropoutCell(ModifierCell):
    """Dropout with one mask per sequence on the base cell's inputs, first state and outputs."""

    def __init__(self, base_cell: Any, drop_inputs: float = 0.0, drop_states: float = 0.0,
                 drop_outputs: float = 0.0):
        if drop_states and isinstance(base_cell, BidirectionalCell):
            raise AssertionError("BidirectionalCell doesn't support variational state dropout. Please add "
                                 "VariationalDropoutCell to the cells underneath instead.")
        if drop_states and isinstance(base_cell, SequentialRNNCell) and getattr(base_cell, "_bidirectional", False):
            raise AssertionError("Bidirectional SequentialRNNCell doesn't support variational state dropout. "
                                 "Please add VariationalDropoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.drop_inputs, self.drop_states, self.drop_outputs = drop_inputs, drop_states, drop_outputs
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def _alias(self) -> str:
        return "vardrop"

    def reset(self) -> None:
        super().reset()
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def hybrid_forward(self, F, inputs, states):  # noqa: N803
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = F.Dropout(F.ones_like(states[0]), p=self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = F.Dropout(F.ones_like(inputs), p=self.drop_inputs)
        if self.drop_states:
            states = list(states)
            states[0] = states[0] * self.drop_states_mask
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = F.Dropout(F.ones_like(output), p=self.drop_outputs)
        if self.drop_outputs:
            output = output * self.drop_outputs_mask
        return output, next_states

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p_out = {self.drop_outputs}, p_state = {self.drop_states})"

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        if self.drop_states:  # the state mask must be applied step by step
            return super().unroll(length, inputs, begin_state, layout, merge_outputs, valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)  # noqa: N806
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        outputs, states = self.base_cell.unroll(length, inputs, states, layout, merge_outputs=True,
                                                valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, nd.NDArray) or getattr(outputs, "_is_symbolic", False)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    """LSTM with a projected recurrent state r = W_hr h (no bias); states are [r, c]."""

    def __init__(self, hidden_size: int, projection_size: int, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, h2r_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size, self._input_size, self._projection_size = hidden_size, input_size, projection_size
        get = self.params.get
        self.i2h_weight = get("i2h_weight", shape=(4 * hidden_size, input_size), init=i2h_weight_initializer,
                              allow_deferred_init=True)
        self.h2h_weight = get("h2h_weight", shape=(4 * hidden_size, projection_size), init=h2h_weight_initializer,
                              allow_deferred_init=True)
        self.h2r_weight = get("h2r_weight", shape=(projection_size, hidden_size), init=h2r_weight_initializer,
                              allow_deferred_init=True)
        self.i2h_bias = get("i2h_bias", shape=(4 * hidden_size,), init=i2h_bias_initializer,
                            allow_deferred_init=True)
        self.h2h_bias = get("h2h_bias", shape=(4 * hidden_size,), init=h2h_bias_initializer,
                            allow_deferred_init=True)

    def state_info(self, batch_size: int = 0) -> list:
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "lstmp"

    def __repr__(self) -> str:
        shape, proj = self.i2h_weight.shape, self.h2r_weight.shape
        return f"{self.__class__.__name__}({shape[1] if shape[1] else None} -> {shape[0]} -> {proj[0]})"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,  # noqa: N803
                       h2h_bias):
        prefix = f"t{self._counter}_"
        n = self._hidden_size * 4
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n, name=prefix + "i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=n, name=prefix + "h2h")
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + "slice")
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        in_transform = F.Activation(gates[2], act_type="tanh", name=prefix + "c")
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform, name=prefix + "state")
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"), name=prefix + "hidden")
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size, weight=h2r_weight, no_bias=True,
                                  name=prefix + "out")
        return next_r, [next_r, next_c]


def dynamic_unroll(cell: Any, inputs: Any, begin_state: list, drop_inputs: float = 0, drop_outputs: float = 0,
                   layout: str = "TNC", valid_length: Any = None) -> tuple:
    """Run `cell` over the time axis of `inputs` with contrib.foreach; with `valid_length`, states
    stop changing after each sequence's end and outputs past it are zero."""
    inputs, axis, F, _ = _format_sequence(0, inputs, layout, True)  # noqa: N806
    axes = list(range(len(layout)))
    if axis != 0:
        axes[0], axes[axis] = axes[axis], axes[0]
        inputs = F.transpose(inputs, axes=axes)
    states = begin_state
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(axis,))
    if valid_length is None:
        def loop_body(step_inputs, step_states):
            return cell(step_inputs, step_states)
    else:
        states = [*list(states if isinstance(states, (list, tuple)) else [states]), F.zeros((1,))]

        def loop_body(step_inputs, step_states):
            cell_states, iter_no = step_states[:-1], step_states[-1]
            out, new_states = cell(step_inputs, cell_states)
            alive = F.broadcast_greater(valid_length, iter_no)
            new_states = [F.where(alive, new, old) for new, old in zip(new_states, cell_states)]
            return out, [*new_states, iter_no + 1]
    outputs, states = F.contrib.foreach(loop_body, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(axis,))
    if axis != 0:
        outputs = F.transpose(outputs, axes)
    if valid_length is None:
        return outputs, states
    outputs = F.SequenceMask(outputs, sequence_length=valid_length, use_sequence_length=True, axis=axis)
    return outputs, states[:-1]
