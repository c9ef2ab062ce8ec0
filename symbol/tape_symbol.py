"""`autograd.get_symbol`: the computation recorded on the autograd tape as a Symbol.

Walks back from an NDArray's tape entry: every recorded registry operator becomes
an operator node with its attributes; a variable (`attach_grad`) becomes a
variable `var<N>` and an array the tape holds but did not compute (a constant
input of a recorded call) a variable `null<N>`, named as MXNet names them (one
process-wide counter, a variable keeping its name). Recorded calls that are not
registry operators (`autograd.Function`, `x[key] = v`) have no single node to stand
for them and raise NotImplementedError. A hybridized block's call is expanded into its
graph's operators when MXNet inlines it (at most `inline_limit` operators, no
static_alloc: hybrid/cached_graph.py), else it is one `_CachedOp` node holding the
graph (symbol/cached_op_node.py), as in MXNet.
"""
from __future__ import annotations

import functools
import itertools
import weakref
from typing import Any

from hybridgraph.nd import autograd
from hybridgraph.nd.dispatch import _op_gradient
from hybridgraph.nd.errors import AutogradError

from .cached_op_node import make_node
from .graph import Node, topo_sort
from .symbol import Symbol

_COUNTER = itertools.count()
_NODE_COUNTER = itertools.count()
#: Leaf -> its variable's name, so a variable keeps its name across calls (MXNet's AGInfo)
_LEAF_NAMES: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()


class _NotAnOperator(AutogradError, NotImplementedError):
    """A recorded call with no operator node (autograd.Function, a hybridized block)."""


def _leaf_var(leaf: Any) -> Node:
    name = _LEAF_NAMES.get(leaf)
    if name is None:
        name = _LEAF_NAMES[leaf] = f"var{next(_COUNTER)}"
    return Node(None, name)


def get_symbol(x: Any) -> Symbol:
    """The recorded computation that produced NDArray `x`, as a Symbol (MXNet's
    `autograd.get_symbol`); `x` must be a variable or the output of a recorded call."""
    entry = autograd.live_entry(x)
    if entry is None:
        raise AutogradError("get_symbol: the array was not computed under autograd.record() and is "
                            "not a variable (attach_grad); there is no recorded graph to return")
    nodes: dict[int, Node] = {}      # id(TapeNode) -> Node
    leaves: dict[int, Node] = {}     # id(Leaf) -> variable Node

    def entry_of(e: Any, array: Any) -> tuple[Node, int]:
        if e is None:   # an input the tape did not compute: a constant of this graph
            key = id(array)
            if key not in leaves:
                leaves[key] = Node(None, f"null{next(_COUNTER)}")
            return leaves[key], 0
        if type(e) is tuple:
            return build(e[0])(e[1])
        if id(e) not in leaves:
            leaves[id(e)] = _leaf_var(e)
        return leaves[id(e)], 0

    def build(tape: Any):
        """output index -> graph entry, for the recorded call `tape`."""
        got = nodes.get(id(tape))
        if got is not None:
            return got
        fn = tape.grad_fn
        block = getattr(fn, "block_graph", None)
        if block is not None:
            heads, input_names, inlined = block
            if inlined:
                got = nodes[id(tape)] = _inline(tape, heads, input_names)
            else:
                ins = [entry_of(p, a) for p, a in zip(tape.parents, tape.inputs)]
                node = make_node(heads, input_names, ins, f"node_{next(_NODE_COUNTER)}")
                got = nodes[id(tape)] = lambda i: (node, i)
            return got
        if not (isinstance(fn, functools.partial) and fn.func is _op_gradient):
            raise _NotAnOperator(f"get_symbol: the recorded call {tape.name!r} is not an operator of the "
                                 "registry (autograd.Function or an indexed assignment); build that part "
                                 "with Symbols or hybridize and export()")
        op, attrs = fn.args[0], fn.args[1]
        inputs = [entry_of(p, a) for p, a in zip(tape.parents, tape.inputs)]
        node = Node(op, f"node_{next(_NODE_COUNTER)}", attrs, inputs)
        got = nodes[id(tape)] = lambda i: (node, i)
        return got

    def _inline(tape: Any, heads: list, input_names: list):
        """The block's graph copied in: its variables are the call's inputs, its operators
        new `node_<N>` nodes (MXNet's inlined CachedOp records each operator)."""
        by_name = {name: entry_of(p, a) for name, p, a in zip(input_names, tape.parents, tape.inputs)}
        copies: dict[int, Node] = {}

        def source(e: tuple) -> tuple:
            n, i = e
            return by_name[n.name] if n.op is None else (copies[id(n)], i)
        for n in topo_sort(heads):
            if n.op is not None:
                copies[id(n)] = Node(n.op, f"node_{next(_NODE_COUNTER)}", n.attrs, [source(e) for e in n.inputs])
        outs = [source(e) for e in heads]
        return outs.__getitem__

    return Symbol([entry_of(entry, x)])
