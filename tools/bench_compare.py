"""Before/after benchmark table for two source trees, from fresh processes taking turns.

    python tools/bench_compare.py --before b02dcf6 --after . --rounds 5 \\
        benchmarks/eager_overhead.py "benchmarks/compiler.py --quick"

Each tree is a directory or a git revision (exported with `git archive` into a temporary
folder, so the repository itself is not touched). Every round runs each benchmark once per
tree, alternating which tree goes first, each run in a fresh interpreter whose working
directory and PYTHONPATH are that tree: both trees see the same machine load in turn, and
no warm caches pass from one to the other. Each tree runs its own copy of the benchmark
script, so the rows both versions print are compared.

The benchmarks print tables (benchmarks/_timing.py's `table`: a header line, a line of
dashes, rows). Every numeric cell (`2.85 us`, `1.31x`, `12.0 ms`, `450 img/s`) becomes a
sample keyed by (table header, row label, column); the report gives the median per tree and
after/before. Timings are only as good as the machine is quiet: run this on an idle one.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\s\d].*?)?\s*$")


def parse_tables(text: str) -> dict[tuple[str, str, str], tuple[float, str]]:
    """(table header, row label, column) -> (value, unit) for every numeric cell of every
    table in a benchmark's output; a row label repeated in one table gets a #n suffix."""
    lines = text.splitlines()
    cells: dict = {}
    for i in range(1, len(lines)):
        dashes = lines[i]
        if not dashes.strip() or set(dashes.strip()) - {"-", " "} or "--" not in dashes:
            continue
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", dashes)]
        header_line = lines[i - 1]
        headers = [_cut(header_line, spans, k) for k in range(len(spans))]
        table = " | ".join(headers)
        seen: dict = defaultdict(int)
        for row in lines[i + 1:]:
            if not row.strip() or set(row.strip()) <= {"-", " "}:
                break
            label = _cut(row, spans, 0)
            seen[label] += 1
            if seen[label] > 1:
                label = f"{label} #{seen[label]}"
            for k in range(1, len(spans)):
                m = _NUMBER.match(_cut(row, spans, k))
                if m:
                    cells[(table, label, headers[k])] = (float(m.group(1)), m.group(2) or "")
    return cells


def _cut(line: str, spans: list, k: int) -> str:
    """Column k of a fixed-width row (the last column runs to the end of the line)."""
    start = spans[k][0]
    end = spans[k + 1][0] if k + 1 < len(spans) else len(line)
    return line[start:end].strip()


def materialise(tree: str, repo: Path, scratch: Path) -> Path:
    """A directory holding `tree`: itself when it is one, else `git archive` of the revision."""
    path = Path(tree)
    if path.is_dir():
        return path.resolve()
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", f"{tree}^{{commit}}"],
                         check=True, capture_output=True, text=True).stdout.strip()
    out = scratch / sha[:12]
    if not out.exists():
        out.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", sha],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def run_once(tree: Path, bench: list[str], python: str, timeout: float) -> str:
    """One fresh-process run of a benchmark (its script path relative to the tree)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    script = tree / bench[0]
    if not script.exists():
        raise SystemExit(f"{script} does not exist in {tree}")
    proc = subprocess.run([python, str(script), *bench[1:]], check=False, cwd=tree, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(bench)} failed in {tree} (exit {proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return proc.stdout


def report(bench: str, samples: dict, names: tuple[str, str]) -> str:
    """The before/after table of medians for one benchmark."""
    before, after = samples[names[0]], samples[names[1]]
    rows = []
    keys = [k for k in before if k in after]
    for key in keys:
        b = statistics.median(v for v, _ in before[key])
        a = statistics.median(v for v, _ in after[key])
        unit = before[key][0][1]
        ratio = f"{a / b:.3f}" if b else "-"
        rows.append((key[1], key[2], f"{b:.4g} {unit}".strip(), f"{a:.4g} {unit}".strip(), ratio,
                     str(len(before[key]))))
    only = [k for k in list(before) + list(after) if k not in before or k not in after]
    header = ("row", "column", f"before ({names[0]})", f"after ({names[1]})", "after/before", "runs")
    lines = [f"## {bench}", "", _table(rows, header) if rows else "(no numeric cells in common)"]
    if only:
        lines += ["", f"{len(set(only))} cells printed by one tree only (not compared)"]
    return "\n".join(lines)


def _table(rows: list[tuple], header: tuple) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), fmt.format(*("-" * w for w in widths))]
                     + [fmt.format(*r) for r in rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="+",
                        help='benchmark scripts relative to the tree root, with arguments in one '
                             'quoted string ("benchmarks/compiler.py --quick")')
    parser.add_argument("--before", required=True, help="directory or git revision")
    parser.add_argument("--after", default=".", help="directory or git revision (default: .)")
    parser.add_argument("--rounds", type=int, default=5, help="runs per tree and benchmark")
    parser.add_argument("--python", default=sys.executable, help="interpreter to run them with")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    parser.add_argument("--scratch", default=os.path.join(tempfile.gettempdir(), "bench_compare"),
                        help="where exported revisions go (kept for reuse)")
    args = parser.parse_args(argv)
    repo = Path(__file__).resolve().parent.parent
    trees = {name: materialise(t, repo, Path(args.scratch)) for name, t in
             (("before", args.before), ("after", args.after))}
    names = (f"before: {args.before}", f"after: {args.after}")
    print(f"before = {trees['before']}\nafter  = {trees['after']}\n", flush=True)
    for spec in args.benchmarks:
        bench = shlex.split(spec)
        samples: dict = {n: defaultdict(list) for n in names}
        for r in range(args.rounds):
            order = [("before", names[0]), ("after", names[1])]
            if r % 2:
                order.reverse()
            for which, label in order:
                out = run_once(trees[which], bench, args.python, args.timeout)
                for key, value in parse_tables(out).items():
                    samples[label][key].append(value)
            print(f"{spec}: round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
        print(report(spec, samples, names), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
