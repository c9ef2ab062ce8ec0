"""Kill tests: every writer, SIGKILLed at random moments while it saves, leaves each file
either the old version or the new one, whole (never torn), a pair that loads consistently
or is reported as mismatched, and no temporaries after the next save (_kill_helper.py).

Profile ci: 10 kills per writer; thorough: 100. A second test enumerates the package's
file-writing calls, so a new writer that bypasses nd/atomic.py fails here.
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill test forks writers (POSIX only)")

RUNS = 100 if settings().max_examples >= 100 else 10
WRITERS = ["nd.save", "Symbol.save", "viz.Dot.save", "HybridBlock.export", "Block.save_parameters",
           "ParameterDict.save", "Trainer.save_states", "model.save_checkpoint", "Module.save_checkpoint",
           "Module.save_optimizer_states", "Module.save_params", "BucketingModule.save_checkpoint"]
PAIRS = {"HybridBlock.export", "model.save_checkpoint", "Module.save_checkpoint", "BucketingModule.save_checkpoint"}


@pytest.fixture(scope="module")
def kill_results(tmp_path_factory):
    env = dict(os.environ, PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(Path(__file__).with_name("_kill_helper.py")), str(RUNS), "1234",
                          str(tmp_path_factory.mktemp("kill"))], capture_output=True, text=True, env=env,
                         timeout=3000, cwd=str(REPO), check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("writer", WRITERS)
def test_a_killed_save_leaves_whole_files(kill_results, writer):
    outcomes = kill_results[writer]
    assert len(outcomes) == RUNS
    allowed = {"A", "B", "mixed-detected"} if writer in PAIRS else {"A", "B"}
    bad = [o for o in outcomes if o not in allowed]
    assert not bad, f"{writer}: {bad[:5]} in {len(outcomes)} kills"


def test_every_writer_is_covered(kill_results):
    assert sorted(kill_results) == sorted(WRITERS)


#: calls that write or move files; only nd/atomic.py may make them (hybrid/utils.replace_file
#: is MXNet's public helper that moves a file the user downloaded)
_WRITE_CALLS = {"write_bytes", "write_text", "replace", "rename", "mkstemp", "NamedTemporaryFile", "savez",
                "savez_compressed", "save", "dump", "tofile"}
_ALLOWED = {("nd/atomic.py", None), ("hybrid/utils.py", "replace_file"),
            # not saves: a worker's batch handed to the parent through a scratch file it unlinks,
            # and stderr pointed at os.devnull
            ("hybrid/data/dataloader.py", "_worker_fn"), ("hybridgraph/test_utils_more.py", "discard_stderr")}


def _writes_in(path: Path) -> list[str]:
    """`open(..., mode with w/a/x/+)` and the calls above (on os, np, pickle, json, Path) in a file."""
    tree = ast.parse(path.read_text())
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            base = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
            if name in ("open", "fdopen"):
                modes = [a.value for a in node.args[1:2] + [k.value for k in node.keywords if k.arg == "mode"]
                         if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                if any(c in m for m in modes for c in "wax+"):
                    found.append(f"{fn.name}: open(mode={modes[0]!r})")
            elif name in _WRITE_CALLS and base in ("os", "np", "numpy", "pickle", "json", "tempfile", "shutil"):
                found.append(f"{fn.name}: {base}.{name}")
            elif name in ("write_bytes", "write_text"):
                found.append(f"{fn.name}: .{name}")
    return found


def test_every_file_write_goes_through_atomic_write():
    offenders = []
    for top in ("nd", "symbol", "hybrid", "hybridgraph"):
        for path in sorted((REPO / top).rglob("*.py")):
            if path.is_symlink() or any(p.is_symlink() for p in path.parents if REPO in p.parents):
                continue
            rel = path.relative_to(REPO).as_posix()
            for hit in _writes_in(path):
                if (rel, None) in _ALLOWED or (rel, hit.split(":")[0]) in _ALLOWED:
                    continue
                offenders.append(f"{rel}: {hit}")
    assert not offenders, "write files with nd.atomic.atomic_write:\n" + "\n".join(offenders)


def test_the_enumeration_finds_a_plain_write(tmp_path):
    f = tmp_path / "w.py"
    f.write_text("import os\ndef save(p, b):\n    with open(p, 'wb') as f:\n        f.write(b)\n"
                 "def move(a, b):\n    os.replace(a, b)\n")
    assert _writes_in(f) == ["save: open(mode='wb')", "move: os.replace"]
