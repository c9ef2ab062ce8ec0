"""Checkpoints of models built from `mx.rnn` cells: weights saved unpacked (per gate), loaded packed."""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from hybridgraph.model import load_checkpoint, save_checkpoint

from .cells import BaseRNNCell

__all__ = ["rnn_unroll", "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def rnn_unroll(cell: BaseRNNCell, length: int, inputs: Any = None, begin_state: Any = None, input_prefix: str = "",
               layout: str = "NTC") -> tuple:
    """Deprecated: call cell.unroll."""
    warnings.warn("rnn_unroll is deprecated. Please call cell.unroll directly.", stacklevel=2)
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def _cells(cells: Any) -> list:
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(cells: Any, prefix: str, epoch: int, symbol: Any, arg_params: dict,
                        aux_params: dict) -> None:
    """save_checkpoint with each cell's weights unpacked (per gate), as MXNet stores them."""
    for cell in _cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells: Any, prefix: str, epoch: int) -> tuple:
    """load_checkpoint with each cell's weights packed back: (symbol, arg_params, aux_params)."""
    symbol, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _cells(cells):
        arg = cell.pack_weights(arg)
    return symbol, arg, aux


def do_rnn_checkpoint(cells: Any, prefix: str, period: int = 1) -> Callable:
    """An epoch-end callback saving an RNN checkpoint every `period` epochs."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
