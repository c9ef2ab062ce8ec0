"""Key-value stores for data-parallel training (`mx.kv`, `mx.kvstore`).

`create(name)` returns an in-process store (`KVStore`: ``local``, ``device``)
or an MPI-backed one (`DistKVStore`: ``dist_sync``, ``dist_device_sync``,
``horovod``); see README "Distributed training".
"""
from .base import KVStoreBase, TestStore, create, create_for_sparse_weights, create_for_trainer
from .local import KVStore

__all__ = ["KVStore", "KVStoreBase", "TestStore", "create", "create_for_trainer", "create_for_sparse_weights",
           "DistKVStore"]


def __getattr__(name: str):
    """`DistKVStore` is imported on first use (its module imports mpi4py lazily anyway)."""
    if name == "DistKVStore":
        from .dist import DistKVStore
        return DistKVStore
    raise AttributeError(f"module 'hybridgraph.kvstore' has no attribute {name!r}")
