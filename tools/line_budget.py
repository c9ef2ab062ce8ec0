"""Line budget: print line counts per package and fail when a source file is too long.

    python tools/line_budget.py            # the table; exit 1 if a source file exceeds 700 lines
    python tools/line_budget.py --max 650  # a different hard limit

STYLE.md (section 3.1 and habit 10) aims for files of at most ~600 lines; the
hard limit leaves a little headroom over that target. Every `.py` file of the
packages below counts toward the table; the limit applies to all of them
except the test suite (tests/), whose table-driven files may grow longer.
Files over the target but under the limit are listed as a reminder, without
failing. `make lint` runs this script (tinygrad's sz.py does the same job).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("nd", "symbol", "hybrid", "hybridgraph", "tests", "examples", "benchmarks")
TEST_PACKAGES = frozenset({"tests"})
TARGET = 600
LIMIT = 700


def python_files(package: str) -> list[Path]:
    """The `.py` files of a package directory, in a stable order (caches skipped)."""
    base = ROOT / package
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*.py") if "__pycache__" not in p.parts)


def count_lines(path: Path) -> int:
    """Physical lines, as `wc -l` counts them (a last line without a newline counts too)."""
    data = path.read_bytes()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def package_table(counts: dict[str, dict[Path, int]]) -> list[str]:
    """One line per package: file count, total lines and its longest file."""
    rows = [f"{'package':<12} {'files':>5} {'lines':>7}  longest file"]
    for package, files in counts.items():
        if not files:
            rows.append(f"{package:<12} {0:>5} {0:>7}")
            continue
        longest = max(files, key=files.get)
        rows.append(f"{package:<12} {len(files):>5} {sum(files.values()):>7}  "
                    f"{longest.relative_to(ROOT).as_posix()} ({files[longest]})")
    total = sum(sum(files.values()) for files in counts.values())
    rows.append(f"{'total':<12} {sum(len(f) for f in counts.values()):>5} {total:>7}")
    return rows


def source_files_over(counts: dict[str, dict[Path, int]], limit: int) -> list[tuple[Path, int]]:
    """Non-test source files longer than `limit` lines, longest first."""
    over = [(path, n) for package, files in counts.items() if package not in TEST_PACKAGES
            for path, n in files.items() if n > limit]
    return sorted(over, key=lambda item: (-item[1], item[0]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=LIMIT, help=f"hard limit per source file (default {LIMIT})")
    parser.add_argument("--target", type=int, default=TARGET, help=f"soft target per file (default {TARGET})")
    args = parser.parse_args(argv)

    counts = {package: {p: count_lines(p) for p in python_files(package)} for package in PACKAGES}
    print("\n".join(package_table(counts)))

    near = [(p, n) for p, n in source_files_over(counts, args.target) if n <= args.max]
    if near:
        print(f"\nover the {args.target}-line target (allowed up to {args.max}):")
        print("\n".join(f"  {p.relative_to(ROOT).as_posix()}: {n}" for p, n in near))

    offenders = source_files_over(counts, args.max)
    if offenders:
        print(f"\nFAIL: {len(offenders)} source file(s) over {args.max} lines; split them along natural seams "
              "(STYLE.md 3.1, habit 10):", file=sys.stderr)
        print("\n".join(f"  {p.relative_to(ROOT).as_posix()}: {n}" for p, n in offenders), file=sys.stderr)
        return 1
    print(f"\nOK: no source file over {args.max} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
