"""The calls MXNet scripts make every batch (`nd.waitall()`, `num_gpus()`, `asscalar()`)
do no repeated work: the GPU probe (a cupy import, ~1 ms when cupy is missing) runs once
per process (issue 19). Timing lives in benchmarks/eager_overhead.py; these tests count
the work instead, so they cannot flake on a loaded machine."""
from __future__ import annotations

import builtins

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.nd import backend


@pytest.fixture
def cupy_imports(monkeypatch):
    """Counts attempts to import cupy, starting from a process that never probed."""
    monkeypatch.setattr(backend, "_gpu_count", None, raising=False)
    monkeypatch.setattr(backend, "_cupy_missing", False, raising=False)
    calls = []
    real = builtins.__import__

    def counting(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            calls.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", counting)
    return calls


@pytest.mark.skipif(backend._cupy is not None, reason="cupy is in use: the probe found it")
def test_gpu_probe_runs_once(cupy_imports):
    counts = {mx.context.num_gpus() for _ in range(5)}
    for _ in range(5):
        mx.nd.waitall()
    assert len(counts) == 1
    assert len(cupy_imports) <= 1, cupy_imports


@pytest.mark.skipif(backend._cupy is not None, reason="cupy is in use")
def test_waitall_without_gpu_context_never_imports_cupy(cupy_imports):
    mx.nd.waitall()
    assert cupy_imports == []


def test_missing_cupy_still_gives_the_clear_error(monkeypatch):
    monkeypatch.setattr(backend, "_cupy", None)
    monkeypatch.setattr(backend, "_cupy_missing", True)
    with pytest.raises(mx.MXNetError, match="needs cupy"):
        mx.nd.zeros((1,), ctx=mx.gpu(0))


def test_asscalar_is_a_numpy_scalar_copy():
    a = mx.nd.array([3.5])
    v = a.asscalar()
    a[:] = 1
    assert type(v) is np.float32 and v == 3.5
    assert type(mx.nd.array([7], dtype="int32").asscalar()) is np.int32
    with pytest.raises(ValueError, match="size 1"):
        mx.nd.zeros((2,)).asscalar()
