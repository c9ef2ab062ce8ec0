"""`mx.profiler`: time operator calls and user ranges; write Chrome-trace JSON and aggregate tables.

As in MXNet 1.9.1: `set_config(filename=..., profile_all=..., aggregate_stats=...)`,
`set_state('run')`, work, `set_state('stop')`, `dump()`. Eager operator calls
(category "imperative") and the executor's steps for bound Symbols and
hybridized blocks (category "symbolic"; while the profiler runs the executor
takes its step-by-step path so each operator is timed) become complete events
("ph": "X", microseconds) in a trace that chrome://tracing and Perfetto open.
Domain / Task / Frame / Event / Counter / Marker add the user's own ranges,
counters and instant markers. `dumps()` gives per-name statistics (count,
total/min/max/avg ms) grouped by domain ("operator" for operators), as a table
or as MXNet's JSON layout ({"Time", "Memory", "Unit"}).
"""
from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

from hybridgraph.nd import profiling
from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.serialization import atomic_write

__all__ = ["set_config", "set_state", "dump", "dumps", "pause", "resume", "Domain", "Task", "Frame", "Event",
           "Counter", "Marker", "profiler_set_config", "profiler_set_state", "dump_profile"]

_DEFAULTS = {"profile_all": False, "profile_symbolic": True, "profile_imperative": True, "profile_memory": True,
             "profile_api": True, "filename": "profile.json", "continuous_dump": False, "dump_period": 1.0,
             "aggregate_stats": False, "profile_process": "worker"}
_SORT_KEYS = {"total": "Total", "avg": "Avg", "min": "Min", "max": "Max", "count": "Count"}
_lock = threading.Lock()
_config: dict = dict(_DEFAULTS)
_state = {"running": False, "paused": False}
_events: list[dict] = []
_stats: dict[str, dict[str, list[float]]] = {}   # domain -> name -> [count, total, min, max] (ms)
_T0 = time.perf_counter_ns()


def _us(ns: int) -> float:
    return (ns - _T0) / 1000.0


def _add(name: str, cat: str, domain: str, start_ns: int, end_ns: int) -> None:
    ms = (end_ns - start_ns) / 1e6
    with _lock:
        _events.append({"name": name, "cat": cat, "ph": "X", "ts": _us(start_ns), "dur": (end_ns - start_ns) / 1000.0,
                        "pid": os.getpid(), "tid": threading.get_ident() & 0xFFFFFFFF})
        st = _stats.setdefault(domain, {}).get(name)
        if st is None:
            _stats[domain][name] = [1, ms, ms, ms]
        else:
            st[0] += 1
            st[1] += ms
            st[2] = min(st[2], ms)
            st[3] = max(st[3], ms)


def _record_op(name: str, category: str, domain: str, start_ns: int, end_ns: int) -> None:
    _add(name, category, domain, start_ns, end_ns)


def _recording() -> bool:
    return _state["running"] and not _state["paused"]


def _sync() -> None:
    cfg = _config
    profiling.CATEGORIES["imperative"] = bool(cfg["profile_all"] or cfg["profile_imperative"])
    profiling.CATEGORIES["symbolic"] = bool(cfg["profile_all"] or cfg["profile_symbolic"])
    profiling.set_sink(_record_op, _recording())


def set_config(**kwargs: Any) -> None:
    """Set profiler options (MXNet's names): profile_all, profile_symbolic, profile_imperative,
    profile_memory, profile_api, filename, continuous_dump, dump_period, aggregate_stats."""
    unknown = set(kwargs) - set(_DEFAULTS)
    if unknown:
        raise MXNetError(f"profiler.set_config: unknown option(s) {sorted(unknown)}; expected {sorted(_DEFAULTS)}")
    _config.update(kwargs)
    _sync()


def profiler_set_config(mode: str = "symbolic", filename: str = "profile.json") -> None:
    """Deprecated MXNet form: mode 'symbolic' or 'all'."""
    if mode not in ("symbolic", "all"):
        raise ValueError(f"profiler_set_config: mode must be 'symbolic' or 'all', got {mode!r}")
    set_config(profile_symbolic=True, profile_all=mode == "all", filename=filename)


def set_state(state: str = "stop", profile_process: str = "worker") -> None:
    """'run' starts recording, 'stop' stops it (the recorded events stay until dump)."""
    if state not in ("run", "stop"):
        raise ValueError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    _state["running"] = state == "run"
    if _state["running"]:
        _state["paused"] = False  # a new run records (MXNet's set_state('run') after pause() does)
    _sync()


def profiler_set_state(state: str = "stop") -> None:
    """Deprecated alias of set_state."""
    set_state(state)


def pause(profile_process: str = "worker") -> None:
    """Stop recording until resume() (the profiler stays 'run')."""
    _state["paused"] = True
    _sync()


def resume(profile_process: str = "worker") -> None:
    """Record again after pause()."""
    _state["paused"] = False
    _sync()


def trace() -> dict:
    """The Chrome-trace document of everything recorded so far."""
    with _lock:
        events = list(_events)
    meta = [{"name": "process_name", "ph": "M", "pid": os.getpid(), "args": {"name": "hybridgraph"}}]
    return {"traceEvents": meta + events, "displayTimeUnit": "ms"}


def dump(finished: bool = True, profile_process: str = "worker") -> None:
    """Write the trace to the configured filename (atomically). `finished=True` also clears
    the recorded events, as MXNet ends the file there; with False the file grows on later dumps."""
    atomic_write(_config["filename"], json.dumps(trace()).encode("utf-8"))
    if finished:
        with _lock:
            _events.clear()


