"""`mx.kv.create` and `KVStoreBase`: MXNet 1.9.1's key-value store interface.

A KVStore holds one value per key (int or str keys, never both in one store);
`push` sums the values given for a key (over devices, and over workers for a
distributed store) and either stores the sum or hands it to an updater
(`set_optimizer`); `pull` copies the stored value out. `create` picks the
store by MXNet's type names: ``local``, ``device``, ``local_allreduce_*``,
``nccl`` run in one process; ``dist_sync``, ``dist_device_sync`` and
``horovod`` allreduce over MPI (see `dist.py`); ``dist_async`` is refused.
"""
from __future__ import annotations

import warnings
from typing import Any

from hybridgraph.nd import NDArray
from hybridgraph.nd.errors import MXNetError

__all__ = ["KVStoreBase", "TestStore", "create", "create_for_trainer", "create_for_sparse_weights", "normalize_keys"]


def normalize_keys(keys: Any, values: Any, what: str = "value") -> tuple[list, list[list], bool]:
    """Pair every key with its list of arrays, as MXNet's `_ctype_key_value` does.

    Returns ``(keys, per_key_arrays, use_str_keys)``: `keys` may be one key or a
    list, `values` an NDArray, a list of NDArrays (several devices of one key)
    or a list of such (one per key).
    """
    if isinstance(keys, (tuple, list)):
        if not isinstance(values, (tuple, list)) or len(keys) != len(values):
            raise MXNetError(f"kvstore: {len(keys)} keys need a list of {len(keys)} {what}s, got {values!r:.80}")
        out_keys, out_vals, kinds = [], [], set()
        for key, val in zip(keys, values):
            k, v, s = normalize_keys(key, val, what)
            out_keys += k
            out_vals += v
            kinds.add(s)
        if len(kinds) > 1:
            raise MXNetError("kvstore: inconsistent types of keys detected (int and str keys mixed)")
        return out_keys, out_vals, kinds.pop() if kinds else False
    if not isinstance(keys, (int, str)) or isinstance(keys, bool):
        raise MXNetError(f"kvstore: unexpected type for keys: {type(keys)} (expected int or str)")
    if isinstance(values, NDArray):
        return [keys], [[values]], isinstance(keys, str)
    values = list(values)
    for v in values:
        if not isinstance(v, NDArray):
            raise MXNetError(f"kvstore: key {keys!r} expects NDArray {what}s, got {type(v)}")
    return [keys], [values], isinstance(keys, str)


class KVStoreBase:
    """An abstract key-value store interface for data parallel training."""

    OPTIMIZER = "optimizer"
    kv_registry: dict[str, type] = {}

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Broadcast `value` of rank 0 to all ranks, into `out`."""
        raise NotImplementedError()

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Push `value` (summed), then pull the result into `out` (or `value`)."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer: Any) -> None:
        """Register an optimizer: pushed values become gradients of the stored weights."""
        raise NotImplementedError()

    def is_capable(self, capability: str) -> bool:
        """Whether the store supports `capability` (``'optimizer'``)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Save the updater's states to `fname`."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname: str) -> None:
        """Load the updater's states from `fname`."""
        raise NotImplementedError()

    @property
    def type(self) -> str:
        """The type name of this store."""
        raise NotImplementedError()

    @property
    def rank(self) -> int:
        """The rank of this worker, in ``[0, num_workers)``."""
        raise NotImplementedError()

    @property
    def num_workers(self) -> int:
        """The number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass: type) -> type:
        """Register a KVStore class; `create(name)` then builds it by its lower-case class name."""
        assert isinstance(klass, type)
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            old = KVStoreBase.kv_registry[name]
            warnings.warn(f"WARNING: New kvstore {klass.__module__}.{klass.__name__} is overriding existing "
                          f"kvstore {old.__module__}.{old.__name__}", stacklevel=2)
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A key-value store for testing (MXNet's `teststore`): sums without keeping values
    and cannot run an optimizer."""

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        for o in out if isinstance(out, list) else [out]:
            o[:] = value

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        if isinstance(value, NDArray):
            reduced = value
        else:
            ctx = value[0].context
            reduced = value[0].as_in_context(ctx).copy()
            for v in value[1:]:
                reduced += v.as_in_context(ctx)
        targets = ([out] if isinstance(out, NDArray) else out) if out is not None else \
            ([] if isinstance(value, NDArray) else value)
        for o in targets:
            o[:] = reduced.as_in_context(o.context)

    @staticmethod
    def is_capable(capability: str) -> bool:
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError(f"Unknown capability: {capability}")

    @property
    def type(self) -> str:
        return "teststore"

    @property
    def rank(self) -> int:
        return 0

    @property
    def num_workers(self) -> int:
        return 1

    def set_optimizer(self, optimizer: Any) -> None:
        raise NotImplementedError("teststore cannot run an optimizer (update_on_kvstore=False)")

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        raise NotImplementedError("teststore keeps no optimizer states")

    def load_optimizer_states(self, fname: str) -> None:
        raise NotImplementedError("teststore keeps no optimizer states")


