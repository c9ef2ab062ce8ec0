"""Running a traced graph on concrete arrays (the hybridized call path).

`CachedGraph` is built once per trace. It orders the graph's nodes once and
runs each through the registry's kernels; when autograd is recording, each
kernel call lands on the tape so gradients match eager execution.
"""
from __future__ import annotations

import threading
from typing import Sequence

import nd
from nd.dispatch import run_eager
from symbol.graph import IndexedGraph

from .tracing import TracedGraph


class CachedGraph:
    """A traced graph prepared for repeated execution; safe to call from several threads."""

    def __init__(self, traced: TracedGraph):
        self.traced = traced
        graph = IndexedGraph(traced.symbol._outputs)
        self._order = [n for n in graph.nodes if n.op is not None]
        self._inputs = {n.name: n for n in graph.input_nodes()}
        self._heads = list(traced.symbol._outputs)
        self._lock = threading.Lock()
        self.calls = 0

    def __call__(self, inputs: Sequence[nd.NDArray], params: Sequence[nd.NDArray]) -> list[nd.NDArray]:
        env: dict[int, list] = {}
        for name, arr in zip(self.traced.input_names, inputs):
            node = self._inputs.get(name)
            if node is not None:
                env[id(node)] = [arr]
        for p, arr in zip(self.traced.params, params):
            env[id(p.var()._outputs[0][0])] = [arr]
        for node in self._order:
            ins = [env[id(src)][idx] for src, idx in node.inputs]
            out = run_eager(node.op, node.attrs, ins)
            env[id(node)] = out if isinstance(out, list) else [out]
        with self._lock:
            self.calls += 1
        return [env[id(n)][i] for n, i in self._heads]