def dump_profile() -> None:
    """Deprecated alias of dump(True)."""
    dump(True)


def _rows(domain: dict, sort_by: str, ascending: bool) -> list[tuple[str, dict]]:
    rows = [(name, {"Count": c, "Total": tot, "Min": lo, "Max": hi, "Avg": tot / c})
            for name, (c, tot, lo, hi) in domain.items()]
    return sorted(rows, key=lambda r: r[1][_SORT_KEYS[sort_by]], reverse=not ascending)


def dumps(reset: bool = False, format: str = "table", sort_by: str = "total",  # noqa: A002 - MXNet's name
          ascending: bool = False) -> str:
    """Aggregate statistics per domain and name: a text table or MXNet's JSON layout.

    Times are milliseconds. `reset` clears the statistics after reading them.
    """
    if format not in ("table", "json"):
        raise ValueError(f"profiler.dumps: format must be 'table' or 'json', got {format!r}")
    if sort_by not in _SORT_KEYS:
        raise ValueError(f"profiler.dumps: sort_by must be one of {sorted(_SORT_KEYS)}, got {sort_by!r}")
    with _lock:
        snapshot = {d: dict(v) for d, v in _stats.items()}
        if reset:
            _stats.clear()
    if format == "json":
        doc = {"Time": {d: dict(_rows(v, sort_by, ascending)) for d, v in snapshot.items()},
               "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}}
        return json.dumps(doc, indent=4)
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    for d, v in snapshot.items():
        lines += [d, "=================",
                  f"{'Name':<40}{'Total Count':>12}{'Time (ms)':>16}{'Min Time (ms)':>16}{'Max Time (ms)':>16}"
                  f"{'Avg Time (ms)':>16}",
                  f"{'----':<40}{'-----------':>12}{'---------':>16}{'-------------':>16}{'-------------':>16}"
                  f"{'-------------':>16}"]
        for name, r in _rows(v, sort_by, ascending):
            lines.append(f"{name:<40}{r['Count']:>12}{r['Total']:>16.4f}{r['Min']:>16.4f}{r['Max']:>16.4f}"
                         f"{r['Avg']:>16.4f}")
        lines.append("")
    return "\n".join(lines)


class Domain:
    """A named group for tasks, frames, counters and markers."""

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return self.name

    def new_task(self, name: str) -> "Task":
        return Task(self, name)

    def new_frame(self, name: str) -> "Frame":
        return Frame(self, name)

    def new_counter(self, name: str, value: int | None = None) -> "Counter":
        return Counter(self, name, value)

    def new_marker(self, name: str) -> "Marker":
        return Marker(self, name)


class _Range:
    """A start()/stop() range recorded as one complete event of its domain."""

    _cat = "range"

    def __init__(self, domain: Domain | None, name: str):
        self.domain, self.name = domain, name
        self._start: int | None = None

    def start(self) -> None:
        self._start = time.perf_counter_ns()

    def stop(self) -> None:
        if self._start is None:
            raise MXNetError(f"profiler {type(self).__name__} {self.name!r}: stop() without start()")
        if _recording():
            _add(self.name, self._cat, str(self.domain) if self.domain else "Custom", self._start,
                 time.perf_counter_ns())
        self._start = None

    def __str__(self) -> str:
        return self.name


class Task(_Range):
    """A named range of work in a domain."""

    _cat = "task"


class Frame(_Range):
    """A named range (e.g. one iteration) in a domain."""

    _cat = "frame"


class Event(_Range):
    """A named range outside any domain."""

    _cat = "event"

    def __init__(self, name: str):
        super().__init__(None, name)


class Counter:
    """A named integer value in a domain, recorded as Chrome-trace counter events."""

    def __init__(self, domain: Domain, name: str, value: int | None = None):
        self.domain, self.name = domain, name
        self.value = 0
        if value is not None:
            self.set_value(value)

    def _emit(self) -> None:
        if _recording():
            with _lock:
                _events.append({"name": self.name, "cat": str(self.domain), "ph": "C",
                                "ts": _us(time.perf_counter_ns()), "pid": os.getpid(),
                                "args": {self.name: self.value}})

    def set_value(self, value: int) -> None:
        self.value = int(value)
        self._emit()

    def increment(self, delta: int = 1) -> None:
        self.set_value(self.value + delta)

    def decrement(self, delta: int = 1) -> None:
        self.set_value(self.value - delta)

    def __iadd__(self, delta: int) -> "Counter":
        self.increment(delta)
        return self

    def __isub__(self, delta: int) -> "Counter":
        self.decrement(delta)
        return self

    def __str__(self) -> str:
        return f"{self.name}={self.value}"


class Marker:
    """An instant event in a domain; `mark(scope)` with scope 'global', 'process', 'thread', ..."""

    _SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}

    def __init__(self, domain: Domain, name: str):
        self.domain, self.name = domain, name

    def mark(self, scope: str = "process") -> None:
        if scope not in self._SCOPES:
            raise ValueError(f"Marker.mark: scope must be one of {sorted(self._SCOPES)}, got {scope!r}")
        if _recording():
            with _lock:
                _events.append({"name": self.name, "cat": str(self.domain), "ph": "i", "s": self._SCOPES[scope],
                                "ts": _us(time.perf_counter_ns()), "pid": os.getpid(),
                                "tid": threading.get_ident() & 0xFFFFFFFF})
