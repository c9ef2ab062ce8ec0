"""`mx.mon` / `mx.monitor`: statistics of every node's output (and the arguments) of bound
executors, every `interval` batches (`tic()` before, `toc()` after a forward/backward)."""
from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from typing import Any

from hybridgraph import nd

__all__ = ["Monitor"]


def _asum_stat(x: nd.NDArray) -> nd.NDArray:
    """MXNet's default statistic: norm(x) / sqrt(size)."""
    return nd.norm(x) / math.sqrt(x.size)


class Monitor:
    """Collect `stat_func(array)` for outputs whose name matches `pattern` (re.match), then the
    executors' arguments and auxiliary states at `toc()`; `sort` orders the result by name."""

    def __init__(self, interval: int, stat_func: Callable | None = None, pattern: str = ".*", sort: bool = False,
                 monitor_all: bool = False):
        self.stat_func = stat_func or _asum_stat
        self.interval = interval
        self.activated = False
        self.queue: list = []
        self.step = 0
        self.exes: list = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

        def stat_helper(name: str, array: nd.NDArray) -> None:
            if self.activated and self.re_prog.match(name):
                self.queue.append((self.step, name, self.stat_func(array)))
        self.stat_helper = stat_helper

    def install(self, exe: Any) -> None:
        """Watch executor `exe`."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self) -> None:
        """Start collecting if this batch is one of every `interval`."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self) -> list[tuple[int, str, str]]:
        """Stop collecting; (step, name, statistic as text) for everything collected."""
        if not self.activated:
            return []
        for exe in self.exes:
            for names, arrays in ((exe._symbol.list_arguments(), exe.arg_arrays),
                                  (exe._symbol.list_auxiliary_states(), exe.aux_arrays)):
                for name, array in zip(names, arrays):
                    if self.re_prog.match(name):
                        self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for n, k, values in self.queue:
            values = [values] if isinstance(values, nd.NDArray) else values
            if not isinstance(values, list):
                raise AssertionError(f"Monitor stat_func must return an NDArray or a list of them, got {values!r}")
            text = ""
            for v in values:
                if not isinstance(v, nd.NDArray):
                    raise AssertionError(f"Monitor stat_func must return NDArrays, got {type(v).__name__}")
                text += (str(v.asscalar()) if v.shape == (1,) else str(v.asnumpy())) + "\t"
            res.append((n, k, text))
        self.queue = []
        return res

    def toc_print(self) -> None:
        """toc(), logged one line per statistic."""
        for n, k, v in self.toc():
            logging.info("Batch: %7d %30s %s", n, k, v)
