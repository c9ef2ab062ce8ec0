"""Fuzzing the loaders: every hostile -symbol.json, .params or optimizer .states either loads
or raises an MXNetError subclass, within 2 GiB of address space and a per-input time limit.

Inputs are mutations of real files (tests/data/json_ref, the MXNet 1.9.1 golden files when
../shared/golden is present) and generated structures (_mutate.py). They run in one worker
subprocess (_fuzz_worker.py) under RLIMIT_AS; a worker that dies or stops answering is
counted and restarted. The counts are written to $RELIABILITY_FUZZ_REPORT when set.
Profile ci: 15 examples of 8 inputs per kind; thorough: 300 examples of 40.
"""
from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from tests.conftest import GOLDEN, REPO

from ._mutate import generated_json, generated_params, generated_states, mutate_json, mutate_params

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and SIGALRM fuzzing needs Linux")

LIMIT_BYTES = 2 << 30
SECONDS = float(os.environ.get("RELIABILITY_FUZZ_SECONDS", "10"))
BATCH = 40 if settings().max_examples >= 100 else 8
COUNTS: Counter = Counter()
FAILURES: list = []


def _seed_docs() -> list[dict]:
    files = sorted((REPO / "tests" / "data" / "json_ref").glob("*-symbol.json"))
    if GOLDEN.is_dir():
        files += sorted((GOLDEN / "mxnet").glob("*-symbol.json"))
    return [json.loads(f.read_text()) for f in files]


def _seed_params() -> list[bytes]:
    files = [REPO / "tests" / "data" / "interop" / "mx_nested.params"]
    if GOLDEN.is_dir():
        files += sorted((GOLDEN / "mxnet-format").glob("*.params"))[:12]
        files += sorted((GOLDEN / "mxnet").glob("*.params"))[:4]
    return [f.read_bytes() for f in files if f.is_file()]


def _seed_states() -> list[bytes]:
    data = REPO / "tests" / "data"
    return [f.read_bytes() for f in sorted(data.glob("*.states")) + sorted((data / "legacy_states").glob("*"))]


class Worker:
    """The fuzz worker subprocess and its pipe protocol."""

    def __init__(self):
        self.proc = None
        self.start()

    def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   MKL_NUM_THREADS="1")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("_fuzz_worker.py")),
                                      str(LIMIT_BYTES), str(SECONDS)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=str(REPO))
        assert self._line(120) == {"ready": True}

    def _line(self, timeout: float):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def run(self, kind: str, data: bytes) -> tuple[str, str]:
        try:
            self.proc.stdin.write(json.dumps({"kind": kind, "size": len(data)}).encode() + b"\n" + data)
            self.proc.stdin.flush()
            reply = self._line(SECONDS + 20)
        except (BrokenPipeError, OSError):
            reply = None
        if reply is None:  # died (a crash) or hung outside Python (no SIGALRM)
            code = self.proc.poll()
            self.close()
            self.start()
            return ("hang" if code is None else "crash"), f"exit code {code}"
        return reply["outcome"], reply["detail"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdin.close()
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.close()
    report = os.environ.get("RELIABILITY_FUZZ_REPORT")
    if report:
        Path(report).write_text(json.dumps({"counts": dict(COUNTS), "failures": FAILURES[:50]}, indent=1))


def _check(worker: Worker, kind: str, source: str, data: bytes) -> None:
    outcome, detail = worker.run(kind, data)
    COUNTS[f"{kind}:inputs"] += 1
    COUNTS[f"{kind}:{outcome}"] += 1
    if outcome not in ("ok", "clean"):
        FAILURES.append({"kind": kind, "source": source, "outcome": outcome, "detail": detail,
                         "input": data[:2000].decode("latin-1")})
        pytest.fail(f"{kind} input from {source} gave {outcome}: {detail}\ninput head: {data[:300]!r}")


DOCS = _seed_docs()
PARAMS = _seed_params()
STATES = _seed_states()


@given(seed=st.integers(0, 2**32 - 1))
def test_symbol_json_fuzz(worker, seed):
    rng = random.Random(seed)  # one drawn seed: a batch of inputs without hypothesis' buffer limit
    for _ in range(BATCH):
        if rng.random() < 0.3:
            doc, source = generated_json(rng), "generated"
        else:
            doc, source = rng.choice(DOCS), "mutated"
        _check(worker, "json", source, mutate_json(doc, rng))


@given(seed=st.integers(0, 2**32 - 1))
def test_params_fuzz(worker, seed):
    rng = random.Random(seed)
    for _ in range(BATCH):
        if rng.random() < 0.3 or not PARAMS:
            data, source = generated_params(rng), "generated"
        else:
            data, source = mutate_params(rng.choice(PARAMS), rng), "mutated"
        _check(worker, "params", source, data)


@given(seed=st.integers(0, 2**32 - 1))
def test_optimizer_states_fuzz(worker, seed):
    rng = random.Random(seed)
    for _ in range(BATCH):
        if rng.random() < 0.3 or not STATES:
            data, source = generated_states(rng), "generated"
        else:
            data, source = mutate_params(rng.choice(STATES), rng), "mutated"
        _check(worker, "states", source, data)


def test_worker_enforces_the_address_space_limit(worker):
    """The limit is real: 3 GiB cannot be allocated in the worker, 64 MiB can, and it lives on."""
    assert worker.run("alloc", str(3 << 30).encode())[0] == "other"
    assert worker.run("alloc", str(64 << 20).encode())[0] == "ok"
    assert worker.proc.poll() is None
