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
from symbol.infer import creation_shapes, is_open_creation

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
        # `_zeros(shape=(L, 0, H))` begin states take their unknown dims from the inputs' shapes
        self._open = any(is_open_creation(n) for n in self._order)
        self._graph = graph
        self._open_attrs: dict[tuple, dict] = {}

    def __call__(self, inputs: Sequence[nd.NDArray], params: Sequence[nd.NDArray]) -> list[nd.NDArray]:
        env: dict[int, list] = {}
        for name, arr in zip(self.traced.input_names, inputs):
            node = self._inputs.get(name)
            if node is not None:
                env[id(node)] = [arr]
        for p, arr in zip(self.traced.params, params):
            # a loaded graph (SymbolBlock.imports) has its own variable nodes: bind by name
            node = self._inputs.get(p.name)
            env[id(node if node is not None else p.var()._outputs[0][0])] = [arr]
        attrs_of = self._creation_attrs(env) if self._open else {}
        for node in self._order:
            ins = [env[id(src)][idx] for src, idx in node.inputs]
            out = run_eager(node.op, attrs_of.get(id(node), node.attrs), ins)
            env[id(node)] = out if isinstance(out, list) else [out]
        with self._lock:
            self.calls += 1
        return [env[id(n)][i] for n, i in self._heads]

    def _creation_attrs(self, env: dict) -> dict:
        """id(node) -> attributes with the inferred shape, for creation nodes with 0 dims."""
        graph = self._graph
        known = {graph.entry_id((n, 0)): tuple(env[id(n)][0].shape)
                 for n in graph.input_nodes() if id(n) in env}
        key = tuple(sorted(known.items()))
        hit = self._open_attrs.get(key)
        if hit is None:
            shapes = creation_shapes(graph, known)
            hit = {id(n): n.attrs.replace(n.op.schema, shape=shapes[id(n)])
                   for n in self._order if id(n) in shapes}
            self._open_attrs[key] = hit
        return hit
