"""Running a traced graph on concrete arrays (the hybridized call path).

A `CachedGraph` is built once per trace and compiles the graph with
symbol.plan (optimisation passes, memory planning, generated straight-line
code), once for inference and once for training when gradients are needed.
A hybridized call records ONE node on the autograd tape; its backward runs the
compiled backward graph with the activations the forward saved.

`HYBRIDGRAPH_INTERPRET=1` runs graphs node by node through the eager kernels
instead (each kernel on the tape) — a debugging aid that gives the same results.
"""
from __future__ import annotations

import os
import threading
from typing import Sequence

import nd
from nd import autograd
from nd.dispatch import run_eager
from nd.ndarray import NDArray
from symbol.graph import IndexedGraph
from symbol.infer import creation_shapes, is_open_creation
from symbol.plan.compiled import CompiledGraph, compile_graph

from .tracing import TracedGraph

INTERPRET = os.environ.get("HYBRIDGRAPH_INTERPRET", "") not in ("", "0")


class CachedGraph:
    """A traced graph prepared for repeated execution; safe to call from several threads."""

    def __init__(self, traced: TracedGraph, static_alloc: bool = False, name: str = "hybridblock"):
        self.traced = traced
        self.static_alloc = static_alloc
        self.name = name
        graph = IndexedGraph(traced.symbol._outputs)
        present = {n.name for n in graph.input_nodes()}
        self._feed = [n in present for n in traced.input_names] + [p.name in present for p in traced.params]
        self._input_names = [n for n, keep in zip(traced.input_names + traced.param_names(), self._feed) if keep]
        self._compiled: dict[tuple, CompiledGraph] = {}
        self._lock = threading.Lock()
        self._graph = graph
        self._open_attrs: dict[tuple, dict] = {}
        # train-aware ops (BatchNorm, Dropout) pick their backward formula by the backward
        # pass's own train mode (MXNet); a predict-mode recording can't know it in advance
        self._mode_dependent = any(n.op is not None and n.op.train_aware for n in graph.nodes)
        self.calls = 0

    # -- compiled execution --------------------------------------------------------------
    def compiled(self, for_training: bool, ctx, wrt: tuple | None = None) -> CompiledGraph:
        """The compiled graph for inference, or for training with gradients of `wrt` only."""
        key = (for_training, ctx, wrt)
        cg = self._compiled.get(key)
        if cg is None:
            with self._lock:
                cg = self._compiled.get(key)
                if cg is None:
                    cg = compile_graph(self.traced.symbol._outputs, self._input_names, for_training=for_training,
                                       ctx=ctx, static_alloc=self.static_alloc,
                                       wrt=None if wrt is None else list(wrt))
                    self._compiled[key] = cg
        return cg

    def __call__(self, inputs: Sequence[NDArray], params: Sequence[NDArray]) -> list[NDArray]:
        arrays = [a for a, keep in zip(list(inputs) + list(params), self._feed) if keep]
        self.calls += 1
        if INTERPRET:
            return self._interpret(arrays)
        ctx = arrays[0].context if arrays else nd.current_context()
        recording, training = autograd._STATE.get()
        need_grad = recording and any(a._ag is not None for a in arrays)
        if need_grad and not training and self._mode_dependent:
            return self._interpret(arrays)  # rare: per-op tape, each backward in its own mode
        # gradients only for inputs connected to variables (not the batch, frozen parameters)
        wrt = tuple(n for n, a in zip(self._input_names, arrays) if a._ag is not None) if need_grad else None
        cg = self.compiled(need_grad, ctx, wrt)
        outs, saved = cg.forward([a._data for a in arrays], is_train=training, record=need_grad)
        results = [NDArray._wrap(o, ctx) for o in outs]
        if need_grad:
            self._record(cg, saved, arrays, outs, results, ctx)
        return results

    def _record(self, cg: CompiledGraph, saved, arrays: list, outs: list, results: list, ctx) -> None:
        """Put one node on the tape whose backward is the compiled backward graph."""
        def grad_fn(_inputs, _outputs, ograds):
            grads = cg.backward(saved, [g._data for g in ograds], retain_graph=autograd.retaining())
            return [None if g is None else NDArray._wrap(g, ctx) for g in grads]

        node = autograd.TapeNode(grad_fn, arrays, outs, self.name)
        for i, r in enumerate(results):
            r._ag = (node, i)

    def memory_stats(self) -> dict | None:
        """Planned / naive / lower-bound bytes of the most recently compiled variant."""
        for cg in self._compiled.values():
            return cg.memory_stats()
        return None

    # -- interpreted execution (debugging aid) ---------------------------------------------
    def _interpret(self, arrays: list[NDArray]) -> list[NDArray]:
        graph = self._graph
        by_name = {n.name: n for n in graph.input_nodes()}
        env = {id(by_name[name]): [arr] for name, arr in zip(self._input_names, arrays)}
        attrs_of = self._creation_attrs(env) if any(is_open_creation(n) for n in graph.nodes) else {}
        for node in graph.nodes:
            if node.op is None:
                continue
            ins = [env[id(src)][idx] for src, idx in node.inputs]
            out = run_eager(node.op, attrs_of.get(id(node), node.attrs), ins)
            env[id(node)] = out if isinstance(out, list) else [out]
        return [env[id(n)][i] for n, i in self.traced.symbol._outputs]

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
                   for n in graph.nodes if id(n) in shapes}
            self._open_attrs[key] = hit
        return hit
