"""Tracing a HybridBlock into a Symbol graph.

Inputs become tracers named `data` (or `data0`, `data1`, ...), parameters
become their variables, and the block's own forward code runs once on
them; every operator it applies evaluates shapes and dtypes abstractly
(symbol/tracer.py). The result records what the code read, so the cache can
tell whether a new input shape needs a new trace.
"""
from __future__ import annotations

import dataclasses
import numbers
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.symbol import Symbol
from hybridgraph.symbol.graph import IndexedGraph
from hybridgraph.symbol.tracer import LegacyTracer, TraceState, Tracer, trace_scope
from hybridgraph.util import is_np_array

from .parameter import _TRACING, Parameter

_LEAF_TYPES = (nd.NDArray, Symbol)


def flatten(args: Any) -> tuple[list, Any]:
    """Flatten nested lists/tuples/dicts of arrays into (leaves, format)."""
    if isinstance(args, _LEAF_TYPES) or args is None or isinstance(args, (numbers.Number, np.generic, str)):
        return [args], 0
    if isinstance(args, dict):
        keys = sorted(args)
        flat, fmts = [], []
        for k in keys:
            f, fmt = flatten(args[k])
            flat.extend(f)
            fmts.append(fmt)
        return flat, ("dict", tuple(keys), tuple(fmts))
    if isinstance(args, (list, tuple)):
        flat, fmts = [], []
        for a in args:
            f, fmt = flatten(a)
            flat.extend(f)
            fmts.append(fmt)
        return flat, (type(args).__name__, tuple(fmts))
    raise TypeError(f"HybridBlock inputs and outputs must be (nested) lists/tuples/dicts of NDArrays, "
                    f"Symbols, numbers or None; got {type(args).__name__}")


def flatten_call(args: tuple, kwargs: dict) -> tuple[list, Any]:
    """`flatten((args, kwargs))` of a call, with a shortcut for the common call (positional
    arrays only) that gives the same result."""
    if not kwargs:
        for a in args:
            if not isinstance(a, _LEAF_TYPES):
                break
        else:
            return list(args), ("tuple", (("tuple", (0,) * len(args)), ("dict", (), ())))
    return flatten((tuple(args), dict(kwargs)))


def regroup(flat: list, fmt: Any, lists: bool = False) -> Any:
    """Inverse of flatten. With ``lists`` every tuple comes back as a list: MXNet 1.9.1's
    cached op regroups a hybridized block's outputs into (nested) lists whatever the
    block returned (``gluon.block._regroup``)."""
    if fmt == 0:     # one output (the usual hybridized call): no closure, no iterator
        return flat[0]
    def build(it, fmt):
        if fmt == 0:
            return next(it)
        if fmt[0] == "dict":
            return {k: build(it, f) for k, f in zip(fmt[1], fmt[2])}
        items = [build(it, f) for f in fmt[1]]
        return tuple(items) if fmt[0] == "tuple" and not lists else items
    return build(iter(flat), fmt)


def signatures(flat: list) -> tuple[tuple, tuple]:
    """The cache keys of the inputs: (shape, dtype) of arrays and values of constants, and
    the same with only the rank of each array (for shape-generic graphs)."""
    exact, generic = [], []
    for x in flat:
        if isinstance(x, nd.NDArray):
            shape, dt = x.shape, x._data.dtype.str
            exact.append((shape, dt))
            generic.append((len(shape), dt))
        else:
            s = ("const", type(x).__name__, x if not isinstance(x, np.generic) else x.item())
            exact.append(s)
            generic.append(s)
    return tuple(exact), tuple(generic)


@dataclasses.dataclass
class TracedGraph:
    """One trace of a block: its graph, and how to feed and unpack it."""

    symbol: Symbol
    input_names: list[str]       # variable names of the array inputs, in flat order
    array_positions: list[int]   # which flat input positions are arrays
    params: list[Parameter]      # parameters used by the graph, in graph input order
    out_fmt: Any
    shape_generic: bool          # the code never read a concrete shape
    out_consts: dict = dataclasses.field(default_factory=dict)  # flat output position -> None / number

    def fill_outputs(self, outs: list) -> list:
        """The graph's outputs with the constant outputs (None, numbers) put back in place."""
        if not self.out_consts:
            return outs
        it = iter(outs)
        n = len(outs) + len(self.out_consts)
        return [self.out_consts[i] if i in self.out_consts else next(it) for i in range(n)]

    def param_names(self) -> list[str]:
        return [p.name for p in self.params]


