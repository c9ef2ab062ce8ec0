"""benchmarks/_mxnet.py: finding MXNet's venv and running a script there (exercised with this
Python standing in for the venv's, so the test needs no MXNet)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

# loaded from its file: putting benchmarks/ on sys.path would let its modules shadow others
_SPEC = importlib.util.spec_from_file_location(
    "benchmarks_mxnet", Path(__file__).resolve().parent.parent / "benchmarks" / "_mxnet.py")
_mxnet = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_mxnet)


def test_the_environment_variable_names_the_python(monkeypatch):
    monkeypatch.setenv("HYBRIDGRAPH_MXNET_PYTHON", sys.executable)
    assert _mxnet.find_mxnet_python() == sys.executable


def test_a_script_gets_its_arguments_and_the_blas_thread_budget(monkeypatch):
    monkeypatch.setenv("HYBRIDGRAPH_MXNET_PYTHON", sys.executable)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    script = _mxnet.PEAK_KB_SOURCE + (
        "import json, os, sys\n"
        "print('noise')\n"
        "print(json.dumps({'args': json.loads(sys.argv[1]), 'omp': os.environ['OMP_NUM_THREADS'],"
        " 'peak': peak_kb() > 0}))\n")
    result, note = _mxnet.run_mxnet_script(script, [1, "a"], timeout=60)
    assert result == {"args": [1, "a"], "omp": "1", "peak": True}
    assert sys.executable in note


def test_a_failing_script_gives_its_last_error_line(monkeypatch):
    monkeypatch.setenv("HYBRIDGRAPH_MXNET_PYTHON", sys.executable)
    result, note = _mxnet.run_mxnet_script("raise SystemExit('mxnet exploded')", [], timeout=60)
    assert result is None and "mxnet exploded" in note


def test_without_a_venv_nothing_runs(monkeypatch):
    monkeypatch.setattr(_mxnet, "find_mxnet_python", lambda: None)
    result, note = _mxnet.run_mxnet_script("print(1)", [], timeout=60)
    assert result is None and "not run" in note


@pytest.mark.parametrize("missing", ["/nonexistent/python"])
def test_a_named_python_that_does_not_exist_is_skipped(monkeypatch, missing):
    monkeypatch.setenv("HYBRIDGRAPH_MXNET_PYTHON", missing)
    assert _mxnet.find_mxnet_python() != missing
