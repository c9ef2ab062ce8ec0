"""Symbolic `contrib.foreach` as one `_foreach` node (declared in nd/ops/loop.py) that holds
its body as a subgraph, in MXNet 1.9.1's form, so such graphs have any data length, bind,
differentiate, and round-trip through MXNet's JSON (the node's `subgraphs` list).

The body is built once, on placeholder variables named `<input>-<index>` (MXNet's names)
for one data slice and the states, then cut out of the surrounding graph
(`loop_op.cut_subgraph`): every other entry it reads becomes one more variable of the
subgraph, and one more input of the node. As in MXNet, the node's inputs are the data,
then the initial states, then those others in the subgraph's input order;
`in_data_locs`, `in_state_locs` and `remain_locs` say where each sits among the
subgraph's inputs (`list_inputs()` order); `num_args` counts the subgraph too. A body
output that is a variable goes through `identity` (MXNet's `_construct_subgraph`).

The kernel evaluates the body per slice through the eager dispatch (`loop_op._evaluate`);
the gradient replays the loop on the autograd tape. The body is kept in `loop_op.LOOPS`;
the node's hidden `loop` value names it and is never written (the subgraph is). A node
read from JSON gets its key from its subgraph (`bind_loaded`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hybridgraph.nd import autograd
from hybridgraph.nd.attrs import Attrs
from hybridgraph.nd.errors import MXNetError, ShapeError
from hybridgraph.nd.registry import get_op

from .graph import Node, topo_sort
from .naming import NameManager
from .loop_op import LOOPS, LoopGraph, _evaluate, _infer, _wrap_all, add_loop, cut_subgraph

__all__ = ["make_body", "bind_loaded", "hide_key"]


class LoopBodyError(MXNetError, AssertionError):
    """A foreach body that leaves a data or state input unused (MXNet 1.9.1 asserts)."""


def _uniq_name(entry: tuple) -> str:
    """MXNet's `_get_sym_uniq_name`: `<name>-<output index>`."""
    node, idx = entry
    return f"{node.name}-{idx}"


def make_body(heads: list, n_out: int, data_ph: list, state_ph: list, sub_name: str) -> tuple[Any, list, dict]:
    """(subgraph heads, free entries in the subgraph's input order, the location attributes)
    for a body whose `heads` (`n_out` step outputs, then new states) read placeholders."""
    new_heads, free = cut_subgraph(heads, data_ph + state_ph)
    ident = get_op("identity")
    out_names = {node.name for node, _ in new_heads[:n_out]}
    fixed = []
    for k, (node, idx) in enumerate(new_heads):
        # MXNet's _construct_subgraph: no output is an input variable, no state an output
        if node.op is None or (k >= n_out and node.name in out_names):
            copy = Node(ident, NameManager.current().get(None, "identity"), ident.schema.parse({}), [(node, idx)],
                        {"__subgraph_name__": sub_name})
            node, idx = copy, 0
        fixed.append((node, idx))
    inputs = [n for n in topo_sort(fixed) if n.op is None]
    pos = {id(n): i for i, n in enumerate(inputs)}
    for what, phs in (("data", data_ph), ("state", state_ph)):
        for p in phs:
            if id(p) not in pos:
                raise LoopBodyError(f"foreach: the {what} array {p.name!r} has to be used in the loop body "
                                 "(MXNet 1.9.1 requires it)")
    by_node = {id(p): e for e, p in free}
    remain = [(pos[id(n)], by_node[id(n)]) for n in inputs if id(n) in by_node]
    locs = {"in_data_locs": str([pos[id(p)] for p in data_ph]),
            "in_state_locs": str([pos[id(p)] for p in state_ph]),
            "remain_locs": str([i for i, _ in remain])}
    return fixed, [e for _, e in remain], locs


def register_body(heads: list) -> str:
    """The key of a new body whose variables are its placeholders, in input order."""
    inputs = [n for n in topo_sort(heads) if n.op is None]
    return add_loop(LoopGraph(heads[0], list(heads), inputs, 0, len(heads), 0))


def hide_key(attrs: Attrs, key: str) -> Attrs:
    """`attrs` with the body's key as a value that is not written (not in `given`), but that
    keeps two nodes with different bodies apart (cache and CSE keys)."""
    given = {k: v for k, v in attrs.given.items() if k != "loop"}
    values = attrs.values()
    values["loop"] = key
    out = Attrs(values, given)
    out._key = (*sorted(given.items()), ("loop", key))
    return out


def bind_loaded(node: Node) -> None:
    """A `_foreach` node read from JSON: its body is its subgraph."""
    if len(node.subgraphs) != 1:
        raise MXNetError(f"node {node.name!r} (_foreach): expected one subgraph, got {len(node.subgraphs)}")
    key = register_body(list(node.subgraphs[0]._outputs))
    node.attrs = hide_key(node.attrs, key)