def trace_block(block: Any, args: tuple, kwargs: dict) -> TracedGraph:
    """Run the block's forward on tracers and return the resulting graph."""
    flat, fmt = flatten_call(args, kwargs)
    positions = [i for i, x in enumerate(flat) if isinstance(x, nd.NDArray)]
    names = ["data"] if len(positions) == 1 else [f"data{k}" for k in range(len(positions))]
    state = TraceState(block.name)
    state.block_paths = block_paths(block)
    params = list(block.collect_params().values())
    with trace_scope(state):
        for name, i in zip(names, positions):
            tracer = Tracer([_input_entry(name)])
            state.set_aval(tracer._outputs[0], flat[i].shape, flat[i].dtype)
            state.concrete_inputs.add(id(tracer._outputs[0][0]))
            flat[i] = tracer
        ptracers = {}
        for p in params:
            tracer = Tracer(p.var()._outputs)
            state.set_aval(tracer._outputs[0], p.shape if p.shape else None, p.dtype)
            ptracers[id(p)] = tracer
        token = _TRACING.set(ptracers)
        try:
            targs, tkwargs = regroup(flat, fmt)
            with block.name_scope():
                out = block.forward(*targs, **tkwargs)
        finally:
            _TRACING.reset(token)
        out_flat, out_fmt = flatten(_split_groups(out))
        consts = {i: o for i, o in enumerate(out_flat) if not isinstance(o, Symbol)}
        for o in consts.values():
            if not (o is None or isinstance(o, (numbers.Number, np.generic, str))):
                raise TypeError(f"{block.name}: a hybridized block must return arrays computed from its inputs, "
                                f"got {type(o).__name__} among its outputs")
        out_flat = [o for o in out_flat if isinstance(o, Symbol)]
        if is_np_array():
            from .call_checks import check_traced_outputs  # noqa: PLC0415 - call_checks imports this module
            check_traced_outputs(block, out_flat)
        if not out_flat:
            raise TypeError(f"{block.name}: a hybridized block must return at least one array computed "
                            "from its inputs")
        _learn_param_shapes(state, params, ptracers)
    sym = Symbol([o._outputs[0] for o in out_flat])
    graph_inputs = {id(n) for n in IndexedGraph(sym._outputs).input_nodes()}
    used = [p for p in params if id(p.var()._outputs[0][0]) in graph_inputs]
    return TracedGraph(sym, names, positions, used, out_fmt, not state.shape_read, consts)


def block_paths(root: Any) -> dict[int, list[str]]:
    """id(block) -> structural path from `root` (`[root.name, 'features', '3']`), for error messages."""
    paths: dict[int, list[str]] = {}

    def walk(block: Any, path: list[str]) -> None:
        paths.setdefault(id(block), path)
        for key, child in block._children.items():
            walk(child, path + [key])
    walk(root, [root.name])
    return paths


def _split_groups(out: Any) -> Any:
    """A multi-output symbol returned as one value becomes a list of single outputs."""
    if isinstance(out, Symbol) and len(out._outputs) > 1:
        return [(LegacyTracer if type(out) is LegacyTracer else Tracer)([e]) for e in out._outputs]
    if isinstance(out, (list, tuple)):
        return type(out)(_split_groups(o) for o in out)
    return out


def _input_entry(name: str):
    from hybridgraph.symbol.graph import Node
    return (Node(None, name, None, (), {}), 0)


def _learn_param_shapes(state: TraceState, params: list[Parameter], ptracers: dict) -> None:
    """Deferred initialisation: shapes the trace inferred for parameters become theirs."""
    for p in params:
        shape = state.aval(ptracers[id(p)]._outputs[0])[0]
        if shape is not None and all(d > 0 for d in shape) and (p.shape is None or 0 in p.shape):
            p.shape = tuple(shape)
