"""dist_sync over MPI with 2 workers (`mpiexec -n 2`): same training as one worker on the
whole batch, the store's semantics, and failures that end the job with the rank named."""
from __future__ import annotations

import os
import shutil
import subprocess
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason="distributed kvstore tests need mpi4py (pip install 'hybridgraph[dist]')")

import hybridgraph as mx  # noqa: E402
from hybridgraph.kvstore.dist import DistKVStore  # noqa: E402

from . import dist_worker  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(dist_worker.__file__)
MPIEXEC = shutil.which("mpiexec", path=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install mpich)")
TRAINING = "api,mlp,cnn,cnnbn,init_differs,ckpt_first,module,mlp_local_update,mlp_overlap,mlp_stale"


def _env(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), **extra)
    for var in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"):
        env.pop(var, None)
    return env


def _launch(scenarios: str, outdir: Path, timeout: float = 240, **env) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "hybridgraph.launch", "-n", "2", "--mpiexec", MPIEXEC,
           sys.executable, str(WORKER), scenarios, str(outdir)]
    return subprocess.run(cmd, check=False, env=_env(**env), capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("dist")
    proc = _launch(TRAINING, outdir)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return outdir


def _load(outdir: Path, scenario: str, rank: int) -> dict:
    return dict(np.load(outdir / f"{scenario}_rank{rank}.npz"))


def _single_worker() -> DistKVStore:
    with pytest.warns(UserWarning, match="single worker"):
        return mx.kv.create("dist_sync")


def test_store_semantics(two_workers):
    for rank in (0, 1):
        got = _load(two_workers, "api", rank)
        assert got["rank_size"].tolist() == [rank, 2]
        np.testing.assert_array_equal(got["init"], 10)               # rank 0's init value
        np.testing.assert_array_equal(got["push"], 5)                # (1 + 1) + (2 + 1): devices, then workers
        np.testing.assert_array_equal(got["broadcast"], [np.arange(5)] * 2)
        np.testing.assert_array_equal(got["pushpull"], [3, 3])       # also across 0.25 MB buckets
        np.testing.assert_allclose(got["optimizer"], 1 - 0.5 * 3)    # SGD on the summed gradient
        assert got["barrier_wait"] >= 0.4 or rank == 1               # rank 0 waited for the late rank 1


def test_2bit_compression_per_worker_residuals(two_workers):
    """Each worker quantizes its own gradient with its own residual; the sum of both is pulled."""
    from hybridgraph.kvstore.compression import GradientCompression
    comps = [GradientCompression({"type": "2bit", "threshold": 0.5}) for _ in range(2)]
    rngs = [np.random.RandomState(100 + r) for r in range(2)]
    expected = []
    for _ in range(3):
        expected.append(sum(c.compress("k", rng.uniform(-1, 1, 20).astype(np.float32))
                            for c, rng in zip(comps, rngs)))
    for rank in (0, 1):
        np.testing.assert_allclose(_load(two_workers, "api", rank)["compressed"], np.stack(expected), atol=1e-6)


@pytest.mark.parametrize("kind", ["mlp", "cnn", "mlp_local_update"])
def test_two_workers_train_like_one_on_the_whole_batch(two_workers, kind):
    ref = dist_worker.params_of(dist_worker.train(kind.split("_")[0], _single_worker(), 0, 1))
    for rank in (0, 1):
        got = _load(two_workers, kind, rank)
        assert set(got) == set(ref)
        for name in ref:
            np.testing.assert_allclose(got[name], ref[name], rtol=1e-5, atol=1e-6, err_msg=f"{name} on rank {rank}")


@pytest.mark.parametrize("kind", ["mlp_overlap", "mlp_stale"])
def test_allreduce_overlapping_backward_gives_the_same_training(two_workers, kind):
    """Buckets of one key each start during backward as their gradients become final (from the
    second step: the first push tells the store which gradients feed it); with a second backward before
    each step ('stale') they are reduced again and training is unchanged."""
    ref = dist_worker.params_of(dist_worker.train("mlp", _single_worker(), 0, 1))
    n_keys = len(ref)
    for rank in (0, 1):
        got = _load(two_workers, kind, rank)
        started = got.pop("started_early")
        # all but the last bucket (the first layer's gradients, final last) start during backward
        assert len(started) == dist_worker.STEPS - 1 and (started == n_keys - 1).all(), started
        for name in ref:
            np.testing.assert_allclose(got[name], ref[name], rtol=1e-5, atol=1e-6, err_msg=f"{name} on rank {rank}")


def test_module_fit_on_two_workers_matches_one(two_workers):
    ref = dist_worker.fit_module(_single_worker(), 0, 1)
    for rank in (0, 1):
        got = _load(two_workers, "module", rank)
        for name in ref:
            np.testing.assert_allclose(got[name], ref[name], rtol=1e-5, atol=1e-6, err_msg=f"{name} on rank {rank}")


def test_batchnorm_statistics_stay_per_worker(two_workers):
    """Learned parameters equal one worker normalizing each half separately; the running
    statistics are each worker's own (MXNet does not synchronize them)."""
    ref = dist_worker.params_of(dist_worker.train("cnnbn", _single_worker(), 0, 1, shares=2))
    ranks = [_load(two_workers, "cnnbn", r) for r in (0, 1)]
    for name in ref:
        if "running" in name:
            continue
        for got in ranks:
            np.testing.assert_allclose(got[name], ref[name], rtol=1e-5, atol=1e-6, err_msg=name)
    assert not np.allclose(ranks[0]["cnnbn_batchnorm0_running_mean"], ranks[1]["cnnbn_batchnorm0_running_mean"])


def test_rank0_weights_are_broadcast_at_init(two_workers):
    a, b = (_load(two_workers, "init_differs", r) for r in (0, 1))
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])


