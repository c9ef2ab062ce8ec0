"""Running a traced graph on concrete arrays (the hybridized call path).

A `CachedGraph` is built once per trace and compiles the graph with
symbol.plan (optimisation passes, memory planning, generated straight-line
code), once for inference and once for training when gradients are needed.
A hybridized call records ONE node on the autograd tape; its backward runs the
compiled backward graph with the activations the forward saved.

Inference calls (not recording, predict mode) of a graph with BatchNorm after a
Convolution / FullyConnected run a third variant compiled with the parameters'
current values frozen, BatchNorm folded into the weights (`_Folded`). It is
rebuilt at the first inference call after any parameter changes: the parameter
buffers are watched (nd.writes) and compared by identity on every call.

Folding rounds differently from the unfolded graph (last bits), so the choice is made
once per parameter state, at its first inference call, and kept until the parameters
change: repeated identical calls are bitwise identical. The first state folds; a later
one folds when the state before it served at least FOLD_YOUNG inference calls (a
validation pass, deployment), not while parameters change between single calls
(alternating training and inference), where the compilation would not pay.

`HYBRIDGRAPH_INTERPRET=1` runs graphs node by node through the eager kernels
instead (each kernel on the tape) — a debugging aid that gives the same results.
"""
from __future__ import annotations

import os
import threading
from itertools import compress, repeat
from operator import attrgetter
from typing import Sequence

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.backend import to_numpy
from hybridgraph.nd.dispatch import run_eager
from hybridgraph.nd.ndarray import NDArray
from hybridgraph.nd.writes import Watch, note_write
from hybridgraph.symbol.graph import IndexedGraph
from hybridgraph.symbol.infer import creation_shapes, is_open_creation, resolved_creation_attrs
from hybridgraph.symbol.plan.compiled import CompiledGraph, compile_graph
from hybridgraph.symbol.plan.monitor import step_reporter

from .replay import replay_gradients
from .tracing import TracedGraph

_AUTOGRAD_ENTRY = autograd.live_entry  # None once a backward freed the graph
_BACKEND_ARRAY = attrgetter("_data")

INTERPRET = os.environ.get("HYBRIDGRAPH_INTERPRET", "") not in ("", "0")

#: a parameter state that served fewer inference calls than this would not have paid for
#: a folded compilation: the next state runs unfolded (see the module docstring)
FOLD_YOUNG = 8


class _Folded:
    """The inference state of one context: the parameter buffers it watches and, once
    built, the variant compiled with their values frozen.

    Valid while every parameter is the same buffer object as when it was built and no
    write reached that memory (`Watch.stale`).
    """

    __slots__ = ("datas", "watch", "cg", "calls", "served", "fold")

    def __init__(self, datas: tuple, fold: bool):
        self.datas = datas                 # strong references: identities stay meaningful
        self.watch = Watch(datas)
        self.fold = fold                   # this state runs folded (decided once: bitwise-stable calls)
        self.cg: CompiledGraph | None = None
        self.calls = 0                     # inference calls since the parameters last changed
        self.served = 0                    # of those, calls the folded variant ran

    def valid(self, datas: tuple) -> bool:
        if self.watch.stale:
            return False
        for a, b in zip(datas, self.datas):
            if a is not b:
                return False
        return True


def _folds_batchnorm(graph: IndexedGraph) -> bool:
    """Whether some normalisation of the graph reads the output of an `affine_channel`
    operator (what fold_batchnorm folds)."""
    for n in graph.nodes:
        if n.op is not None and n.op.inference_scale_shift is not None and n.inputs:
            src = n.inputs[0][0]
            if src.op is not None and src.op.affine_channel is not None:
                return True
    return False


def _mutated_inputs(graph: IndexedGraph, names: list[str]) -> list[int]:
    """Positions in `names` of the variables a training call may write in place: inputs at
    a mutated position or an auxiliary state (BatchNorm's moving statistics, which
    `_backward_BatchNorm` updates in the backward pass)."""
    hit = set()
    for n in graph.nodes:
        if n.op is None:
            continue
        slots = n.op.input_names(n.attrs)
        for pos, (src, _) in enumerate(n.inputs):
            if src.op is None and (pos in n.op.mutated(n.attrs) or (pos < len(slots) and slots[pos] in n.op.aux)):
                hit.add(src.name)
    return [i for i, name in enumerate(names) if name in hit]


