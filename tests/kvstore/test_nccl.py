"""The KVStore's NCCL path (hybridgraph/kvstore/nccl.py).

Without a GPU every line runs against the cupy/NCCL test double (`fake_nccl.py`), in
process (the ``device`` store's NCCL group, fallbacks, timeouts) and over `mpiexec -n 2`
(``dist_device_sync`` on GPU contexts trains exactly as the CPU path does). The test
marked ``gpu`` runs the real cupy NCCL on a GPU machine.
"""
from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.kvstore import nccl as knccl
from hybridgraph.kvstore.comm import WorkerFailed, WorkerTimeout
from hybridgraph.nd import backend

from . import dist_worker, fake_nccl

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_gpus():
    fake = fake_nccl.install()
    yield fake
    fake_nccl.uninstall()


def _device_push(vals: list, stored_ctx, name: str = "device") -> np.ndarray:
    kv = mx.kv.create(name)
    kv.init("w", mx.nd.zeros(vals[0].shape, ctx=stored_ctx, dtype=vals[0].dtype))
    kv.push("w", vals)
    out = mx.nd.zeros(vals[0].shape, ctx=stored_ctx, dtype=vals[0].dtype)
    kv.pull("w", out=out)
    return out.asnumpy()


def test_device_store_sums_gpus_in_one_nccl_group(fake_gpus):
    vals = [mx.nd.ones((2, 3), ctx=mx.gpu(0)), mx.nd.arange(6, ctx=mx.gpu(1)).reshape((2, 3))]
    got = _device_push(vals, mx.gpu(1))
    np.testing.assert_array_equal(got, 1 + np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(vals[0].asnumpy(), 1)   # the pushed values are not written
    calls = fake_nccl.CALLS
    assert fake_nccl.names()[:5] == ["initAll", "groupStart", "group.allReduce", "group.allReduce", "groupEnd"]
    assert calls[0][1] == (0, 1)
    assert [c[1] for c in calls if c[0] == "group.allReduce"] == [(0, 6, 7, True), (1, 6, 7, True)]   # in place
    assert ("stream.wait_event", (1, 0)) in calls   # the stored GPU's stream waits for the other GPU's part
    fake_nccl.CALLS.clear()
    _device_push([mx.nd.ones((4,), ctx=mx.gpu(0)), mx.nd.ones((4,), ctx=mx.gpu(1))], mx.gpu(0), "nccl")
    assert "initAll" not in fake_nccl.names()   # the clique of (gpu 0, gpu 1) is made once
    assert fake_nccl.names().count("group.allReduce") == 2   # MXNet's 'nccl' type too


def test_gluon_trainer_on_two_gpus_uses_nccl_and_matches_cpu(fake_gpus):
    def train(ctxs):
        mx.random.seed(1)
        net = mx.gluon.nn.Dense(3, in_units=4)
        net.initialize(mx.init.Constant(0.5), ctx=ctxs)
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}, kvstore="device")
        for step in range(3):
            with mx.autograd.record():
                losses = [(net(mx.nd.ones((2, 4), ctx=c) * (i + step)) ** 2).sum() for i, c in enumerate(ctxs)]
            mx.autograd.backward(losses)
            trainer.step(4)
        return net.weight.data(ctxs[-1]).asnumpy()

    on_gpus = train([mx.gpu(0), mx.gpu(1)])
    assert fake_nccl.names().count("groupEnd") == 3 * 2   # weight and bias, every step
    fake_nccl.CALLS.clear()
    np.testing.assert_allclose(on_gpus, train([mx.cpu(0), mx.cpu(1)]), rtol=1e-6)
    assert fake_nccl.CALLS == []


