"""A compiled variant's debug report (`CompiledGraph.debug_str`, `Executor.debug_str`):
the passes that ran, the schedule and the memory totals, in MXNet's debug_str style."""
from __future__ import annotations

from typing import Any


def plan_report(plan: Any) -> str:
    """Pass pipeline, schedule and memory totals of one variant, MXNet's debug_str style."""
    stats = plan.memory_stats()
    lines = ["Passes: " + (", ".join(plan.passes_ran) if plan.passes_ran else "(none)"),
             f"Schedule: {plan.sched.n_forward} forward steps, "
             f"{len(plan.sched.steps) - plan.sched.n_forward} backward steps"]
    lines += plan.describe()
    lines.append(f"Total {_mb(stats['planned'])} MB allocated (naive {_mb(stats['naive'])} MB, lower bound "
                 f"{_mb(stats['lower_bound'])} MB; bytes {stats['planned']} / {stats['naive']} / "
                 f"{stats['lower_bound']})")
    return "\n".join(lines) + "\n"


def _mb(nbytes: int) -> str:
    return f"{nbytes / 2 ** 20:.4f}".rstrip("0").rstrip(".")
