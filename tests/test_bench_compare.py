"""tools/bench_compare.py: parsing benchmark tables and comparing two trees (run on tiny
scripts standing in for the benchmarks, so the test times nothing)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "bench_compare", Path(__file__).resolve().parent.parent / "tools" / "bench_compare.py")
bench_compare = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_compare)

_OUTPUT = """some log line
workload              numpy     hybridgraph  ratio
--------------------  --------  -----------  -----
c = a + b (1,)        2.85 us   3.50 us      1.23x
10-op chain (64, 64)  58.0 us   75.1 us      1.29x

per-batch call  hybridgraph
--------------  -----------
nd.waitall()    0.31 us
nd.waitall()    n/a
"""


def test_tables_become_keyed_numeric_cells():
    cells = bench_compare.parse_tables(_OUTPUT)
    table = "workload | numpy | hybridgraph | ratio"
    assert cells[(table, "c = a + b (1,)", "hybridgraph")] == (3.5, "us")
    assert cells[(table, "10-op chain (64, 64)", "ratio")] == (1.29, "x")
    assert cells[("per-batch call | hybridgraph", "nd.waitall()", "hybridgraph")] == (0.31, "us")
    assert ("per-batch call | hybridgraph", "nd.waitall() #2", "hybridgraph") not in cells   # n/a


def test_two_trees_alternate_and_report_medians(tmp_path, capsys):
    for name, value in (("old", 4.0), ("new", 2.0)):
        bench = tmp_path / name / "benchmarks"
        bench.mkdir(parents=True)
        (bench / "tiny.py").write_text(
            "print('workload  time')\nprint('--------  ----')\n"
            f"print('op        {value} us')\n")
    rc = bench_compare.main(["--before", str(tmp_path / "old"), "--after", str(tmp_path / "new"),
                             "--rounds", "2", "--python", sys.executable, "benchmarks/tiny.py"])
    out = capsys.readouterr().out
    assert rc == 0
    row = next(line for line in out.splitlines() if line.startswith("op "))
    assert "4 us" in row and "2 us" in row and "0.500" in row and row.split()[-1] == "2"
