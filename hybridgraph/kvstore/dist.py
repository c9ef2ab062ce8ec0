"""The distributed KVStore (``dist_sync``, ``dist_device_sync``, ``horovod``) over MPI.

MXNet 1.9.1's dist_sync sends each worker's (device-summed) gradient to
parameter servers, which sum over the workers and apply the optimizer. Here
there are no servers: every worker allreduces the sums (MPI, in place, in
buckets of ``HYBRIDGRAPH_KVSTORE_BUCKET_MB`` megabytes, default 4, all buckets
in flight together) and runs the same updater on the same total, so every
worker's copy of the store stays equal to the one a server would hold. `init`
and `broadcast` take rank 0's values. With 2-bit compression each worker
quantizes its sum with its own residual, the packed codes (16x smaller) are
allgathered and every worker dequantizes and adds them, as MXNet's servers do.

Communication overlaps the backward pass (`overlap.py`): after the first push the
store knows which gradient buffers feed which bucket, and during each backward a
bucket's allreduce starts as soon as its gradients are final (env
``HYBRIDGRAPH_KVSTORE_OVERLAP=0`` turns this off; compressed pushes never overlap).
`comm_seconds` measures the time spent waiting for collectives, i.e. the
communication not hidden behind computation.
Outside a launcher the store is a single worker, with a warning.
"""
from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from hybridgraph.nd import NDArray
from hybridgraph.nd.errors import MXNetError

from .comm import MPIComm, launcher_env
from .local import KVStore
from .nccl import NcclComm, nccl_api, on_gpus, reduce_devices
from .overlap import OverlapPlan, usable

__all__ = ["DistKVStore"]

ENV_BUCKET = "HYBRIDGRAPH_KVSTORE_BUCKET_MB"
ENV_OVERLAP = "HYBRIDGRAPH_KVSTORE_OVERLAP"


