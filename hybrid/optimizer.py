"""Optimizers (`mx.optimizer`): MXNet 1.9.1's weight-update rules.

Each optimizer mirrors MXNet's Python class: the same constructor arguments and
defaults, the same state layout (so `Trainer.save_states` pickles the same
structure), and the same update formula. Where MXNet calls a fused update
operator (`sgd_mom_update`, `adam_update`, ...) the registry's kernel of that
name runs in place on the weight; the others are written with NDArray
operations exactly as MXNet writes them.

This module is the `mx.optimizer` namespace and holds the `Updater` (with
the reading of states pickles); the classes live in optimizer_base.py (the
base class, registry and `Test`), optimizer_sgd.py, optimizer_large_batch.py
and optimizer_adaptive.py.

Differences from MXNet, all deliberate:

- Sparse arrays are dense-backed (nd/sparse.py); SGD's and Adam's `lazy_update`
  with a row_sparse gradient updates only its rows, as MXNet's sparse kernels do.
  MXNet's aggregated multi-tensor kernels (`multi_sgd_update`, `multi_lamb_update`,
  `multi_lars`) are replaced by one per-tensor kernel call each (same formula).
- SGD with no learning-rate schedule updates each dtype group in one
  `multi_sgd(_mom)_update` call, not in MXNet's chunks of `aggregate_num`: bit-identical,
  fewer calls per step (`HYBRIDGRAPH_FUSED_UPDATE=0` restores the chunks; `_whole_group`).
- AdaDelta does not scale the caller's gradient array in place.
- DCASGD with momentum works (MXNet's `if mom:` raises for arrays of more than
  one element).
"""
from __future__ import annotations

import io
import os
import pickle
import pickletools
import sys
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.nd.errors import FormatError
from hybridgraph.nd.ndarray import NDArray

from . import lr_scheduler as _lr_scheduler_module
from .optimizer_base import Optimizer, Test, create, register
from .optimizer_sgd import DCASGD, NAG, SGD, SGLD, Signum, ccSGD
from .optimizer_large_batch import LAMB, LARS, LBSGD
from .optimizer_adaptive import FTML, AdaDelta, AdaGrad, Adam, Adamax, Ftrl, Nadam, RMSProp

__all__ = ["AdaDelta", "AdaGrad", "Adam", "Adamax", "DCASGD", "FTML", "Ftrl", "LARS", "LBSGD", "NAG",
           "Nadam", "Optimizer", "RMSProp", "SGD", "SGLD", "Signum", "LAMB", "Test", "Updater", "ccSGD",
           "create", "get_updater", "register"]


# -- Updater: states per index, pickled by Trainer.save_states ------------------------------