# -- the kernels -----------------------------------------------------------------------------

def _body_of(a) -> LoopGraph:
    if a.loop not in LOOPS:
        raise MXNetError(f"_foreach: unknown loop body {a.loop!r}; a _foreach node gets its body from "
                         "symbol.contrib.foreach or from its subgraph in JSON")
    return LOOPS[a.loop]


def _split(a, items: list) -> tuple[list, list, list]:
    nd_, ns = len(a.in_data_locs), len(a.in_state_locs)
    return list(items[:nd_]), list(items[nd_:nd_ + ns]), list(items[nd_ + ns:])


def _values(a, n_sub: int, slices: list, states: list, remain: list) -> list:
    vals: list = [None] * n_sub
    for locs, items in ((a.in_data_locs, slices), (a.in_state_locs, states), (a.remain_locs, remain)):
        for loc, v in zip(locs, items):
            vals[loc] = v
    return vals


def _slice_shape(shape: Any) -> Any:
    if shape is None or len(shape) == 0:
        return None
    return tuple(shape[1:]) if len(shape) > 1 else (1,)


def infer_shape(a, *shapes):
    from .infer import graph_shapes  # noqa: PLC0415
    body = _body_of(a)
    data, states, remain = _split(a, list(shapes))
    vals = _values(a, len(body.placeholders), [_slice_shape(s) for s in data], states, remain)
    ins, outs = _infer(body, vals, graph_shapes)
    n_out = a.num_out_data
    length = data[0][0] if data and data[0] is not None and len(data[0]) else None
    steps = [None if s is None or length is None else (length, *s) for s in outs[:n_out]]
    new_states = [ins[loc] if ins[loc] is not None else outs[n_out + j] for j, loc in enumerate(a.in_state_locs)]
    in_shapes = data + [ins[loc] for loc in a.in_state_locs] + [ins[loc] for loc in a.remain_locs]
    return in_shapes, steps + new_states


def infer_type(a, *dtypes):
    from .infer import graph_types  # noqa: PLC0415
    body = _body_of(a)
    data, states, remain = _split(a, list(dtypes))
    ins, outs = _infer(body, _values(a, len(body.placeholders), data, states, remain), graph_types)
    n_out = a.num_out_data
    new_states = [ins[loc] if ins[loc] is not None else outs[n_out + j] for j, loc in enumerate(a.in_state_locs)]
    in_types = [ins[loc] for loc in a.in_data_locs] + [ins[loc] for loc in a.in_state_locs] + \
        [ins[loc] for loc in a.remain_locs]
    return in_types, list(outs[:n_out]) + new_states


def _specs(a, arrays) -> tuple[list, list]:
    shapes = infer_shape(a, *[tuple(x.shape) for x in arrays])[1]
    dtypes = infer_type(a, *[np.dtype(x.dtype) for x in arrays])[1]
    if any(s is None for s in shapes) or any(d is None for d in dtypes):
        raise ShapeError(f"_foreach: cannot infer the outputs' shapes from input shapes "
                         f"{[tuple(x.shape) for x in arrays]}")
    return shapes, dtypes


def run(a, arrays: list, shapes: list, differentiable: bool) -> tuple[list, list]:
    """(stacked step outputs, final states) for NDArray inputs."""
    from hybridgraph.nd import ops_namespace as F  # noqa: N812, PLC0415
    body = _body_of(a)
    data, states, remain = _split(a, arrays)
    length = data[0].shape[0]
    if any(d.shape[0] != length for d in data):
        raise ShapeError(f"foreach: every data array must have the same length along axis 0, got "
                         f"{[d.shape for d in data]}")
    n_out = a.num_out_data
    rows: list[list] = []
    for t in range(length):
        res = _evaluate(body, "func", _values(a, len(body.placeholders), [d[t] for d in data], states, remain))
        rows.append(res[:n_out])
        new = res[n_out:]
        for k, (old, v) in enumerate(zip(states, new)):
            if old.shape != v.shape:
                raise ShapeError(f"foreach: state {k} changed shape from {old.shape} to {v.shape} at step {t}; "
                                 "the body must return states of unchanged shapes")
        states = [v if v.dtype == o.dtype else v.astype(o.dtype) for v, o in zip(new, states)]
    ctx = arrays[0].context
    outs = []
    for k in range(n_out):
        items = [r[k] for r in rows]
        if not items:   # a zero-length loop (a zero-size array is fine here whatever np_shape says)
            outs.append(type(arrays[0])._wrap(ctx.xp.zeros(tuple(shapes[k]), dtype=arrays[0].dtype), ctx))
        elif differentiable:
            outs.append(F.stack(*items, axis=0))
        else:
            outs.append(type(arrays[0])._wrap(ctx.xp.stack([i._data for i in items]), ctx))
    return outs, states