class DistKVStore(KVStore):
    """A synchronous data-parallel store across the workers of an MPI job.

    Parameters
    ----------
    name : str
        ``'dist_sync'``, ``'dist_device_sync'``, ``'dist_sync_device'`` or ``'horovod'``.
    timeout : float, optional
        Seconds a collective waits for the other workers before failing (default: env
        ``HYBRIDGRAPH_KVSTORE_TIMEOUT`` or 60).
    """

    def __init__(self, name: str = "dist_sync", timeout: float | None = None):
        super().__init__(name)
        env = launcher_env()
        self._comm: MPIComm | None = None
        if env is None:
            warnings.warn(f"kvstore {name!r}: not started by an MPI launcher (mpiexec, or python -m "
                          "hybridgraph.launch -n N), so this process trains as a single worker", stacklevel=3)
        elif env[1] > 1:
            self._comm = MPIComm(timeout)
            if self._comm.size != env[1]:
                raise MXNetError(f"kvstore {name!r}: the launcher ({env[2]}) announced {env[1]} workers but MPI "
                                 f"sees {self._comm.size}; is mpi4py built against the MPI of that launcher?")
        mb = float(os.getenv(ENV_BUCKET, "4"))
        self._bucket_bytes = max(1, int(mb * 1024 * 1024))
        self._overlap = os.getenv(ENV_OVERLAP, "1") != "0"
        self._plan: OverlapPlan | None = None
        self._pushing: tuple | None = None
        self._nccl: NcclComm | None = None

    @property
    def rank(self) -> int:
        return self._comm.rank if self._comm is not None else 0

    @property
    def num_workers(self) -> int:
        return self._comm.size if self._comm is not None else 1

    @property
    def timeout(self) -> float | None:
        """Seconds a collective may wait for the other workers (None on a single worker)."""
        return self._comm.timeout if self._comm is not None else None

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        if self._comm is not None:
            self._comm.timeout = float(seconds)

    @property
    def comm_seconds(self) -> float:
        """Seconds spent so far waiting for collectives (allreduce, broadcast, barrier)."""
        return self._comm.comm_seconds if self._comm is not None else 0.0

    def _comm_for(self, arrays: list) -> Any:
        """The communicator that reduces `arrays`: NCCL (made on first use, on the GPU of the
        first array) when they all live on GPUs and cupy has NCCL, MPI otherwise."""
        if self._comm is None or not on_gpus(arrays):
            return self._comm
        if self._nccl is None:
            api = nccl_api()
            if api is None:
                return self._comm
            self._nccl = NcclComm(self._comm, arrays[0].context.device_id, api)
        return self._nccl

    # -- the hooks of the local store -----------------------------------------------------------------
    def _sync_init(self, fresh: dict) -> None:
        if self._comm is None or not fresh:
            return
        keys = list(fresh)
        shapes = self._comm.bcast_object([(k, fresh[k].shape, np.dtype(fresh[k].dtype).name) for k in keys],
                                         f"init of keys {keys[:4]}")
        mine = [(k, fresh[k].shape, np.dtype(fresh[k].dtype).name) for k in keys]
        if shapes != mine:
            raise MXNetError(f"rank {self.rank}: kv.init/broadcast keys, shapes or dtypes differ from rank 0's "
                             f"(rank 0: {shapes[:3]}..., here: {mine[:3]}...); every worker must init the same keys")
        arrays = [fresh[k] for k in keys]
        self._bucketed(arrays, lambda comm, bufs: comm.bcast_(bufs, f"broadcast of keys {keys[:4]} from rank 0"))
        for k, arr in zip(keys, arrays):
            fresh[k] = arr

    def _merge_devices(self, key: Any, vals: list, stored: NDArray) -> NDArray:
        if "device" in self.type:
            total = reduce_devices(vals, stored.context)   # NCCL between this process's GPUs
            if total is not None:
                return total
        total = vals[0].copyto(stored.context)
        for v in vals[1:]:
            total += v.as_in_context(stored.context)
        return total

    def _push_pairs(self, keys: list, values: list[list]) -> None:
        self._pushing = (keys, values)
        try:
            super()._push_pairs(keys, values)
        finally:
            self._pushing = None
        plan = self._plan
        if self._overlap and self._comm is not None and self._compression is None and usable(keys, values) \
                and (plan is None or not plan.matches(keys, values)):
            if plan is not None:
                plan.close()
            self._plan = OverlapPlan(self._comm_for([v for vals in values for v in vals]), keys, values,
                                     self._bucket_bytes)

    def _reduce(self, keys: list, merged: list) -> None:
        if self._compression is not None:
            self._reduce_compressed(keys, merged)
            return
        if self._comm is None:
            return
        plan = self._plan
        if plan is not None and self._pushing is not None and plan.matches(*self._pushing):
            sums = plan.finish()   # started during backward where the gradients allowed
            for i, k in enumerate(keys):
                merged[i] = plan.comm.wrap(sums[k], merged[i].context)
            return
        if plan is not None and plan.next:
            plan.finish()   # another push after a backward: keep every worker's collectives in step
        self._bucketed(merged, lambda comm, bufs: comm.allreduce_(bufs, f"allreduce of keys {keys[:4]}"))

    def _reduce_compressed(self, keys: list, merged: list) -> None:
        comp = self._compression
        sizes = [m.size for m in merged]
        packed = np.concatenate([comp.quantize((k, "worker"), m.asnumpy()) for k, m in zip(keys, merged)])
        everyone = packed[None] if self._comm is None else \
            self._comm.allgather(packed, f"allgather of 2-bit codes of keys {keys[:4]}")
        totals = [np.zeros(n, dtype=np.float32) for n in sizes]
        for row in everyone:
            offset = 0
            for total, n in zip(totals, sizes):
                nbytes = comp.packed_size(n)
                total += comp.dequantize(row[offset:offset + nbytes], n)
                offset += nbytes
        for i, (m, total) in enumerate(zip(merged, totals)):
            merged[i] = NDArray(total.reshape(m.shape).astype(m.dtype, copy=False), ctx=m.context)

    def _bucketed(self, arrays: list, collective: Any) -> None:
        """Run ``collective(comm, buffers)`` on flat buffers of up to the bucket size (one dtype
        each; in host memory for MPI, on the GPU for NCCL), then replace every array of
        `arrays` by its part of the result."""
        comm = self._comm_for(arrays)
        groups: dict[str, list[int]] = {}
        for i, a in enumerate(arrays):
            groups.setdefault(np.dtype(a.dtype).name, []).append(i)
        buckets: list[tuple[np.ndarray, list[int]]] = []
        for dtype, idx in groups.items():
            start = 0
            itemsize = np.dtype(dtype).itemsize
            while start < len(idx):
                end, nbytes = start, 0
                while end < len(idx) and (end == start or nbytes + arrays[idx[end]].size * itemsize
                                          <= self._bucket_bytes):
                    nbytes += arrays[idx[end]].size * itemsize
                    end += 1
                members = idx[start:end]
                with comm.device():
                    flat = comm.xp.concatenate([comm.local(arrays[i]).reshape(-1) for i in members])
                buckets.append((flat, members))
                start = end
        collective(comm, [flat for flat, _ in buckets])
        for flat, members in buckets:
            offset = 0
            for i in members:
                a = arrays[i]
                out = comm.wrap(flat[offset:offset + a.size].reshape(a.shape), a.context)
                arrays[i] = out if a.stype == "default" else out.tostype(a.stype)
                offset += a.size

    def _after_checkpoint(self) -> None:
        self.barrier()

    # -- API ------------------------------------------------------------------------------------------
    def barrier(self) -> None:
        """Wait until every worker reaches this barrier; fails after the timeout naming the
        ranks waited for, or at once when a worker reported a failure."""
        if self._comm is not None:
            self._comm.barrier("barrier")

    _barrier = barrier

    def set_gradient_compression(self, compression_params: dict) -> None:
        """2-bit compression of what each worker sends (its device-summed gradient)."""
        from .compression import GradientCompression
        self._compression = GradientCompression(compression_params)
        if self._plan is not None:   # compressed pushes are not overlapped
            self._plan.close()
            self._plan = None

    def load_optimizer_states(self, fname: str) -> None:
        """Read updater states (rank 0's file, after a barrier so that it is complete)."""
        self.barrier()
        super().load_optimizer_states(fname)