@pytest.mark.parametrize("case", ["same_gpu", "bool", "turned_off", "mixed", "no_nccl", "nccl_unavailable"])
def test_device_store_falls_back_to_summation(fake_gpus, monkeypatch, case):
    shape, dtype, ctxs = (3,), "float32", [mx.gpu(0), mx.gpu(1)]
    if case == "same_gpu":
        ctxs = [mx.gpu(0), mx.gpu(0)]
    elif case == "bool":
        dtype = "bool"
    elif case == "turned_off":
        monkeypatch.setenv(knccl.ENV_NCCL, "0")
    elif case == "mixed":
        ctxs = [mx.gpu(0), mx.cpu(0)]
    elif case == "no_nccl":   # a cupy without cupy.cuda.nccl
        monkeypatch.delattr(fake_gpus.cuda, "nccl")
    else:
        monkeypatch.setattr(fake_nccl.nccl, "available", False)
    vals = [mx.nd.ones(shape, ctx=c, dtype=dtype) for c in ctxs]
    got = _device_push(vals, ctxs[0])
    np.testing.assert_array_equal(got, np.ones(shape, dtype=dtype) + np.ones(shape, dtype=dtype))
    assert fake_nccl.CALLS == []


def test_cpu_contexts_never_import_cupy(monkeypatch):
    assert backend._cupy is None
    monkeypatch.setattr(backend, "_import_cupy", lambda: pytest.fail("cupy imported on the CPU path"))
    assert knccl.nccl_api() is None
    got = _device_push([mx.nd.ones((3,)), mx.nd.ones((3,), ctx=mx.cpu(1))], mx.cpu(0))
    np.testing.assert_array_equal(got, 2)
    assert knccl.reduce_devices([mx.nd.ones((3,)), mx.nd.ones((3,), ctx=mx.cpu(1))], mx.cpu(0)) is None


class _StubMPI:
    """What NcclComm uses of MPIComm, for in-process tests."""

    def __init__(self, rank: int = 0, size: int = 2, failure: Exception | None = None):
        self.rank, self.size, self.timeout, self.comm_seconds = rank, size, 0.2, 0.0
        self.failure = failure
        self.sent: list = []

    def bcast_object(self, obj, what, root=0):
        self.sent.append((obj, what))
        return obj if self.rank == 0 else ("uid", "of rank 0")

    def check_failures(self):
        if self.failure is not None:
            raise self.failure


class _StubCommunicator:
    def __init__(self, ndev, uid, rank):
        self.args, self.log = (ndev, uid, rank), []
        self.async_error: Exception | None = None

    def check_async_error(self):
        if self.async_error is not None:
            raise self.async_error

    def abort(self):
        self.log.append("abort")

    def destroy(self):
        self.log.append("destroy")


class _NeverDone:
    done = False


def _nccl_comm(monkeypatch, fake, **stub) -> knccl.NcclComm:
    monkeypatch.setattr(fake_nccl.nccl, "NcclCommunicator", _StubCommunicator)
    return knccl.NcclComm(_StubMPI(**stub), 1, (fake, fake.cuda.nccl))


def test_unique_id_comes_from_rank0(fake_gpus, monkeypatch):
    comm = _nccl_comm(monkeypatch, fake_gpus, rank=1)
    assert comm.comm.args == (2, ("uid", "of rank 0"), 1) and comm.ctx == mx.gpu(1)
    assert "get_unique_id" not in fake_nccl.names()   # only rank 0 makes it
    comm0 = _nccl_comm(monkeypatch, fake_gpus, rank=0)
    assert fake_nccl.names() == ["get_unique_id"] and len(comm0.comm.args[1]) == 128
    comm0.close()
    assert comm0.comm.log == ["destroy"]


