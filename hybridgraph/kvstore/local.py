"""The in-process KVStore (MXNet's `KVStoreLocal`: types ``local``, ``device``, ...).

Values pushed for a key from several contexts are summed on the first one;
without an updater the sum replaces the stored value, with one
(`set_optimizer` / `_set_updater`) ``updater(key, sum, stored)`` applies it.
`pull` copies the stored value to every output. ``device`` and ``nccl`` types sum values
on several GPUs with NCCL (`nccl.py`) when cupy has it. Gradient compression
(``device`` types only, as in MXNet) quantizes each context's value with its
own residual before the sum. The distributed store (`dist.py`) reuses all of
this and only adds the allreduce between workers to `_reduce`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hybridgraph.nd import NDArray, autograd
from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.serialization import atomic_write

from .base import KVStoreBase, normalize_keys
from .compression import GradientCompression
from .nccl import reduce_devices

__all__ = ["KVStore"]


class KVStore(KVStoreBase):
    """A key-value store over the contexts of one process.

    Parameters
    ----------
    name : str
        The type name (`type` returns it), e.g. ``'local'`` or ``'device'``.
    """

    def __init__(self, name: str = "local"):
        self._type = name
        self._store: dict[Any, NDArray] = {}
        self._str_keys: bool | None = None
        self._updater: Any = None
        self._batched_updater = False
        self._compression: GradientCompression | None = None

    # -- description ----------------------------------------------------------------------------------
    @property
    def type(self) -> str:
        return self._type

    @property
    def rank(self) -> int:
        return 0

    @property
    def num_workers(self) -> int:
        return 1

    def is_capable(self, capability: str) -> bool:
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError(f"Unknown capability: {capability}")

    def __repr__(self) -> str:
        return f"<KVStore {self.type!r} rank {self.rank}/{self.num_workers}, {len(self._store)} keys>"

    # -- keys -----------------------------------------------------------------------------------------
    def _pairs(self, key: Any, value: Any, what: str = "value") -> tuple[list, list[list]]:
        keys, values, str_keys = normalize_keys(key, value, what)
        if self._str_keys is None:
            self._str_keys = str_keys
        elif keys and self._str_keys != str_keys:
            kind = "str" if self._str_keys else "int"
            raise MXNetError(f"kvstore: this store uses {kind} keys; got {keys[0]!r}. A KVStore accepts either "
                             "int or str keys, not both")
        return keys, values

    def _stored(self, key: Any) -> NDArray:
        try:
            return self._store[key]
        except KeyError:
            raise MXNetError(f"kvstore: key {key!r} has not been initialized; call kv.init({key!r}, value) "
                             "(or kv.broadcast) first") from None

    # -- the API --------------------------------------------------------------------------------------
    def init(self, key: Any, value: Any) -> None:
        """Initialize keys with values (a key may be initialized once; the first value of a
        list is used). On a distributed store rank 0's value wins."""
        keys, values = self._pairs(key, value)
        self._init_pairs(keys, values)

    def _init_pairs(self, keys: list, values: list[list]) -> None:
        fresh = {}
        for k, vals in zip(keys, values):
            if k in self._store or k in fresh:
                raise MXNetError(f"kvstore: duplicate init of key {k!r}. Please double check if you called kv.init "
                                 "or kv.broadcast with this key multiple times")
            fresh[k] = vals[0].copyto(vals[0].context)
        self._sync_init(fresh)
        self._store.update(fresh)

    def _sync_init(self, fresh: dict) -> None:
        """Hook of the distributed store: make rank 0's initial values everyone's."""

    def push(self, key: Any, value: Any, priority: int = 0) -> None:  # noqa: ARG002 - priority is ignored
        """Push values: summed over the list given for each key (and over workers), then
        stored or handed to the updater. `priority` is accepted and ignored."""
        keys, values = self._pairs(key, value)
        self._push_pairs(keys, values)

    def _push_pairs(self, keys: list, values: list[list]) -> None:
        merged_keys: list = []
        merged_vals: list = []
        for k, vals in self._group(keys, values):
            stored = self._stored(k)
            for v in vals:
                if v.shape != stored.shape:
                    raise MXNetError(f"kvstore: pushed value of key {k!r} has shape {v.shape}, the stored value "
                                     f"{stored.shape}")
            merged_keys.append(k)
            merged_vals.append(self._merge_devices(k, vals, stored))
        self._reduce(merged_keys, merged_vals)
        stored = [self._store[k] for k in merged_keys]
        if self._updater is None:
            for merged, target in zip(merged_vals, stored):
                _assign(target, merged)
        elif self._batched_updater and merged_keys:
            self._updater(merged_keys, merged_vals, stored)  # one call: the optimizer may fuse the updates
        else:
            for k, merged, target in zip(merged_keys, merged_vals, stored):
                self._updater(k, merged, target)

    @staticmethod
    def _group(keys: list, values: list[list]) -> list:
        """Merge repeated keys of one call into one list of values (MXNet groups them too)."""
        grouped: dict = {}
        for k, vals in zip(keys, values):
            grouped.setdefault(k, []).extend(vals)
        return list(grouped.items())

    def _merge_devices(self, key: Any, vals: list, stored: NDArray) -> NDArray:
        """Sum one key's values over the contexts, after compressing each (device types)."""
        ctx = stored.context
        comp = self._compression if "device" in self.type else None
        if comp is not None:
            total = np.zeros(stored.shape, dtype=np.float32)
            for i, v in enumerate(vals):
                total += comp.compress((key, i), v.asnumpy())
            return NDArray(total.astype(stored.dtype, copy=False), ctx=ctx)
        if "device" in self.type or "nccl" in self.type:
            total = reduce_devices(vals, ctx)   # one NCCL group when the values live on several GPUs
            if total is not None:
                return total
        total = vals[0].copyto(ctx)  # a new array: the pushed values are never written
        for v in vals[1:]:
            total += v.as_in_context(ctx)
        return total

    def _reduce(self, keys: list, merged: list) -> None:
        """Hook of the distributed store: sum `merged` (in place) over the workers."""

    def pull(self, key: Any, out: Any = None, priority: int = 0, ignore_sparse: bool = True) -> None:  # noqa: ARG002
        """Copy the stored values of the keys into `out` (one array or a list per key).

        Sparse outputs are skipped (left unchanged) unless ``ignore_sparse=False``, as in
        MXNet; use `row_sparse_pull` to pull some rows of a row_sparse value."""
        if out is None:
            raise MXNetError("kvstore.pull needs `out`")
        keys, outs = self._pairs(key, out, "output")
        with autograd.pause():   # a store's writes are never recorded (MXNet: an engine copy), even
            for k, targets in zip(keys, outs):   # into a parameter pulled inside a recorded forward
                stored = self._stored(k)
                for o in targets:
                    if o.stype == "default":
                        if not _holds(o, stored):
                            stored.copyto(o)
                    elif not ignore_sparse:
                        _assign(o, stored)
    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """`push` then `pull` in one call; the result goes to `out`, or back into `value`."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Initialize the keys with `value` (rank 0's on a distributed store) and pull into `out`."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key: Any, out: Any = None, priority: int = 0, row_ids: Any = None) -> None:  # noqa: ARG002
        """Pull only the rows `row_ids` of each value into RowSparseNDArray outputs (MXNet's
        pull of row-sparse weights): `out` then stores exactly the requested rows (unsorted,
        repeats allowed), zeros elsewhere. One `row_ids` for a list of outputs applies to all;
        a dense `out` is refused, as in MXNet."""
        from hybridgraph.nd.sparse import RowSparseNDArray
        if out is None or row_ids is None:
            raise MXNetError("row_sparse_pull needs `out` and `row_ids`")
        ids = [row_ids] if isinstance(row_ids, NDArray) else row_ids
        if not isinstance(ids, list):
            raise MXNetError(f"row_sparse_pull: row_ids should be an NDArray or a list of NDArrays, got {type(ids)}")
        rest: list = []
        if len(ids) == 1 and isinstance(out, list):   # one row_ids for all outputs: pull once, copy
            out, rest = [out[0]], out[1:]
        keys, outs = self._pairs(key, out, "output")
        _, id_lists, _ = normalize_keys(key, ids, "row_ids")
        ids = [i for group in id_lists for i in group]
        flat_outs = [o for targets in outs for o in targets]
        for o in flat_outs + rest:
            if not isinstance(o, RowSparseNDArray):
                raise MXNetError(f"row_sparse_pull: every `out` must be a RowSparseNDArray (storage type "
                                 f"'row_sparse'), got storage type {o.stype!r}; use pull for dense outputs")
        if len(ids) != len(flat_outs):
            raise MXNetError(f"row_sparse_pull: {len(ids)} row_ids for {len(flat_outs)} outputs")
        with autograd.pause():   # never recorded, as `pull`
            self._pull_rows(keys, outs, iter(zip(flat_outs, ids)))
            for o in rest:
                _assign(o, flat_outs[0])

    def _pull_rows(self, keys: list, outs: list, pairs: Any) -> None:
        from hybridgraph.nd.sparse import RowSparseNDArray, retain
        for k, targets in zip(keys, outs):
            stored = self._stored(k)
            if not isinstance(stored, RowSparseNDArray):
                raise MXNetError(f"row_sparse_pull: key {k!r} holds a value of storage type {stored.stype!r}; "
                                 "only keys initialized with a row_sparse value can be pulled by rows (use pull)")
            value = stored
            for _ in targets:
                o, rid = next(pairs)
                if not isinstance(rid, NDArray):
                    raise MXNetError(f"row_sparse_pull: row_ids must be NDArrays, got {type(rid)}")
                if rid.size and (rid.asnumpy().min() < 0 or rid.asnumpy().max() >= value.shape[0]):
                    raise MXNetError(f"row_sparse_pull: row_ids of key {k!r} must be in [0, {value.shape[0]})")
                _assign(o, retain(value, rid))

    # -- optimizer and compression ------------------------------------------------------------------
    def set_gradient_compression(self, compression_params: dict) -> None:
        """2-bit gradient compression (``{'type': '2bit', 'threshold': 0.5}``) of pushed values;
        for ``device`` and ``dist`` types only, as in MXNet."""
        if "device" not in self.type and "dist" not in self.type:
            raise MXNetError("Gradient compression is not supported for this type of kvstore")
        self._compression = GradientCompression(compression_params)

    def set_optimizer(self, optimizer: Any) -> None:
        """Update stored values with `optimizer` on every push (every worker runs the same
        update on the same summed gradient, so the copies stay equal)."""
        from hybridgraph.gluon import optimizer as opt
        self._set_updater(opt.get_updater(optimizer))
        self._batched_updater = True  # an optimizer's Updater takes lists of keys, gradients and weights

    def _set_updater(self, updater: Any) -> None:
        """Call ``updater(key, pushed_sum, stored)`` on every push instead of storing the sum."""
        self._updater = updater
        self._batched_updater = False

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the updater's states to `fname` (atomically; by rank 0 only on a distributed store)."""
        assert self._updater is not None, "Cannot save states for distributed training"
        payload = self._updater.get_states(dump_optimizer)
        if self.rank == 0:
            atomic_write(fname, payload)
        self._after_checkpoint()

    def _after_checkpoint(self) -> None:
        """Hook of the distributed store: wait until rank 0 has written."""

    def load_optimizer_states(self, fname: str) -> None:
        """Read updater states written by `save_optimizer_states`."""
        assert self._updater is not None, "Cannot load states for distributed training"
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())

    def barrier(self) -> None:
        """Wait for every worker (nothing to wait for in one process)."""

    _barrier = barrier


def _holds(out: NDArray, value: NDArray) -> bool:
    """Whether `out`, an array a recorded graph already uses, holds `value` exactly. A Trainer
    that meets a deferred parameter inside a recorded forward broadcasts every context its
    own initial value again: MXNet's copy changes nothing, so it is skipped here (a write,
    even of equal values, would invalidate the recorded graph's use of it)."""
    if out._ag is None or autograd.live_entry(out) is None or out.shape != value.shape or out.dtype != value.dtype:
        return False
    theirs = value._data if value.context == out.context else value.as_in_context(out.context)._data
    return bool((out._data == theirs).all())


def _assign(out: NDArray, value: NDArray) -> None:
    """Write `value` (dense or sparse) into `out`, which takes its stored rows if it is sparse."""
    if out.stype == "default":
        value.copyto(out)
        return
    if out.context != value.context:
        value = value.copyto(out.context)
    out[:] = value
