"""tools/peer_table.py: the per-file table of MXNet's unit tests (real MXNet vs hybridgraph)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import peer_table  # noqa: E402


def _summary(path: Path, files: dict, tests: dict) -> str:
    path.write_text(json.dumps({"meta": {}, "files": files, "tests": tests}))
    return str(path)


def _file(collected: int, **kw) -> dict:
    return dict({"collected": collected, "passed": 0, "collect_error": False, "timed_out": False}, **kw)


def test_table_counts_per_file_and_totals(tmp_path):
    mx1 = _summary(tmp_path / "mx1.json", {"test_a.py": _file(3), "test_numpy_b.py": _file(2)},
                   {"test_a.py::t1": {"outcome": "passed"}, "test_a.py::t2": {"outcome": "passed"},
                    "test_a.py::t3": {"outcome": "failed"}, "test_numpy_b.py::u1": {"outcome": "passed"},
                    "test_numpy_b.py::u2": {"outcome": "passed"}})
    # a later run of test_a.py replaces the first one entirely
    mx2 = _summary(tmp_path / "mx2.json", {"test_a.py": _file(3)},
                   {"test_a.py::t1": {"outcome": "passed"}, "test_a.py::t2": {"outcome": "passed"},
                    "test_a.py::t3": {"outcome": "passed"}})
    hg = _summary(tmp_path / "hg.json", {"test_a.py": _file(3), "test_numpy_b.py": _file(2, timed_out=True,
                                                                                          not_run=1)},
                  {"test_a.py::t1": {"outcome": "passed"}, "test_a.py::t2": {"outcome": "failed"},
                   "test_a.py::t3": {"outcome": "passed"}, "test_numpy_b.py::u1": {"outcome": "passed"}})
    portable = tmp_path / "portable.txt"
    portable.write_text("# comment\ntest_a.py::t1\ntest_a.py::t2\ntest_numpy_b.py::u1\n")
    excl = tmp_path / "excl.md"
    excl.write_text("| file | reason |\n|---|---|\n| `test_c.py` | engine internals |\n")
    tests_dir = tmp_path / "unittest"
    tests_dir.mkdir()
    for name in ("test_a.py", "test_numpy_b.py", "test_c.py", "common.py"):
        (tests_dir / name).write_text("")
    rows = peer_table.table([mx1, mx2], [hg], [str(portable)], str(tests_dir), str(excl)).splitlines()
    assert rows[2] == "| test_a.py | 3 / 3 | 2 | 1 / 2 | 2 / 3 |  |"
    assert rows[3] == "| test_c.py | - | 0 | - | - | engine internals |"
    assert rows[4] == "| test_numpy_b.py | 2 / 2 | 1 | 1 / 1 | 1 / 2 | hybridgraph: file timed out (1 not run) |"
    assert rows[5] == "| **total** | 5 / 5 | 3 | 2 / 3 (66.7%) | 3 | |"
    assert rows[6] == "| **total without test_numpy_\\*** | 3 / 3 | 2 | 1 / 2 (50.0%) | 2 | |"


def test_merge_keeps_the_last_run_of_each_file(tmp_path):
    a = _summary(tmp_path / "a.json", {"test_a.py": _file(1)}, {"test_a.py::x": {"outcome": "failed"}})
    b = _summary(tmp_path / "b.json", {"test_a.py": _file(1)}, {"test_a.py::y": {"outcome": "passed"}})
    out = tmp_path / "m.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "peer_table.py"), "merge", str(out), a, b],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    merged = json.loads(out.read_text())
    assert merged["tests"] == {"test_a.py::y": {"outcome": "passed"}} and merged["files"]["test_a.py"]["source"] == b