def forward(xp, a, arrays, is_train: bool) -> tuple:
    """The `_foreach` kernel (declared in nd/ops/loop.py)."""
    shapes, _ = _specs(a, arrays)
    with autograd.pause(is_train):
        outs, final = run(a, _wrap_all(xp, arrays), shapes, differentiable=False)
    return tuple(o._data for o in outs) + tuple(v._data for v in final)


def backward(xp, a, arrays) -> tuple:
    """The `_backward_foreach` kernel: the loop replayed on the tape, then backward."""
    nout = a.num_outputs
    wrapped = _wrap_all(xp, arrays)
    ograds, ins = wrapped[:nout], [x.copy() for x in wrapped[nout:]]
    shapes, _ = _specs(a, [x._data for x in ins])
    for x in ins:
        x.attach_grad()
    with autograd.record(True):
        outs, final = run(a, ins, shapes, differentiable=True)
    heads = [(o, g) for o, g in zip(outs + final, ograds) if o._ag is not None]
    if heads:
        autograd.backward([h for h, _ in heads], [g for _, g in heads])
    return tuple(x.grad._data for x in ins)


# -- unrolling (for exporters without loops: ONNX) ---------------------------------------------

def has_foreach(outputs: list) -> bool:
    return any(n.op is not None and n.op.name == "_foreach" for n in topo_sort(outputs))


def unroll(outputs: list, known: dict) -> list:
    """`outputs` with every `_foreach` node unrolled into ordinary nodes (SliceChannel on the
    data, the body copied per step, stack), given the shapes of some variables by name
    (`known`): each node's data length must follow from them. Nested loops unroll in turn."""
    from .graph import IndexedGraph  # noqa: PLC0415
    from .infer import graph_shapes  # noqa: PLC0415
    while has_foreach(outputs):
        graph = IndexedGraph(outputs)
        shapes = graph_shapes(graph, {graph.entry_id((n, 0)): tuple(known[n.name])
                                      for n in graph.input_nodes() if n.name in known})
        done = False
        new: dict[int, list] = {}

        def entry(e):
            return new[id(e[0])][e[1]]
        for node in topo_sort(outputs):
            if node.op is None:
                new[id(node)] = [(node, 0)]
            elif node.op.name == "_foreach" and not done:
                shape = shapes[graph.entry_id(node.inputs[0])]
                if shape is None or not len(shape) or not shape[0]:
                    raise ShapeError(f"node {node.name!r} (_foreach): the data's length must be known "
                                     "and non-zero to unroll the loop (give the input shapes)")
                new[id(node)] = _unroll_one(node, [entry(e) for e in node.inputs], int(shape[0]),
                                            [shapes[graph.entry_id(e)] for e in node.inputs])
                done = True   # later loops (maybe copies of a nested one) in the next round
            else:
                copy = Node(node.op, node.name, node.attrs, [entry(e) for e in node.inputs], dict(node.var_attrs))
                copy.subgraphs, copy.control_deps = node.subgraphs, node.control_deps
                new[id(node)] = [(copy, k) for k in range(node.num_outputs())]
        outputs = [entry(e) for e in outputs]
    return outputs


def _unroll_one(node: Node, inputs: list, length: int, in_shapes: list) -> list:
    a = node.attrs
    body = _body_of(a)
    data, states, remain = _split(a, inputs)
    split = get_op("SliceChannel")
    slices = []
    for k, (d, shape) in enumerate(zip(data, in_shapes)):
        attrs = split.schema.parse({"num_outputs": length, "axis": 0, "squeeze_axis": len(shape) > 1})
        cut = Node(split, f"{node.name}_split{k}", attrs, [d])
        slices.append([(cut, t) for t in range(length)])
    n_out, rows = a.num_out_data, []
    for t in range(length):
        env = {id(p): v for p, v in zip(body.placeholders,
                                        _values(a, len(body.placeholders), [s[t] for s in slices], states, remain))}
        for n in body.order("func"):
            copy = Node(n.op, f"{node.name}_t{t}_{n.name}", n.attrs,
                        [(env[id(src)] if src.op is None else (env[id(src)][0], i)) for src, i in n.inputs],
                        {k: v for k, v in n.var_attrs.items() if k != "__subgraph_name__"})
            copy.subgraphs = n.subgraphs
            env[id(n)] = (copy, 0)
        res = [env[id(src)] if src.op is None else (env[id(src)][0], i) for src, i in body.func]
        rows.append(res[:n_out])
        states = res[n_out:]
    stack = get_op("stack")
    outs = [(Node(stack, f"{node.name}_stack{k}", stack.schema.parse({"axis": 0, "num_args": length}),
                  [r[k] for r in rows]), 0) for k in range(n_out)]
    return outs + list(states)