class Updater:
    """Applies an optimizer to (index, grad, weight) triples, creating each index's
    state on first use (MXNet's kvstore updater)."""

    def __init__(self, optimizer: Optimizer):
        self.optimizer = optimizer
        self.states: dict = {}
        self.states_synced: dict = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        """Update weight(s) given gradient(s) and index(es)."""
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = list(index), list(grad), list(weight)
        if not weights:
            return
        opt = self.optimizer
        opt._set_current_context(weights[0].context.device_id)
        self._sync_states(indices, weights)
        states = self.states
        if isinstance(opt, (SGD, Adam)) and opt.lazy_update and any(g.stype == "row_sparse" for g in grads):
            dense = []
            for i, w, g in zip(indices, weights, grads):
                if g.stype == "row_sparse" and not (isinstance(opt, SGD) and opt.multi_precision
                                                    and w.dtype == "float16"):   # mp_sgd: dense in MXNet
                    _update_rows(opt, i, w, g, states[i])
                else:
                    dense.append((i, w, g))
            if not dense:
                return
            indices, weights, grads = map(list, zip(*dense))
        step = opt.aggregate_num
        if not self.aggregate_updates or step <= 0:  # the optimizer may have been replaced by set_states
            for i, w, g in zip(indices, weights, grads):
                opt.update_multi_precision(i, w, g, states[i])
            return
        whole = _whole_group(opt)
        for idxs, ws, gs in _dtype_groups(indices, weights, grads):
            if whole:
                step = max(step, len(idxs))
            for start in range(0, len(idxs), step):
                chunk = idxs[start:start + step]
                opt.update_multi_precision(chunk, ws[start:start + step], gs[start:start + step],
                                           list(map(states.__getitem__, chunk)))

    def _sync_states(self, indices: list, weights: list) -> None:
        """Create the missing states and move loaded ones to their weight's context; bytes
        indices (MXNet's kvstore keys) are decoded in place."""
        opt, states, synced = self.optimizer, self.states, self.states_synced
        for i, idx in enumerate(indices):
            if synced.get(idx):
                continue
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode()
            if idx not in states:
                states[idx] = opt.create_state_multi_precision(idx, weights[i])
                synced[idx] = True
            elif not synced[idx]:
                states[idx] = self.sync_state_context(states[idx], weights[i].context)
                synced[idx] = True

    def sync_state_context(self, state: Any, context: Any) -> Any:
        """Move a state (an NDArray, or nested tuples/lists of them) to `context`."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states: bytes) -> None:
        """Set the states from `get_states` bytes (also reads MXNet 1.x's)."""
        states = loads_states(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states.keys(), False)
        self.aggregate_updates = self.optimizer.aggregate_num > 0

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states as pickled bytes; with `dump_optimizer`, the optimizer too
        (learning rate, schedules, update counts)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def _whole_group(opt: Optimizer) -> bool:
    """Whether one aggregated kernel call may update a whole dtype group, however large,
    instead of MXNet's chunks of `aggregate_num` (MXNET_OPTIMIZER_AGGREGATION_SIZE): for SGD
    with no learning-rate schedule each weight's update reads only its own lr, wd, gradient and
    momentum, so the chunking changes the number of calls, never a bit of the result (with a
    schedule, the lr of a chunk depends on the update count reached when it runs). One call
    instead of several saves the per-call glue of every training step. Switch:
    HYBRIDGRAPH_FUSED_UPDATE=0 restores MXNet's chunks."""
    return (type(opt) in _WHOLE_GROUP_OPTIMIZERS and opt.lr_scheduler is None
            and os.environ.get("HYBRIDGRAPH_FUSED_UPDATE", "1") not in ("0", ""))


_WHOLE_GROUP_OPTIMIZERS = (SGD, ccSGD)


def _dtype_groups(indices: list, weights: list, grads: list) -> list:
    """(indices, weights, grads) per weight dtype, in first-seen order (MXNet's updater
    aggregates weights of one dtype only)."""
    if len({w._data.dtype for w in weights}) == 1:     # the usual case: one group, as given
        return [(indices, weights, grads)]
    by_dtype: dict = {}
    for i, w, g in zip(indices, weights, grads):
        by_dtype.setdefault(w.dtype, []).append((i, w, g))
    return [tuple(map(list, zip(*group))) for group in by_dtype.values()]


def get_updater(optimizer: Optimizer) -> Updater:
    """Return an `Updater` applying `optimizer`."""
    return Updater(optimizer)


# -- reading states pickles (ours and MXNet 1.x's) ---------------------------------------------

def _update_rows(opt: Optimizer, index: Any, weight: NDArray, grad: Any, state: Any) -> None:
    """MXNet's lazy update of a row_sparse gradient (SGD, Adam): only the gradient's stored rows
    of the weight and of its states change (no weight decay or momentum for the other rows)."""
    from hybridgraph.nd.sparse import _row_indices  # noqa: PLC0415 - sparse is optional here
    rows = _row_indices(grad)
    if rows.size == weight.shape[0]:
        opt.update_multi_precision(index, weight, grad, state)
        return
    sel = weight.context.xp.asarray(rows)

    def gather(x: Any) -> Any:
        if isinstance(x, NDArray) and x.shape == weight.shape:
            return NDArray._wrap(x._data[sel], x.context)
        return type(x)(map(gather, x)) if isinstance(x, (tuple, list)) else x

    def scatter(full: Any, part: Any) -> None:
        if isinstance(full, NDArray) and part is not full:
            full._data[sel] = part._data
        elif isinstance(full, (tuple, list)):
            for f, p in zip(full, part):
                scatter(f, p)

    part_weight, part_state = gather(weight), gather(state)
    opt.update_multi_precision(index, part_weight, NDArray._wrap(grad._data[sel], grad.context), part_state)
    scatter(weight, part_weight)
    scatter(state, part_state)


class _MXNetArray:
    """Stand-in for `mxnet.ndarray.NDArray` while unpickling: keeps MXNet's raw bytes."""

    def __init__(self, *_args: Any):
        self.raw: bytes | None = None

    def __setstate__(self, state: dict) -> None:
        self.raw = state.get("handle")

    def to_ndarray(self) -> NDArray | None:
        from hybridgraph.nd.serialization import _NONE, _read_record, _Reader
        if self.raw is None:
            return None
        arr = _read_record(_Reader(bytes(self.raw)), 0)
        return None if arr is _NONE else nd.array(arr, dtype=arr.dtype)


_MXNET_MODULES = {
    "mxnet.optimizer.optimizer": __name__, "mxnet.optimizer": __name__, "mxnet.optimizer.contrib": __name__,
    "mxnet.lr_scheduler": _lr_scheduler_module.__name__,
}
# hybridgraph before 0.2 installed its layers as top-level packages (`nd`, `symbol`, `hybrid`);
# states pickled then name those paths
_PRE_NAMESPACE_PACKAGES = {"nd": "hybridgraph.nd", "symbol": "hybridgraph.symbol", "hybrid": "hybridgraph.gluon"}


def _current_module_path(module: str) -> str:
    """The module a pickle's global lives in now: MXNet's and our own old paths mapped to today's."""
    if module in _MXNET_MODULES:
        return _MXNET_MODULES[module]
    top, _, rest = module.partition(".")
    if top in _PRE_NAMESPACE_PACKAGES:
        return _PRE_NAMESPACE_PACKAGES[top] + ("." + rest if rest else "")
    return module


_SAFE_GLOBALS = {
    ("builtins", "bytearray"), ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "complex"),
    ("builtins", "slice"), ("builtins", "range"), ("collections", "OrderedDict"),
    ("hybridgraph.nd.ndarray", "_rebuild"),
    ("numpy", "dtype"), ("numpy", "ndarray"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"), ("copyreg", "_reconstructor"), ("builtins", "object"),
}


class _StatesUnpickler(pickle._Unpickler):  # noqa: SLF001 - the pure-Python unpickler, see below
    """Unpickles optimizer states: only optimizers, schedulers, arrays and plain data.

    The pure-Python unpickler: the C one grows its memo to whatever index a PUT names and
    trusts FRAME sizes, so a mutated file made it allocate gigabytes (found by fuzzing).

    MXNet's class paths are mapped to ours, so `.states` files written by MXNet 1.x
    load too. User-defined optimizer or scheduler classes are allowed when their
    module is already imported.
    """

    def _build_checked(self) -> None:
        """BUILD, except that a numpy dtype keeps the state its type has: numpy's
        dtype.__setstate__ given other values corrupts the dtype (found by fuzzing)."""
        inst = self.stack[-2]
        if isinstance(inst, np.dtype):
            state = self.stack.pop()
            if state != inst.__reduce__()[2]:
                raise pickle.UnpicklingError(f"optimizer states: a state {state!r:.80} that does not "
                                             f"belong to dtype {inst}")
            return
        pickle._Unpickler.load_build(self)  # noqa: SLF001

    dispatch = dict(pickle._Unpickler.dispatch)  # noqa: SLF001
    dispatch[pickle.BUILD[0]] = _build_checked

    def find_class(self, module: str, name: str) -> Any:
        if module == "mxnet.ndarray.ndarray" and name == "NDArray":
            return _MXNetArray
        if module == "__builtin__":  # protocol 0-2 pickles name Python 2's module
            module = "builtins"
        if (module, name) == ("builtins", "bytearray"):
            return _stored_bytearray
        module = _current_module_path(module)
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        mod = sys.modules.get(module)
        obj = getattr(mod, name, None) if mod is not None else None
        if isinstance(obj, type) and issubclass(obj, (Optimizer, _lr_scheduler_module.LRScheduler)):
            return obj
        raise pickle.UnpicklingError(f"optimizer states: refusing to load global '{module}.{name}' (only "
                                     "optimizers, lr schedulers, arrays and plain data are allowed)")


def _stored_bytearray(*args: Any) -> bytearray:
    """`bytearray` as a pickle stores one (from bytes, or text and its encoding), never
    `bytearray(n)`: a 30-byte file must not allocate gigabytes."""
    if not args or (isinstance(args[0], (bytes, str)) and len(args) <= 2):
        return bytearray(*args)
    raise pickle.UnpicklingError(f"optimizer states: bytearray({type(args[0]).__name__}) is refused "
                                 "(only stored bytes are allowed)")


class StatesFormatError(FormatError, pickle.UnpicklingError):
    """Optimizer states that cannot be read (corrupted, truncated or hostile)."""


def _convert_mxnet_arrays(obj: Any) -> Any:
    if isinstance(obj, _MXNetArray):
        return obj.to_ndarray()
    if isinstance(obj, tuple):
        return tuple(_convert_mxnet_arrays(x) for x in obj)
    if isinstance(obj, list):
        return [_convert_mxnet_arrays(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _convert_mxnet_arrays(v) for k, v in obj.items()}
    if isinstance(obj, Optimizer):
        obj.__dict__.update(_convert_mxnet_arrays(obj.__dict__))
    return obj


def _check_pickle(data: bytes) -> None:
    """Walk the opcodes (linear) before unpickling: an unpickler allocates what a counted
    opcode (BINBYTES8, BYTEARRAY8) declares before reading it, so a few bytes could ask
    for gigabytes; genops raises ValueError when the data is shorter than declared."""
    for _ in pickletools.genops(data):
        pass


def loads_states(data: bytes) -> Any:
    """Unpickle optimizer states written by `Updater.get_states` (here or in MXNet 1.x).

    Raises StatesFormatError (an MXNetError and a pickle.UnpicklingError) for bytes that
    are not such states."""
    try:
        _check_pickle(data)
        states = _convert_mxnet_arrays(_StatesUnpickler(io.BytesIO(data)).load())
    except FormatError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, AttributeError, IndexError,
            OverflowError, RecursionError, RuntimeError, SystemError) as exc:  # numpy setstate on junk
        raise StatesFormatError(f"cannot read optimizer states ({len(data)} bytes): "
                                f"{type(exc).__name__}: {str(exc)[:300]}") from None
    kind = states[0] if isinstance(states, tuple) and len(states) == 2 else states
    if not isinstance(kind, dict):
        raise StatesFormatError(f"optimizer states: expected a dict of states by index, got "
                                f"{type(kind).__name__}")
    return states


# pickled optimizer states name the public module, wherever a class is defined
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type):
        _obj.__module__ = __name__

from . import optimizer_contrib as contrib  # noqa: E402 - mx.optimizer.contrib (GroupAdaGrad), after the base classes
sys.modules[f"{__name__}.contrib"] = contrib
contrib.GroupAdaGrad.__module__ = f"{__name__}.contrib"  # pickles name the public module