def create(name: str = "local") -> KVStoreBase:
    """Create a KVStore by MXNet's type name.

    ``local`` / ``device`` (and any other name without ``dist`` or ``nccl``, as in
    MXNet): one process, values summed over the contexts given. ``dist_sync`` /
    ``dist_device_sync`` / ``horovod``: synchronous allreduce over MPI between the
    workers started by ``mpiexec`` or ``python -m hybridgraph.launch`` (a single
    worker, with a warning, outside a launcher). ``dist_async``: NotImplementedError.
    Registered classes (`KVStoreBase.register`, e.g. ``teststore``) come first.
    """
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if "dist" in name or name == "horovod":
        if "async" in name:
            raise NotImplementedError(
                f"kvstore {name!r}: asynchronous parameter-server training (MXNet's ps-lite servers) is not "
                "built in hybridgraph; use 'dist_sync' (synchronous allreduce over MPI) instead")
        from .dist import DistKVStore
        return DistKVStore(name)
    if "nccl" in name:
        from hybridgraph.nd.backend import num_gpus
        if num_gpus() == 0:
            raise MXNetError(f"kvstore {name!r} needs GPUs (NCCL); none is visible. Use 'device' or 'local'.")
    from .local import KVStore
    return KVStore(name)


def create_for_sparse_weights(kvstore: Any) -> tuple[KVStoreBase, bool]:
    """MXNet's `model._create_sparse_kvstore`: a store is needed (and updates the weights)
    whenever some weight is row_sparse, even on one context."""
    if isinstance(kvstore, KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        kv = create(kvstore)
    else:
        raise TypeError(f"Cannot create '{kvstore}' KVStore with row_sparse parameters. The type must be KVStore "
                        "or str.")
    assert kv.is_capable(KVStoreBase.OPTIMIZER), "KVStore with sparse weight requires optimizer support. " \
        "However, type(kv) does not support optimizer. Please consider other kvstore backends (e.g. dist_device) " \
        "instead."
    return kv, True


def create_for_trainer(kvstore: Any, num_device: int, params: Any) -> tuple[Any, bool]:
    """MXNet's `model._create_kvstore`: the store a Trainer / Module uses, and whether the
    optimizer runs on it (``update_on_kvstore``; env ``MXNET_UPDATE_ON_KVSTORE``, default 1).

    A string type on one device and one process gives no store at all (nothing to sum);
    ``'local'`` with a parameter over 16M elements updates on the contexts instead.
    `params` are Parameters (or NDArrays) used for that size test.
    """
    import os

    import numpy as np

    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore and kvstore.lower() != "horovod":
            kv = None
        else:
            kv = create(kvstore)
            if kvstore == "local" and params:
                max_size = max(int(np.prod(p.shape or ())) for p in params)
                if max_size > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError("kvstore must be KVStore, str or None")
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= kv.is_capable(KVStoreBase.OPTIMIZER)
    return kv, update_on_kvstore