def test_checkpoint_from_rank0_resumes_on_one_worker(two_workers):
    """Rank 0 wrote the checkpoint (atomically); one worker continues where two stopped."""
    assert sorted(p.name for p in two_workers.glob("ckpt.*")) == ["ckpt.params", "ckpt.states"]
    assert not list(two_workers.glob(".ckpt*"))  # no temporary files left behind
    got = dist_worker.params_of(dist_worker.train("mlp", _single_worker(), 0, 1, start=5, steps=5,
                                                  load=str(two_workers / "ckpt")))
    ref = dist_worker.params_of(dist_worker.train("mlp", _single_worker(), 0, 1, steps=10))
    for name in ref:
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_raising_worker_fails_the_other_naming_its_rank(tmp_path):
    start = time.perf_counter()
    proc = _launch("raise", tmp_path, timeout=120)
    assert proc.returncode != 0
    assert "WorkerFailed: rank 0: worker rank 1 failed: ValueError: worker 1 broke on purpose" in proc.stderr
    assert time.perf_counter() - start < 60


def test_killed_worker_ends_the_job_naming_its_rank(tmp_path):
    start = time.perf_counter()
    proc = _launch("kill", tmp_path, timeout=120)
    assert proc.returncode != 0
    assert "worker rank 1" in proc.stderr and "killed by SIGKILL" in proc.stderr
    assert time.perf_counter() - start < 60


@pytest.mark.parametrize("scenario, what", [("hang", "allreduce of keys [0]"), ("barrier_hang", "barrier")])
def test_hanging_worker_times_out_the_other(tmp_path, scenario, what):
    start = time.perf_counter()
    proc = _launch(scenario, tmp_path, timeout=120, HYBRIDGRAPH_KVSTORE_TIMEOUT="3")
    assert proc.returncode != 0
    assert f"WorkerTimeout: rank 0: {what} did not complete within 3 s" in proc.stderr
    assert "no answer from rank 1" in proc.stderr
    assert time.perf_counter() - start < 60


def test_outside_a_launcher_is_one_worker():
    with pytest.warns(UserWarning, match="single worker"):
        assert mx.kv.create("horovod").num_workers == 1
    kv = _single_worker()
    assert (kv.rank, kv.num_workers, kv.type) == (0, 1, "dist_sync")
    kv.init("w", mx.nd.ones((2,)))
    kv.pushpull("w", mx.nd.ones((2,)) * 3)
    out = mx.nd.zeros((2,))
    kv.pull("w", out=out)
    assert (out.asnumpy() == 3).all()
    kv.barrier()


def test_distributed_example_runs_on_two_workers(tmp_path):
    cmd = [sys.executable, "-m", "hybridgraph.launch", "-n", "2", "--mpiexec", MPIEXEC, sys.executable,
           str(ROOT / "examples" / "distributed_training.py"), "--quick", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, check=False, env=_env(), capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # found anywhere in the output: mpiexec forwards the ranks' stdout in chunks, so one rank's
    # line may not start a line of the merged output
    accuracies = dict(re.findall(r"(rank \d+/\d+): test accuracy ([0-9.]+),", proc.stdout))
    assert set(accuracies) == {"rank 0/2", "rank 1/2"}
    assert len(set(accuracies.values())) == 1 and float(accuracies["rank 0/2"]) > 0.85
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.params", "mlp.states"]
