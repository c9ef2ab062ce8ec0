#!/usr/bin/env python3
"""Per-file table of MXNet 1.9.1's unit tests run against real MXNet and against hybridgraph.

Reads the ``summary.json`` files that ``peer-tests/run_peer.sh`` writes (one run may cover
some files only: give several; for a file in more than one, the last one given wins) and
the lists of portable node ids, and prints a markdown table, one row per test file:
MXNet passed (of collected), portable, hybridgraph passed of the portable tests, and
hybridgraph passed of all tests, with totals. Standard library only.

    python tools/peer_table.py --mxnet BASE.json RUN2.json --hg HG1.json HG2.json \\
        --portable ../shared/peer-tests/portable.txt tests/data/peer/portable_all.txt \\
        [--tests-dir /tmp/mxtests/unittest] [--exclusions tests/data/peer/exclusions.md]

    python tools/peer_table.py merge OUT.json RUN1.json RUN2.json   # one summary of several runs

With ``--tests-dir`` every ``test_*.py`` there gets a row (files no run covered show
``-``); with ``--exclusions`` the markdown's table (``| file | reason |``) gives the note
of files excluded as a whole.
"""
from __future__ import annotations

import argparse
import json

from hybridgraph.nd.atomic import atomic_write
import os
import re
import sys


def load_runs(paths: list[str]) -> tuple[dict, dict]:
    """``(files, tests)`` of several summary.json: per file, the last run that has it."""
    files: dict = {}
    tests: dict = {}
    for path in paths:
        with open(path) as fh:
            run = json.load(fh)
        for name, info in run["files"].items():
            files[name] = dict(info, source=path)
            for nid in [n for n in tests if n.startswith(name + "::")]:
                del tests[nid]
            tests.update({nid: t for nid, t in run["tests"].items() if nid.startswith(name + "::")})
    return files, tests


def load_portable(paths: list[str]) -> set[str]:
    ids: set[str] = set()
    for path in paths:
        with open(path) as fh:
            ids.update(line.strip() for line in fh if line.strip() and not line.startswith("#"))
    return ids


def load_exclusions(path: str | None) -> dict[str, str]:
    """``{file: reason}`` from the rows ``| test_x.py | reason |`` of a markdown file."""
    if not path:
        return {}
    out = {}
    with open(path) as fh:
        for line in fh:
            m = re.match(r"\|\s*`?(test_\w+\.py)`?\s*\|\s*(.*?)\s*\|\s*$", line)
            if m:
                out[m.group(1)] = m.group(2)
    return out


def passed(tests: dict, name: str, only: set[str] | None = None) -> int:
    return sum(1 for nid, t in tests.items() if nid.startswith(name + "::") and t.get("outcome") == "passed"
               and (only is None or nid in only))


def table(mx_paths: list[str], hg_paths: list[str], portable_paths: list[str], tests_dir: str | None,
          exclusions: str | None) -> str:
    mx_files, mx_tests = load_runs(mx_paths)
    hg_files, hg_tests = load_runs(hg_paths)
    portable = load_portable(portable_paths)
    notes = load_exclusions(exclusions)
    names = set(mx_files) | set(hg_files) | {n.split("::")[0] for n in portable}
    if tests_dir:
        names |= {f for f in os.listdir(tests_dir) if f.startswith("test_") and f.endswith(".py")}
    rows = ["| file | MXNet passed / collected | portable | hybridgraph passed (portable) "
            "| hybridgraph passed / collected (all) | note |", "|---|---|---|---|---|---|"]
    totals = {"all": [0, 0, 0, 0, 0], "non-numpy": [0, 0, 0, 0, 0]}
    for name in sorted(names):
        port = {n for n in portable if n.startswith(name + "::")}
        mx = mx_files.get(name)
        hg = hg_files.get(name)
        mx_pass = passed(mx_tests, name) if mx else None
        hg_port = passed(hg_tests, name, port) if hg else None
        hg_pass = passed(hg_tests, name) if hg else None
        note = notes.get(name, "")
        if hg and hg.get("collect_error"):
            note = (note + "; " if note else "") + "hybridgraph: collection error"
        if hg and hg.get("timed_out"):
            note = (note + "; " if note else "") + f"hybridgraph: file timed out ({hg.get('not_run', 0)} not run)"
        cells = [name,
                 f"{mx_pass} / {mx['collected']}" if mx else "-",
                 str(len(port)),
                 f"{hg_port} / {len(port)}" if hg else "-",
                 f"{hg_pass} / {hg['collected']}" if hg else "-",
                 note]
        rows.append("| " + " | ".join(cells) + " |")
        for key in ("all", "non-numpy"):
            if key == "non-numpy" and name.startswith("test_numpy_"):
                continue
            t = totals[key]
            t[0] += mx_pass or 0
            t[1] += mx["collected"] if mx else 0
            t[2] += len(port)
            t[3] += hg_port or 0
            t[4] += hg_pass or 0
    for key, label in (("all", "**total**"), ("non-numpy", "**total without test_numpy_\\***")):
        t = totals[key]
        share = f" ({100 * t[3] / t[2]:.1f}%)" if t[2] else ""
        rows.append(f"| {label} | {t[0]} / {t[1]} | {t[2]} | {t[3]} / {t[2]}{share} | {t[4]} | |")
    return "\n".join(rows)


def merge(out: str, paths: list[str]) -> None:
    """Write one summary.json holding, per file, the last of `paths` that ran it."""
    files, tests = load_runs(paths)
    text = json.dumps({"meta": {"merged_from": paths}, "files": files, "tests": tests}, indent=1, sort_keys=True)
    atomic_write(out, text.encode())   # a merged table is never left half-written


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["merge"]:
        if len(argv) < 3:
            print("usage: peer_table.py merge OUT.json SUMMARY.json...", file=sys.stderr)
            return 2
        merge(argv[1], argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mxnet", nargs="+", required=True, help="summary.json of real-MXNet runs")
    ap.add_argument("--hg", nargs="+", required=True, help="summary.json of hybridgraph runs (PEER_ALIAS)")
    ap.add_argument("--portable", nargs="+", default=[], help="files of portable node ids")
    ap.add_argument("--tests-dir", help="list every test_*.py there, run or not")
    ap.add_argument("--exclusions", help="markdown with '| file | reason |' rows for whole-file exclusions")
    a = ap.parse_args(argv)
    print(table(a.mxnet, a.hg, a.portable, a.tests_dir, a.exclusions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
