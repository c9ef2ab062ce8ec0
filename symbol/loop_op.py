"""The body graphs and kernels of `_while_loop` (declared in nd/ops/loop.py): symbolic
`while_loop` as one operator that runs its body graph per iteration.

`symbol.contrib.while_loop` calls the user's `cond` and `func` once, on placeholder
variables for the loop variables, and cuts the two graphs they return out of the
surrounding one (MXNet's `_cut_subgraph`): every entry they use that does not depend
on a loop variable (a free variable, a parameter, an outer expression) becomes an
input of the node, replaced inside the body by another placeholder. The node's
inputs are the loop variables then those free inputs; its outputs are the step
outputs, stacked along a new first axis of length `max_iterations` (rows after the
loop ended are zeros; MXNet leaves them uninitialised), then the final loop
variables.

The kernel runs the loop: each iteration evaluates `cond` and then `func` through the
eager dispatch, so the graph has one node however many iterations run, and binding,
shape inference and compilation cost the same for 5 or 1000 iterations. The gradient
is the hidden `_backward_while_loop`, which replays the loop on the tape (autograd)
from the same inputs and back-propagates the head gradients: bodies that draw random
numbers would draw new ones in that replay, so their gradients are not supported.

The body graphs live in a process-wide table keyed by the node's `loop` attribute, so
a graph with this node cannot be written as MXNet JSON (MXNet's `_while_loop` stores
subgraphs); `tojson()` / `save()` / `export()` say so.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hybridgraph.nd import autograd
from hybridgraph.nd.dispatch import run_eager
from hybridgraph.nd.errors import MXNetError, ShapeError

from .graph import IndexedGraph, Node, topo_sort

#: loop key -> its body graphs (see the module docstring)
LOOPS: dict[str, "LoopGraph"] = {}
_KEYS = itertools.count()


@dataclass
class LoopGraph:
    """The cut body of one while_loop: `cond` (one entry) and `func` (step outputs then new
    loop variables) over `placeholders` (the loop variables, then the free inputs)."""

    cond: tuple
    func: list
    placeholders: list
    n_vars: int
    n_out: int
    max_iterations: int
    _orders: dict = field(default_factory=dict)
    _graph: Any = None

    def order(self, which: str) -> list:
        if which not in self._orders:
            heads = [self.cond] if which == "cond" else self.func
            self._orders[which] = [n for n in topo_sort(heads) if n.op is not None]
        return self._orders[which]

    def graph(self) -> IndexedGraph:
        if self._graph is None:
            self._graph = IndexedGraph([self.cond, *self.func, *((p, 0) for p in self.placeholders)])
        return self._graph


def add_loop(loop: LoopGraph) -> str:
    key = f"loop{next(_KEYS)}"
    LOOPS[key] = loop
    return key


def cut_subgraph(heads: list, placeholders: list) -> tuple[list, list]:
    """(heads rewritten over placeholders only, the free entries they need).

    Nodes that depend on a placeholder are copied with their inputs remapped; every
    entry they (or the heads) take from elsewhere becomes a new placeholder variable,
    one per distinct entry, named after it."""
    dep = {id(p) for p in placeholders}
    order = topo_sort(heads)
    for n in order:
        if any(id(src) in dep for src, _ in n.inputs):
            dep.add(id(n))
    copies: dict[int, Node] = {id(p): p for p in placeholders}
    free: dict[tuple[int, int], tuple] = {}   # (id(node), idx) -> (entry, placeholder node)

    def remap(entry):
        src, i = entry
        if id(src) in dep:
            return copies[id(src)], i
        key = (id(src), i)
        if key not in free:
            free[key] = (entry, Node(None, src.output_names()[i]))
        return free[key][1], 0

    for n in order:
        if id(n) in dep and id(n) not in copies:
            new = Node(n.op, n.name, n.attrs, [remap(e) for e in n.inputs], dict(n.var_attrs))
            new.subgraphs = n.subgraphs   # a nested foreach keeps its body
            copies[id(n)] = new
    new_heads = [remap(e) for e in heads]
    entries = [e for e, _ in free.values()]
    return new_heads, list(zip(entries, [p for _, p in free.values()]))


# -- running the body ----------------------------------------------------------------------

def _evaluate(loop: LoopGraph, which: str, values: list) -> list:
    env: dict[int, list] = {id(p): [v] for p, v in zip(loop.placeholders, values)}
    for node in loop.order(which):
        ins = []
        for src, i in node.inputs:
            got = env[id(src)]
            if i >= len(got):
                raise NotImplementedError(f"while_loop: node {node.name} reads hidden output {i} of "
                                          f"{src.name} ({src.op.name}), which the loop body cannot pass on")
            ins.append(got[i])
        res = run_eager(node.op, node.attrs, ins)
        env[id(node)] = list(res) if isinstance(res, (list, tuple)) else [res]
    heads = [loop.cond] if which == "cond" else loop.func
    return [env[id(n)][i] for n, i in heads]


def _truth(value: Any) -> bool:
    data = value.asnumpy().reshape(-1)
    if data.size != 1:
        raise ValueError(f"while_loop: cond must return an array of size 1, got shape {value.shape}")
    return bool(data[0])


def run_loop(loop: LoopGraph, arrays: list, out_shapes: list, out_dtypes: list, differentiable: bool):
    """(stacked step outputs, final loop variables) for NDArray inputs `arrays`."""
    from hybridgraph.nd import ops_namespace as F, zeros  # noqa: N812, PLC0415
    nv = loop.n_vars
    loop_vars, free = list(arrays[:nv]), list(arrays[nv:])
    steps: list[list] = []
    for _ in range(loop.max_iterations):
        if not _truth(_evaluate(loop, "cond", loop_vars + free)[0]):
            break
        res = _evaluate(loop, "func", loop_vars + free)
        steps.append(res[:loop.n_out])
        new_vars = res[loop.n_out:]
        for k, (old, new) in enumerate(zip(loop_vars, new_vars)):
            if old.shape != new.shape:
                raise ShapeError(f"while_loop: loop variable {k} changed shape from {old.shape} to "
                                 f"{new.shape}; loop variables must keep their shapes")
        loop_vars = [v if v.dtype == o.dtype else v.astype(o.dtype) for v, o in zip(new_vars, loop_vars)]
    ctx = arrays[0].context
    outs = []
    for k in range(loop.n_out):
        shape, dtype = tuple(out_shapes[k]), out_dtypes[k]
        rows = [s[k] for s in steps]
        pad = loop.max_iterations - len(rows)
        if differentiable:
            parts = [F.stack(*rows, axis=0)] if rows else []
            if pad:
                parts.append(zeros((pad, *shape[1:]), ctx=ctx, dtype=dtype))
            outs.append(parts[0] if len(parts) == 1 else F.concat(*parts, dim=0))
        else:
            buf = np.zeros(shape, dtype=dtype) if ctx.xp is np else ctx.xp.zeros(shape, dtype=dtype)
            for t, r in enumerate(rows):
                buf[t] = r._data
            outs.append(type(arrays[0])._wrap(buf, ctx))
    return outs, loop_vars


# -- the operators ---------------------------------------------------------------------------

def _loop_of(a) -> LoopGraph:
    key = a.loop
    if key not in LOOPS:
        raise MXNetError(f"_while_loop: unknown loop body {key!r}; a _while_loop node is made by "
                         "symbol.contrib.while_loop in this process and cannot be read from JSON")
    return LOOPS[key]


def _infer(loop: LoopGraph, values: list, solve) -> tuple[list, list] | None:
    graph = loop.graph()
    known = {graph.entry_id((p, 0)): v for p, v in zip(loop.placeholders, values) if v is not None}
    table = solve(graph, known)
    ins = [table[graph.entry_id((p, 0))] for p in loop.placeholders]
    outs = [table[graph.entry_id(e)] for e in loop.func]
    return ins, outs


def infer_shape(a, *shapes):
    from .infer import graph_shapes  # noqa: PLC0415
    loop = _loop_of(a)
    ins, outs = _infer(loop, list(shapes), graph_shapes)
    steps = [None if s is None else (loop.max_iterations, *s) for s in outs[:loop.n_out]]
    for k in range(loop.n_vars):
        old, new = ins[k], outs[loop.n_out + k]
        if old is not None and new is not None and 0 not in old + new and tuple(old) != tuple(new):
            raise ShapeError(f"while_loop: loop variable {k} (new versus old): shapes differ, {tuple(new)} "
                             f"versus {tuple(old)}; func must return loop variables of unchanged shapes")
    final = [ins[k] if ins[k] is not None else outs[loop.n_out + k] for k in range(loop.n_vars)]
    return ins, steps + final


def infer_type(a, *dtypes):
    from .infer import graph_types  # noqa: PLC0415
    loop = _loop_of(a)
    ins, outs = _infer(loop, list(dtypes), graph_types)
    final = [ins[k] if ins[k] is not None else outs[loop.n_out + k] for k in range(loop.n_vars)]
    return ins, list(outs[:loop.n_out]) + final


def _wrap_all(xp, arrays) -> list:
    from hybridgraph.nd.backend import cpu, gpu  # noqa: PLC0415
    from hybridgraph.nd.ndarray import NDArray  # noqa: PLC0415
    ctx = cpu() if xp is np else gpu(int(arrays[0].device.id))
    return [NDArray._wrap(x, ctx) for x in arrays]


def _specs(a, arrays) -> tuple[list, list]:
    shapes = infer_shape(a, *[tuple(x.shape) for x in arrays])[1]
    dtypes = infer_type(a, *[np.dtype(x.dtype) for x in arrays])[1]
    if any(s is None for s in shapes) or any(d is None for d in dtypes):
        raise ShapeError(f"_while_loop: cannot infer the step outputs' shapes from input shapes "
                         f"{[tuple(x.shape) for x in arrays]}")
    return shapes, dtypes


def forward(xp, a, arrays, is_train: bool) -> tuple:
    """The `_while_loop` kernel (declared in nd/ops/loop.py)."""
    loop = _loop_of(a)
    shapes, dtypes = _specs(a, arrays)
    with autograd.pause(is_train):
        outs, final = run_loop(loop, _wrap_all(xp, arrays), shapes, dtypes, differentiable=False)
    return tuple(o._data for o in outs) + tuple(v._data for v in final)


def backward(xp, a, arrays) -> tuple:
    """The `_backward_while_loop` kernel: the loop replayed on the tape, then backward."""
    loop = _loop_of(a)
    nout = loop.n_out + loop.n_vars
    wrapped = _wrap_all(xp, arrays)
    ograds, ins = wrapped[:nout], [x.copy() for x in wrapped[nout:]]
    shapes, dtypes = _specs(a, [x._data for x in ins])
    for x in ins:
        x.attach_grad()
    with autograd.record(True):
        outs, final = run_loop(loop, ins, shapes, dtypes, differentiable=True)
    heads = [(o, g) for o, g in zip(outs + final, ograds) if o._ag is not None]
    if heads:
        autograd.backward([h for h, _ in heads], [g for _, g in heads])
    return tuple(x.grad._data for x in ins)


def num_results(a) -> int:
    loop = _loop_of(a)
    return loop.n_out + loop.n_vars


def bw_shape(a, *shapes):
    n = num_results(a)
    return list(shapes), list(shapes[n:])


def bw_type(a, *dtypes):
    n = num_results(a)
    return list(dtypes), list(dtypes[n:])