def test_nccl_comm_collectives_on_its_gpu(fake_gpus):
    """A one-rank communicator on gpu(1): values from another GPU are copied to it, buffers are
    reduced and broadcast in place on its current stream, results go back to any context."""
    comm = knccl.NcclComm(_StubMPI(size=1), 1, knccl.nccl_api())
    assert comm.xp is fake_gpus
    with comm.device():
        buf = comm.xp.concatenate([comm.local(mx.nd.arange(4, ctx=mx.gpu(0))),
                                   comm.local(mx.nd.ones((2,), ctx=mx.gpu(1)))])
    comm.allreduce_([buf], "allreduce")
    comm.bcast_([buf], "bcast", root=0)
    assert [c for c in fake_nccl.CALLS if c[0] in ("allReduce", "bcast")] == [("allReduce", (6, 7, True)),
                                                                          ("bcast", (6, 7, 0))]
    assert fake_nccl.CALLS[0] == ("get_unique_id", None) and ("NcclCommunicator", (1, 0, 1)) in fake_nccl.CALLS
    back = comm.wrap(buf[:4], mx.gpu(0))
    assert back.context == mx.gpu(0) and comm.wrap(buf, mx.gpu(1)).context == mx.gpu(1)
    np.testing.assert_array_equal(back.asnumpy(), np.arange(4))
    assert comm.mpi.comm_seconds > 0


def test_nccl_wait_times_out_naming_the_ranks_and_aborts(fake_gpus, monkeypatch):
    comm = _nccl_comm(monkeypatch, fake_gpus)
    with pytest.raises(WorkerTimeout, match=r"rank 0: allreduce of x \(NCCL\) did not complete within 0.2 s; "
                                            r"no answer from rank\(s\) 1"):
        comm.wait([_NeverDone()], "allreduce of x")
    assert comm.comm.log == ["abort"]


def test_nccl_wait_fails_on_async_error_or_failure_report(fake_gpus, monkeypatch):
    comm = _nccl_comm(monkeypatch, fake_gpus)
    comm.comm.async_error = RuntimeError("NCCL_ERROR_REMOTE_ERROR")
    with pytest.raises(WorkerFailed, match="rank 0: bcast of y failed in NCCL: NCCL_ERROR_REMOTE_ERROR"):
        comm.wait([_NeverDone()], "bcast of y")
    assert comm.comm.log == ["abort"]
    report = WorkerFailed("rank 0: worker rank 1 failed: ValueError: boom")
    comm = _nccl_comm(monkeypatch, fake_gpus, failure=report)
    with pytest.raises(WorkerFailed) as err:
        comm.wait([_NeverDone()], "allreduce")
    assert err.value is report and comm.comm.log == ["abort"]


# -- two workers over mpiexec, NCCL (the double) between their GPUs -----------------------------------------------
MPIEXEC = shutil.which("mpiexec", path=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
SCENARIOS = "api,mlp,mlp_overlap,mlp_stale,init_differs"


@pytest.fixture(scope="module")
def two_gpu_workers(tmp_path_factory):
    pytest.importorskip("mpi4py", reason="distributed kvstore tests need mpi4py (pip install 'hybridgraph[dist]')")
    if MPIEXEC is None:
        pytest.skip("no mpiexec (pip install mpich)")
    outdir = tmp_path_factory.mktemp("nccl")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               FAKE_NCCL="1", KV_TYPE="dist_device_sync")
    for var in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"):
        env.pop(var, None)
    cmd = [sys.executable, "-m", "hybridgraph.launch", "-n", "2", "--mpiexec", MPIEXEC, sys.executable,
           str(ROOT / "tests" / "kvstore" / "dist_worker.py"), SCENARIOS, str(outdir)]
    proc = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return outdir


def _load(outdir: Path, scenario: str, rank: int) -> tuple[dict, collections.Counter]:
    got = dict(np.load(outdir / f"{scenario}_rank{rank}.npz"))
    return got, collections.Counter(got.pop("nccl_calls").tolist())


