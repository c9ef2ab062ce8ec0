"""The profiler's recording state, read on every operator call (kept tiny and dependency-free).

`ACTIVE` is False unless `mx.profiler` is running; then the eager dispatcher
and the executor's step-by-step interpreter time each kernel and hand
(name, category, start ns, end ns) to `record`, which `mx.profiler` installs.
"""
from __future__ import annotations

from collections.abc import Callable

#: whether operator calls are being timed (eager calls and executor steps check it)
ACTIVE = False
#: per category ("imperative", "symbolic"): whether that kind of call is recorded
CATEGORIES = {"imperative": True, "symbolic": True}
#: names of the Python (Custom) operators running now, innermost last: calls inside one are
#: recorded as "<op_type>::<op>" in the "Custom Operator" domain, as MXNet names them
SCOPE: list[str] = []
_sink: Callable[[str, str, str, int, int], None] | None = None


def set_sink(sink: Callable[[str, str, str, int, int], None] | None, active: bool) -> None:
    """Install the recorder and switch timing on or off."""
    global _sink, ACTIVE
    _sink = sink
    ACTIVE = bool(active and sink is not None)


def record(name: str, category: str, start_ns: int, end_ns: int) -> None:
    """Hand one timed operator call to the profiler (a no-op when none is installed)."""
    if _sink is None or not CATEGORIES.get(category, True):
        return
    if SCOPE:
        _sink(f"{SCOPE[-1]}::{name}", category, "Custom Operator", start_ns, end_ns)
    else:
        _sink(name, category, "operator", start_ns, end_ns)


def record_custom(name: str, start_ns: int, end_ns: int) -> None:
    """One run of a Python operator's forward or backward (`name` is "<op_type>::pure_python")."""
    if _sink is not None:
        _sink(name, "custom", "Custom Operator", start_ns, end_ns)
