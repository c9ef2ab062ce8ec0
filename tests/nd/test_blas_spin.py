"""nd.ops.blas.limit_worker_spin: importing hybridgraph makes numpy's OpenBLAS workers sleep
soon after a GEMM instead of spinning for ~0.1 s, leaves a user's OPENBLAS_THREAD_TIMEOUT and
the environment of child processes alone, and BLAS results are unchanged."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hybridgraph.nd.ops import blas

PROBE = """
import json, os
import numpy as np
a = np.arange(40000, dtype=np.float64).reshape(200, 200) / 1e4
before = a @ a                                 # threads started before the import
import hybridgraph
from hybridgraph.nd.ops import blas
print(json.dumps({"timeouts": [lib.openblas_thread_timeout() for lib in blas._loaded_openblas()],
                  "env": os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
                  "same": bool(((a @ a) == before).all())}))
"""


def _probe(**env) -> dict:
    full = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    full.update(OPENBLAS_NUM_THREADS="2", **env)
    out = subprocess.run([sys.executable, "-c", PROBE], env=full, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def openblas():
    if not blas._loaded_openblas():
        pytest.skip("numpy's BLAS is not a pthreads OpenBLAS with a worker timeout")


def test_import_shortens_the_spin_and_keeps_results_and_the_environment(openblas):
    got = _probe()
    assert got["timeouts"] and set(got["timeouts"]) == {blas.WORKER_SPIN_LOG2_CYCLES}
    assert got["env"] is None                 # child processes inherit the user's environment
    assert got["same"]                        # GEMMs after the workers restarted: same result


def test_a_users_timeout_is_left_alone(openblas):
    got = _probe(OPENBLAS_THREAD_TIMEOUT="26")
    assert set(got["timeouts"]) == {26} and got["env"] == "26" and got["same"]


def test_single_threaded_blas_is_left_alone(openblas, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    assert blas.limit_worker_spin() is False