def test_two_gpu_workers_store_semantics_over_nccl(two_gpu_workers):
    for rank in (0, 1):
        got, calls = _load(two_gpu_workers, "api", rank)
        np.testing.assert_array_equal(got["init"], 10)               # rank 0's value, broadcast by NCCL
        np.testing.assert_array_equal(got["push"], 5)                # NCCL group over 2 GPUs, then the workers
        np.testing.assert_array_equal(got["broadcast"], [np.arange(5)] * 2)
        np.testing.assert_array_equal(got["pushpull"], [3, 3])
        np.testing.assert_allclose(got["optimizer"], 1 - 0.5 * 3)
        assert got["rank_size"].tolist() == [rank, 2]
        # one communicator per store, its unique id made by rank 0 only; init by bcast, pushes by allReduce
        assert calls["get_unique_id"] == (calls["NcclCommunicator"] if rank == 0 else 0)
        assert calls["NcclCommunicator"] == 4 and calls["bcast"] >= 4 and calls["allReduce"] >= 3
        assert calls["initAll"] == 1 and calls["groupEnd"] == 1 and calls["group.allReduce"] == 2


@pytest.mark.parametrize("kind", ["mlp", "mlp_overlap", "mlp_stale", "init_differs"])
def test_two_gpu_workers_train_like_the_cpu_path(two_gpu_workers, kind):
    """Training on the (double's) GPUs with NCCL gives what MPI on the CPU gives: the one-worker
    run on the whole batch; overlapped buckets start during backward here too."""
    if kind == "init_differs":
        ref, _ = _load(two_gpu_workers, kind, 0)
    else:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = dist_worker.params_of(dist_worker.train("mlp", mx.kv.create("dist_sync"), 0, 1))
    for rank in (0, 1):
        got, calls = _load(two_gpu_workers, kind, rank)
        started = got.pop("started_early", None)
        if started is not None:
            assert len(started) == dist_worker.STEPS - 1 and (started == len(ref) - 1).all(), started
        assert calls["allReduce"] >= (dist_worker.STEPS if kind != "init_differs" else 1)
        assert calls["bcast"] >= 1 and "abort" not in calls
        for name in ref:
            np.testing.assert_allclose(got[name], ref[name], rtol=1e-5, atol=1e-6, err_msg=f"{name} on rank {rank}")


# -- the real thing ---------------------------------------------------------------------------------------------
def _real_nccl():
    try:
        import cupy
        from cupy.cuda import nccl
    except ImportError as err:
        pytest.skip(f"needs cupy with NCCL and a GPU ({err})")
    if cupy.cuda.runtime.getDeviceCount() < 1 or not getattr(nccl, "available", True):
        pytest.skip("needs a GPU and cupy built with NCCL")
    return cupy, nccl


@pytest.mark.gpu
def test_real_nccl_on_gpus():
    """On a GPU machine: a one-rank NCCL communicator allreduces and broadcasts cupy buffers in
    place, and with two or more GPUs the ``device`` store sums them in one NCCL group."""
    cupy, nccl = _real_nccl()
    mx.nd.zeros((1,), ctx=mx.gpu(0)).asnumpy()   # the backend imports cupy
    assert knccl.nccl_api() is not None
    mpi = _StubMPI(rank=0, size=1)
    mpi.bcast_object = lambda obj, what, root=0: obj
    comm = knccl.NcclComm(mpi, 0, knccl.nccl_api())
    with comm.device():
        buf = cupy.arange(10, dtype=cupy.float32)
    comm.allreduce_([buf], "allreduce")
    comm.bcast_([buf], "bcast")
    np.testing.assert_array_equal(cupy.asnumpy(buf), np.arange(10))
    comm.close()
    if cupy.cuda.runtime.getDeviceCount() >= 2:
        vals = [mx.nd.ones((5,), ctx=mx.gpu(0)), mx.nd.ones((5,), ctx=mx.gpu(1)) * 2]
        total = knccl.reduce_devices(vals, mx.gpu(0))
        assert total is not None and total.context == mx.gpu(0)
        np.testing.assert_array_equal(total.asnumpy(), 3)
