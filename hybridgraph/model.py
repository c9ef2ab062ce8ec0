"""`mx.model`: checkpoint files (`prefix-symbol.json` + `prefix-%04d.params`) and
the `BatchEndParam` record that training loops hand to callbacks."""
from __future__ import annotations

import logging
from collections import namedtuple
from typing import Any

from hybridgraph import nd
from hybridgraph import symbol as _sym
from hybridgraph.nd.backend import cpu
from hybridgraph.nd.serialization import atomic_write, save_tobuffer

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params"]

#: what `batch_end_callback`s receive: epoch, batch number, the metric and the caller's locals
BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def _params_name(prefix: str, epoch: int) -> str:
    return f"{prefix}-{epoch:04d}.params"


def save_checkpoint(prefix: str, epoch: int, symbol: Any, arg_params: dict, aux_params: dict,
                    remove_amp_cast: bool = True) -> None:
    """Save a model checkpoint: `prefix-symbol.json` and `prefix-%04d.params`.

    Parameters
    ----------
    prefix : str
        Prefix of the file names.
    epoch : int
        The epoch number in the params file name.
    symbol : Symbol or None
        The network (not written when None).
    arg_params : dict of str to NDArray
        The weights, stored under ``arg:<name>``.
    aux_params : dict of str to NDArray
        The auxiliary states, stored under ``aux:<name>``.
    remove_amp_cast : bool, optional
        Drop amp_cast / amp_multicast nodes from the saved JSON.

    Notes
    -----
    Both files are written atomically (a temporary file renamed into place),
    so a crash never leaves a truncated checkpoint; the params go first and the
    symbol last, so a kill between them never pairs a new graph with old
    weights. The files load in MXNet.
    """
    save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
    param_name = _params_name(prefix, epoch)
    atomic_write(param_name, save_tobuffer(save_dict))
    if symbol is not None:  # last: a kill between the two never pairs a new graph with old weights
        atomic_write(f"{prefix}-symbol.json", symbol.tojson(remove_amp_cast=remove_amp_cast).encode("utf-8"))
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix: str, epoch: int) -> tuple[dict, dict]:
    """The (arg_params, aux_params) dicts stored in `prefix-%04d.params`."""
    save_dict = nd.load(_params_name(prefix, epoch))
    arg_params: dict = {}
    aux_params: dict = {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", _params_name(prefix, epoch))
        return arg_params, aux_params
    if not isinstance(save_dict, dict):
        raise ValueError(f"{_params_name(prefix, epoch)} holds unnamed arrays; a checkpoint needs "
                         "'arg:<name>' / 'aux:<name>' keys")
    for k, v in save_dict.items():
        tp, name = k.split(":", 1) if ":" in k else ("", k)
        if tp == "arg":
            arg_params[name] = v
        if tp == "aux":
            aux_params[name] = v
    return arg_params, aux_params


def load_checkpoint(prefix: str, epoch: int) -> tuple[Any, dict, dict]:
    """Load a checkpoint saved by `save_checkpoint` (or by MXNet).

    Parameters
    ----------
    prefix : str
        Prefix of the file names.
    epoch : int
        The epoch to load.

    Returns
    -------
    symbol : Symbol
        The network, from `prefix-symbol.json`.
    arg_params : dict of str to NDArray
        The weights.
    aux_params : dict of str to NDArray
        The auxiliary states.
    """
    symbol = _sym.load(f"{prefix}-symbol.json")
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params
