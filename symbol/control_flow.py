"""MXNet's control-flow functions for Symbols and tracers: `symbol.contrib.cond`,
`symbol.contrib.foreach` and `symbol.contrib.while_loop`.

MXNet 1.9.1 builds `_cond`, `_foreach` and `_while_loop` operators that hold
subgraphs. hybridgraph builds `cond` from ordinary operators (so it runs on the
normal executor and exports JSON that real MXNet loads), `foreach` as MXNet's
node and subgraph, and `while_loop` as one node whose body it keeps itself.
Each counts its subgraph names in `AttrScope._subgraph_names` as MXNet does:

* `cond` builds BOTH branches and selects each output with `where`, the
  size-1 predicate broadcast along the output's first axis
  (`broadcast_like(reshape(pred, (1,)), out, lhs_axes=(0,), rhs_axes=(0,))`).
  Values and gradients equal MXNet's for side-effect-free branches, but both
  branches are evaluated, so a branch that is undefined where it is not
  taken (log of a negative, a division by zero) can still turn the
  gradient into NaN: guard its inputs (`F.where(pred, x, 1)`) as with
  `where` itself. The exported graph has `where` nodes, not a `_cond` node.
* `foreach` is one `_foreach` node holding its body as a subgraph, as in
  MXNet (symbol/foreach_op.py): any data length, and the JSON MXNet writes.
* `while_loop` is one `_while_loop` node whose kernel runs the body graphs per
  iteration (symbol/loop_op.py): unrolling `max_iterations` (often 1000)
  steps made graphs too large to bind. Outputs equal MXNet's (first axis
  `max_iterations`, zero rows after the end where MXNet leaves them
  uninitialised; the step outputs exist even when `cond` is false from the
  start, as in MXNet's symbolic version). Such graphs cannot be written as JSON.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hybridgraph.nd.control_flow import call_body, flatten, regroup, to_bool, to_int
from hybridgraph.nd.dispatch import OpNamespace

from .frontend import make_sym_function
from .graph import Node
from . import foreach_op
from .loop_op import LoopGraph, add_loop, cut_subgraph
from .naming import AttrScope, unique_subgraph_name
from .symbol import Symbol
from .tracer import Tracer, current_trace

__all__ = ["cond", "foreach", "while_loop", "install"]

F = OpNamespace(make_sym_function)


# -- helpers ---------------------------------------------------------------------------------

def _flatten_symbols(args: Any, what: str) -> tuple[list, Any]:
    """`flatten` for Symbols; multi-output Symbols count as the list of their outputs."""
    if isinstance(args, Symbol) and len(args._outputs) > 1:
        args = list(args)
    try:
        return flatten(args, what, Symbol)
    except TypeError as exc:
        raise TypeError(f"{exc} (the symbolic control-flow functions take Symbols; "
                        "call nd.contrib.* for NDArrays)") from None


def _aval(sym: Symbol) -> tuple:
    """(shape, dtype) known while tracing, without marking the trace shape-dependent."""
    state = current_trace()
    if state is None or len(sym._outputs) != 1:
        return (None, None)
    return state.aval(sym._outputs[0])


def _flag(pred: Symbol, what: str) -> Symbol:
    """The size-1 predicate as a shape-(1,) array (non-zero = true)."""
    if not isinstance(pred, Symbol) or len(pred._outputs) != 1:
        raise ValueError(f"{what} must be a single Symbol of size 1, got {pred!r}")
    shape = _aval(pred)[0]
    if shape is not None and 0 not in shape and int(np.prod(shape)) != 1:
        raise ValueError(f"{what} must be an array of size 1 (a scalar predicate), got shape {tuple(shape)}")
    return F.reshape(pred, shape=(1,))


def _select(flag: Symbol, x: Symbol, y: Symbol, what: str) -> Symbol:
    """`x` where the shape-(1,) flag is non-zero, else `y` (same shapes and dtypes)."""
    (xs, xt), (ys, yt) = _aval(x), _aval(y)
    if xs is not None and ys is not None and tuple(xs) != tuple(ys):
        raise ValueError(f"{what}: shapes differ, {tuple(xs)} versus {tuple(ys)}; "
                         "both must have the same shape")
    if xt is not None and yt is not None and xt != yt:
        raise ValueError(f"{what}: dtypes differ, {np.dtype(xt).name} versus {np.dtype(yt).name}; "
                         "both must have the same dtype")
    mask = F.broadcast_like(flag, x, lhs_axes=(0,), rhs_axes=(0,))
    return F.where(mask, x, y)


# -- cond ------------------------------------------------------------------------------------

def cond(pred: Any, then_func: Callable[[], Any], else_func: Callable[[], Any], name: str = "cond") -> Any:
    """Run an if-then-else using a user-defined condition and computation.

    Both branches are built, and every output is selected with `where` on the
    predicate (see the module docstring): the branches must return the same
    number of outputs with the same shapes and dtypes.

    Parameters
    ----------
    pred : Symbol
        A size-1 symbol; non-zero selects the then-branch. A Python bool (or
        a concrete NDArray) picks one branch while building the graph.
    then_func : callable
        `then_func() => Symbol or nested list of Symbols`.
    else_func : callable
        `else_func() => Symbol or nested list of Symbols`.
    name : str
        Kept for MXNet's signature (the graph has no `_cond` node to name).

    Returns
    -------
    Symbol or nested list of Symbols, with the then-branch's nesting.

    Examples
    --------
    >>> a, b = symbol.var('a'), symbol.var('b')
    >>> out = symbol.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))
    """
    if not isinstance(pred, Symbol):
        return then_func() if to_bool(pred, "pred") else else_func()
    for part in ("_pred", "_then", "_else"):   # MXNet names (and counts) its three subgraphs
        unique_subgraph_name(name + part)
    flag = _flag(pred, "cond: pred")
    then_flat, then_fmt = _flatten_symbols(then_func(), "cond: then_func's output")
    else_flat, else_fmt = _flatten_symbols(else_func(), "cond: else_func's output")
    if len(then_flat) != len(else_flat):
        raise ValueError(f"Number of outputs differs between then-branch and else-branch: "
                         f"{len(then_flat)} versus {len(else_flat)}")
    if then_fmt != else_fmt:
        raise ValueError(f"cond: then-branch and else-branch outputs are nested differently: "
                         f"{then_fmt!r} versus {else_fmt!r}")
    outs = [_select(flag, t, e, f"cond: output {i} of then-branch versus else-branch")
            for i, (t, e) in enumerate(zip(then_flat, else_flat))]
    return regroup(outs, then_fmt)


# -- foreach ---------------------------------------------------------------------------------

def foreach(body: Callable, data: Any, init_states: Any, name: str = "foreach") -> tuple[Any, Any]:
    """Run a for loop with user-defined computation over Symbols on dimension 0.

    The loop is one `_foreach` node whose subgraph is the body, built once on
    placeholders (see symbol/foreach_op.py), so the data's length need not be known.
    `body(data_slice, states) => (out, new_states)`; outputs are stacked along a new
    first axis.

    Parameters
    ----------
    body : callable
        The computation of one iteration.
    data : Symbol or nested list of Symbols
        The input data, all of one length along axis 0.
    init_states : Symbol or nested list of Symbols
        The initial values of the loop states.
    name : str
        The subgraph's name (numbered: `foreach0`, ...), as MXNet's.

    Returns
    -------
    outputs : Symbol or nested list of Symbols
        The stacked step outputs.
    states : Symbol or nested list of Symbols
        The states after the last iteration, nested like `init_states`.
    """
    flat_data, data_fmt = _flatten_symbols(data, "foreach input (data)")
    flat_states, state_fmt = _flatten_symbols(init_states, "foreach init_states")
    if not flat_data:
        raise ValueError("foreach: data must contain at least one symbol")
    sub_name = unique_subgraph_name(name)
    state = current_trace()
    data_ph = [Node(None, foreach_op._uniq_name(d._outputs[0])) for d in flat_data]
    state_ph = [Node(None, foreach_op._uniq_name(s._outputs[0])) for s in flat_states]
    for p in data_ph + state_ph:
        p.var_attrs["__subgraph_name__"] = sub_name
    data_syms = [_placeholder(p, d, state, slice_of=True) for p, d in zip(data_ph, flat_data)]
    state_syms = [_placeholder(p, s, state) for p, s in zip(state_ph, flat_states)]
    with AttrScope(__subgraph_name__=sub_name):
        outs, new_states = body(regroup(data_syms, data_fmt), regroup(state_syms, state_fmt))
    flat_out, out_fmt = _flatten_symbols(outs, "foreach body output")
    new_flat, fmt = _flatten_symbols(new_states, "foreach body's new states")
    if fmt != state_fmt:
        raise ValueError(f"The input and output loop_vars have different format: {state_fmt!r} versus {fmt!r}")
    heads = [x._outputs[0] for x in flat_out + new_flat]
    sub_heads, free, locs = foreach_op.make_body(heads, len(flat_out), data_ph, state_ph, sub_name)
    key = foreach_op.register_body(sub_heads)
    wrap = Tracer if state is not None else Symbol
    inputs = flat_data + flat_states + [wrap([e]) for e in free]
    res = F._foreach(*inputs, num_args=len(inputs) + 1, num_outputs=len(heads), num_out_data=len(flat_out),
                     loop=key, **locs)
    node = res._outputs[0][0]
    node.subgraphs = (Symbol(sub_heads),)
    node.attrs = foreach_op.hide_key(node.attrs, key)
    items = [res] if len(res._outputs) == 1 else list(res)
    return regroup(items[:len(flat_out)], out_fmt), regroup(items[len(flat_out):], state_fmt)


# -- while_loop ------------------------------------------------------------------------------

def while_loop(cond: Callable, func: Callable, loop_vars: Any, max_iterations: int | None = None,
               name: str = "while_loop") -> tuple[Any, Any]:
    """Run a while loop with user-defined computation and loop condition.

    `cond(*loop_vars)` gives a size-1 symbol, `func(*loop_vars) =>
    (step_output, new_loop_vars)`. Both are called once, on placeholders, and
    become the body of one `_while_loop` node (symbol/loop_op.py) that runs
    them per iteration: the graph's size does not grow with `max_iterations`.

    Parameters
    ----------
    cond : callable
        The loop condition.
    func : callable
        The loop body.
    loop_vars : Symbol or nested list of Symbols
        The initial values of the loop variables.
    max_iterations : int
        The maximum number of iterations (required).
    name : str
        The node's name.

    Returns
    -------
    outputs : list (or nested list) of Symbols
        The step outputs stacked along a new first axis of length `max_iterations`
        (zero rows after the loop ended; MXNet leaves those rows uninitialised).
    states : Symbol or nested list of Symbols
        The final loop variables, nested like `loop_vars`.
    """
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = to_int(max_iterations, "max_iterations")
    flat_vars, var_fmt = _flatten_symbols(loop_vars, "while_loop loop_vars")
    if not flat_vars:
        raise ValueError("loop_vars should contain at least one element")
    for part in ("_cond", "_func"):   # MXNet names (and counts) its two subgraphs
        unique_subgraph_name(name + part)
    state = current_trace()
    holders = [Node(None, f"{name}_loop_var{k}") for k in range(len(flat_vars))]
    ph = [_placeholder(h, v, state) for h, v in zip(holders, flat_vars)]
    args = regroup(ph, var_fmt)
    args = args if isinstance(args, list) else [args]
    c = cond(*args)
    if not isinstance(c, Symbol) or len(c._outputs) != 1:
        raise ValueError(f"Return of cond must be a Symbol of size 1, got {c!r}")
    step_output, new_vars = call_body(func, args)
    flat_out, out_fmt = _flatten_symbols(step_output, "while_loop step output")
    new_flat, _ = _flatten_symbols(new_vars, "while_loop new loop_vars")
    if len(new_flat) != len(flat_vars):
        raise ValueError(f"The number of loop_vars should be consistent during the loop: "
                         f"{len(flat_vars)} in, {len(new_flat)} returned by func")
    for k, (old, new) in enumerate(zip(flat_vars, new_flat)):
        os_, ns = _aval(old)[0], _aval(new)[0]
        if os_ is not None and ns is not None and tuple(os_) != tuple(ns):
            raise ValueError(f"while_loop: loop variable {k} (new versus old): shapes differ, {tuple(ns)} "
                             f"versus {tuple(os_)}; func must return loop variables of unchanged shapes")
    heads = [s._outputs[0] for s in [c, *flat_out, *new_flat]]
    new_heads, free = cut_subgraph(heads, holders)
    key = add_loop(LoopGraph(new_heads[0], new_heads[1:], holders + [p for _, p in free], len(flat_vars),
                             len(flat_out), max_iterations))
    wrap = Tracer if state is not None else Symbol
    inputs = flat_vars + [wrap([e]) for e, _ in free]
    res = F._while_loop(*inputs, loop=key, num_args=len(inputs))
    items = [res] if len(res._outputs) == 1 else list(res)
    outputs = regroup(items[:len(flat_out)], out_fmt) if flat_out else []
    return outputs, regroup(items[len(flat_out):], var_fmt)


def _placeholder(node: Node, value: Symbol, state: Any, slice_of: bool = False) -> Symbol:
    """The symbol standing for one loop variable inside cond and func (or, `slice_of`, for
    one slice of foreach's data); while tracing, a tracer with its shape and dtype (the
    body may read them)."""
    if state is None:
        return Symbol([(node, 0)])
    shape, dtype = _aval(value)
    if slice_of and shape is not None:
        shape = foreach_op._slice_shape(shape)
    state.set_aval((node, 0), shape, dtype)
    return Tracer([(node, 0)])


def install(module: Any) -> None:
    """Put the control-flow functions into a namespace module (`symbol.contrib`)."""
    for fn in (cond, foreach, while_loop):
        setattr(module, fn.__name__, fn)