class CachedGraph:
    """A traced graph prepared for repeated execution; safe to call from several threads."""

    def __init__(self, traced: TracedGraph, static_alloc: bool = False, name: str = "hybridblock",
                 inline_limit: int = 2):
        self.traced = traced
        self.static_alloc = static_alloc
        self.name = name
        graph = IndexedGraph(traced.symbol._outputs)
        # MXNet's CachedOp inlines a small graph (at most inline_limit operator nodes, no
        # static_alloc) into the autograd record: autograd.get_symbol then shows its nodes
        self.inlined = not static_alloc and sum(n.op is not None for n in graph.nodes) <= inline_limit
        present = {n.name for n in graph.input_nodes()}
        self._feed = [n in present for n in traced.input_names] + [p.name in present for p in traced.params]
        self._feed_all = all(self._feed)
        self._input_names = [n for n, keep in zip(traced.input_names + traced.param_names(), self._feed) if keep]
        self._compiled: dict[tuple, CompiledGraph] = {}
        self._lock = threading.Lock()
        self._graph = graph
        self._open_attrs: dict[tuple, dict] = {}
        # train-aware ops (BatchNorm, Dropout) pick their backward formula by the backward
        # pass's own train mode (MXNet); a predict-mode recording can't know it in advance
        self._mode_dependent = any(n.op is not None and n.op.train_aware for n in graph.nodes)
        self.calls = 0
        params = set(traced.param_names())
        self._param_pos = [i for i, n in enumerate(self._input_names) if n in params]
        self._mutated = _mutated_inputs(graph, self._input_names)
        self._foldable = bool(self._param_pos) and _folds_batchnorm(graph)
        self._folded: dict = {}            # ctx -> _Folded
        self._fold_next = True             # whether the next parameter state folds
        self._last: CompiledGraph | None = None
        # outputs the block returned as they came in (`return x, self.w`): MXNet hands those
        # back by reference, eagerly and hybridized; any other output is a fresh array
        self._passthrough = frozenset(i for i, (n, _) in enumerate(traced.symbol._outputs) if n.op is None)

    # -- compiled execution --------------------------------------------------------------
    def compiled(self, for_training: bool, ctx, wrt: tuple | None = None, passes: bool = True) -> CompiledGraph:
        """The compiled graph for inference, or for training with gradients of `wrt` only;
        `passes=False`: unoptimised, every node of the trace a step of its own (op hooks)."""
        key = (for_training, ctx, wrt, passes)
        cg = self._compiled.get(key)
        if cg is None:
            with self._lock:
                cg = self._compiled.get(key)
                if cg is None:
                    cg = compile_graph(self.traced.symbol._outputs, self._input_names, for_training=for_training,
                                       ctx=ctx, static_alloc=self.static_alloc, passes=passes,
                                       wrt=None if wrt is None else list(wrt))
                    self._compiled[key] = cg
        return cg

    def __call__(self, inputs: Sequence[NDArray], params: Sequence[NDArray], hook: tuple | None = None
                 ) -> list[NDArray]:
        """Run the graph; `hook` = (callback, monitor_all): `callback(name, op_name, array)`
        for each node's outputs (and inputs), the graph then run unoptimised step by step."""
        arrays = [*inputs, *params]
        if not self._feed_all:
            arrays = list(compress(arrays, self._feed))
        self.calls += 1
        if INTERPRET and hook is None:   # a hooked call runs step by step anyway
            return self._interpret(arrays)
        ctx = arrays[0]._ctx if arrays else nd.current_context()
        recording, training = autograd._STATE.get()
        need_grad = recording and any(map(_AUTOGRAD_ENTRY, arrays))
        if need_grad and not training and self._mode_dependent:
            return self._interpret(arrays)  # rare: per-op tape, each backward in its own mode
        # gradients only for inputs connected to variables (not the batch, frozen parameters):
        # an array's autograd entry (a Leaf or a tape position) is never false
        wrt = tuple(compress(self._input_names, map(_AUTOGRAD_ENTRY, arrays))) if need_grad else None
        monitor = None
        if hook is not None:
            cg = self.compiled(need_grad, ctx, wrt, passes=False)
            monitor = step_reporter(hook[0], hook[1], ctx)
        elif self._foldable and not (recording or training):
            cg = self._inference(arrays, ctx)
        else:
            cg = self.compiled(need_grad, ctx, wrt)
        self._last = cg
        plan, outs, saved = cg.run(list(map(_BACKEND_ARRAY, arrays)), is_train=training, record=need_grad,
                                   monitor=monitor)
        aliased = plan.aliased_outputs
        if aliased:   # outputs belong to the caller: never a constant or parameter by reference
            outs = list(outs)
            for i in aliased:
                if i not in self._passthrough:
                    outs[i] = outs[i].copy()
        if training:
            self._note_mutations(arrays)
        results = [NDArray._wrap(o, ctx) for o in outs]
        if need_grad:
            self._record(cg, saved, arrays, outs, results, ctx)
        return results

    def _note_mutations(self, arrays: list[NDArray]) -> None:
        """Report the in-place writes of a training forward or backward (nd.writes)."""
        for i in self._mutated:
            note_write(arrays[i]._data)

    # -- inference with frozen parameters -------------------------------------------------
    def _inference(self, arrays: list[NDArray], ctx) -> CompiledGraph:
        """The folded inference variant when this parameter state folds, else the plain one;
        the same one for every call until the parameters change."""
        datas = tuple(arrays[i]._data for i in self._param_pos)
        st = self._folded.get(ctx)
        if st is not None and st.cg is not None and st.valid(datas):
            st.served += 1                 # the hot path: a few identity checks
            return st.cg
        with self._lock:
            st = self._current(ctx, datas)
            st.calls += 1
            if st.cg is None and st.fold:
                st.cg = self._compile_folded(st, ctx)
            if st.cg is not None:
                st.served += 1
                return st.cg
        return self.compiled(False, ctx, None)

    def _current(self, ctx, datas: tuple) -> _Folded:
        """The context's state for these parameter buffers; a new one when the parameters
        changed since the last call, folded when the state before it served FOLD_YOUNG calls."""
        st = self._folded.get(ctx)
        if st is not None and st.valid(datas):
            return st
        if st is not None:
            self._fold_next = st.calls >= FOLD_YOUNG
            st.watch.close()
        st = self._folded[ctx] = _Folded(datas, self._fold_next)
        return st

    def _compile_folded(self, st: _Folded, ctx) -> CompiledGraph:
        """Compile the inference variant with `st`'s parameter values frozen. The buffers are
        read, not copied: the variant runs only while they are unchanged, and the watch,
        made before they are read, reports any write from then on."""
        values = {self._input_names[i]: to_numpy(d) for i, d in zip(self._param_pos, st.datas)}
        return compile_graph(self.traced.symbol._outputs, self._input_names, for_training=False, ctx=ctx,
                             static_alloc=self.static_alloc, params=values)

    def _record(self, cg: CompiledGraph, saved, arrays: list, outs: list, results: list, ctx) -> None:
        """Put one node on the tape whose backward is the compiled backward graph."""
        wrt_pos = cg.wrt_inputs

        def grad_fn(_inputs, _outputs, ograds):
            if autograd.is_recording():   # create_graph: gradients recorded on the tape
                grads = replay_gradients(saved.plan.sched, arrays, ograds, saved.is_train, self.name)
                by_name = dict(zip(cg.wrt, grads))
                return [by_name.get(n) for n in cg.input_names]
            # parameter gradients go straight into the parameters' .grad buffers when allowed
            buffers, dests = autograd.claim_grad_buffers(node.parents, wrt_pos) or (repeat(None), None)
            grads = cg.backward(saved, [g._data for g in ograds], retain_graph=autograd.retaining(), out=dests)
            self._note_mutations(arrays)
            # a claimed buffer is returned as itself: backward() sees it was written there
            return [b if b is not None else None if g is None else wrap(g, ctx) for b, g in zip(buffers, grads)]

        wrap = NDArray._wrap
        # what autograd.get_symbol makes of this call (symbol/tape_symbol.py)
        grad_fn.block_graph = (self.traced.symbol._outputs, self._input_names, self.inlined)
        node = autograd.TapeNode(grad_fn, arrays, outs, self.name, uses_outputs=False)
        for i, r in enumerate(results):
            r._ag = (node, i)

    def compiled_graphs(self) -> list[CompiledGraph]:
        """Every compiled variant of this graph (for the plan cache report, cache_info())."""
        return [*self._compiled.values(), *(st.cg for st in list(self._folded.values()) if st.cg is not None)]

    def memory_stats(self) -> dict | None:
        """Planned / naive / lower-bound bytes of the variant that ran last."""
        if self._last is not None and self._last.last_plan is not None:
            return self._last.memory_stats()
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
            hit = {id(n): resolved_creation_attrs(n, shapes[id(n)])
                   for n in graph.nodes if id(n) in shapes}
            self._open_attrs[key] = hit
        return hit
