"""MXNet's control-flow functions for NDArrays: `nd.contrib.cond`, `nd.contrib.foreach`
and `nd.contrib.while_loop` (MXNet 1.9.1, python/mxnet/ndarray/contrib.py).

Eagerly they are plain Python control flow: `cond` reads the predicate and runs
one branch, `foreach` and `while_loop` run their body step by step. Every
operator the user's functions apply is recorded by autograd as usual, so they
work under `autograd.record()`.

Called with symbolic inputs (Symbols, or the tracers a hybridized block runs
on) they hand over to the graph-building versions in symbol/control_flow.py,
so a `forward` written with `nd.contrib.cond` keeps working after `hybridize()`.

One deliberate difference from MXNet: `while_loop` pads the stacked step
outputs of the iterations that did not run with zeros; MXNet leaves those rows
uninitialised (`nd.empty`), so any value is "as MXNet does".
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .dispatch import is_symbolic
from .ndarray import NDArray

__all__ = ["cond", "foreach", "while_loop", "flatten", "regroup", "install"]


# -- nested lists of arrays ------------------------------------------------------------

def flatten(args: Any, what: str, leaf_type: type | tuple = NDArray) -> tuple[list, Any]:
    """Flatten an array or nested lists/tuples of arrays into (leaves, format).

    The format is MXNet's: 0 for a single array, a list of formats for a
    list or tuple. A leaf of another type raises TypeError naming `what`.
    """
    if isinstance(args, leaf_type) or is_symbolic(args):
        return [args], 0
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"{what} must be an array or a (nested) list of arrays, "
                        f"got {type(args).__name__}: {args!r}")
    flat: list = []
    fmts: list = []
    for item in args:
        leaves, fmt = flatten(item, what, leaf_type)
        flat.extend(leaves)
        fmts.append(fmt)
    return flat, fmts


def regroup(flat: list, fmt: Any) -> Any:
    """Inverse of `flatten`: rebuild the nesting (lists) from the leaves."""
    value, rest = _regroup(list(flat), fmt)
    if rest:
        raise ValueError(f"regroup: {len(rest)} leaves left over for format {fmt!r}")
    return value


def _regroup(flat: list, fmt: Any) -> tuple[Any, list]:
    if isinstance(fmt, int):
        return flat[0], flat[1:]
    out = []
    for sub in fmt:
        value, flat = _regroup(flat, sub)
        out.append(value)
    return out, flat


def _as_list(obj: Any) -> list | tuple:
    """MXNet's `_as_list`: lists and tuples unchanged, anything else wrapped."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


def _any_symbolic(*values: Any) -> bool:
    """True when any leaf of the (nested) values is a Symbol or tracer."""
    for value in values:
        if is_symbolic(value):
            return True
        if isinstance(value, (list, tuple)) and _any_symbolic(*value):
            return True
    return False


def _symbolic():
    """symbol/control_flow.py, imported lazily (`nd` never imports `symbol` at load time)."""
    from hybridgraph.symbol import control_flow
    return control_flow


def to_bool(value: Any, what: str) -> bool:
    """The truth value of a size-1 NDArray or Python scalar (a predicate)."""
    if isinstance(value, NDArray):
        if value.size != 1:
            raise ValueError(f"{what} must be an array of size 1 (a scalar predicate), "
                             f"got shape {value.shape}")
        return bool(value.asscalar())
    if is_symbolic(value):  # a traced predicate with concrete loop variables: bool() names the user's line
        return bool(value)
    try:
        return bool(value)
    except Exception as exc:  # noqa: BLE001 - re-raised with what was expected
        raise ValueError(f"Cannot convert {what} ({type(value).__name__}) to python bool") from exc


def to_int(value: Any, what: str) -> int:
    """A Python int from an int, a numpy scalar or a size-1 NDArray (max_iterations)."""
    if isinstance(value, NDArray):
        value = value.asscalar()
    try:
        return int(value)
    except Exception as exc:  # noqa: BLE001 - re-raised with what was expected
        raise ValueError(f"Cannot convert {what} ({value!r}) to python int") from exc


# -- cond ------------------------------------------------------------------------------------

def cond(pred: Any, then_func: Callable[[], Any], else_func: Callable[[], Any]) -> Any:
    """Run an if-then-else using a user-defined condition and computation.

    Parameters
    ----------
    pred : NDArray
        A size-1 array (or Python scalar); non-zero selects `then_func`.
    then_func : callable
        `then_func() => NDArray or nested list of NDArrays`, run when `pred` is true.
    else_func : callable
        `else_func() => NDArray or nested list of NDArrays`, run otherwise.

    Returns
    -------
    What the branch that ran returned.

    Examples
    --------
    >>> a, b = nd.array([1]), nd.array([2])
    >>> nd.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))
    [42.]
    <NDArray 1 @cpu(0)>
    """
    if is_symbolic(pred):
        return _symbolic().cond(pred, then_func, else_func)
    return then_func() if to_bool(pred, "pred") else else_func()


# -- foreach ---------------------------------------------------------------------------------

def foreach(body: Callable, data: Any, init_states: Any) -> tuple[Any, Any]:
    """Run a for loop with user-defined computation over NDArrays on dimension 0.

    `body(data_slice, states) => (out, new_states)` runs once per slice
    `data[i]` (a list of slices when `data` is a list). The outputs of all
    steps are stacked along a new first axis; the states of the last step
    are returned as they are.

    Parameters
    ----------
    body : callable
        The computation of one iteration.
    data : NDArray or nested list of NDArrays
        The input data; every array has the same length along axis 0.
    init_states : NDArray or nested list of NDArrays
        The initial values of the loop states.

    Returns
    -------
    outputs : NDArray or nested list of NDArrays
        The stacked step outputs.
    states : NDArray or nested list of NDArrays
        The states after the last iteration.

    Examples
    --------
    >>> step = lambda data, states: (data + states[0], [states[0] * 2])
    >>> outs, states = nd.contrib.foreach(step, nd.ones((2, 3)), [nd.ones(3)])
    """
    if _any_symbolic(data, init_states):
        return _symbolic().foreach(body, data, init_states)
    flat_data, data_fmt = flatten(data, "foreach input (data)")
    flatten(init_states, "foreach init_states")
    num_iters = _common_length(flat_data)
    states = init_states
    steps: list[list] = []
    out_fmt: Any = None
    for i in range(num_iters):
        eles = regroup([d[i] for d in flat_data], data_fmt)
        outs, states = body(eles, states)
        flat_outs, out_fmt = flatten(outs, "foreach body output")
        if steps and len(flat_outs) != len(steps[0]):
            raise ValueError(f"foreach: the body returned {len(flat_outs)} outputs at step {i} "
                             f"but {len(steps[0])} at step 0")
        steps.append(flat_outs)
    from . import stack
    stacked = [stack(*items, axis=0) for items in zip(*steps)]
    return regroup(stacked, out_fmt), states


def _common_length(flat_data: list) -> int:
    """The shared length of the data arrays along axis 0 (the number of iterations)."""
    if not flat_data:
        raise ValueError("foreach: data must contain at least one array")
    lengths = [d.shape[0] if d.ndim else 0 for d in flat_data]
    if len(set(lengths)) != 1:
        raise ValueError(f"foreach: every data array must have the same length along axis 0, "
                         f"got shapes {[d.shape for d in flat_data]}")
    if lengths[0] == 0:
        raise ValueError(f"foreach: data must have at least one slice along axis 0, "
                         f"got shape {flat_data[0].shape}")
    return lengths[0]


# -- while_loop ------------------------------------------------------------------------------

def while_loop(cond: Callable, func: Callable, loop_vars: Any,
               max_iterations: int | None = None) -> tuple[Any, Any]:
    """Run a while loop with user-defined computation and loop condition.

    While `cond(*loop_vars)` (a size-1 array) is non-zero and fewer than
    `max_iterations` steps ran, `func(*loop_vars) => (step_output, new_loop_vars)`
    computes one step. Each step output is stacked along a new first axis of
    length `max_iterations` (MXNet's behaviour: there is no dynamic shape);
    the rows of steps that did not run are zeros (MXNet leaves them
    uninitialised). When no step runs, the outputs are an empty list, as in
    MXNet's NDArray version.

    Parameters
    ----------
    cond : callable
        The loop condition, `cond(*loop_vars) => NDArray`.
    func : callable
        The loop body, `func(*loop_vars) => (step_output, new_loop_vars)`.
    loop_vars : NDArray or list of NDArrays
        The initial values of the loop variables.
    max_iterations : int
        The maximum number of iterations (required).

    Returns
    -------
    outputs : list (or nested list) of NDArrays
        The stacked step outputs, each with first axis `max_iterations`.
    states : NDArray or list of NDArrays
        The final loop variables.

    Examples
    --------
    >>> cond = lambda i, s: i <= 5
    >>> func = lambda i, s: ([i + s], [i + 1, s + i])
    >>> loop_vars = (nd.array([0], dtype="int64"), nd.array([1], dtype="int64"))
    >>> outputs, states = nd.contrib.while_loop(cond, func, loop_vars, max_iterations=10)
    """
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = to_int(max_iterations, "max_iterations")
    if _any_symbolic(loop_vars):
        return _symbolic().while_loop(cond, func, loop_vars, max_iterations=max_iterations)
    flat_vars, _ = flatten(loop_vars, "while_loop loop_vars")
    if not flat_vars:
        raise ValueError("loop_vars should contain at least one element")
    single = isinstance(loop_vars, NDArray)
    loop_vars = _as_list(loop_vars)
    steps: list[list] = []
    out_fmt: Any = None
    while len(steps) < max_iterations and to_bool(cond(*loop_vars), "the return value of cond"):
        step_output, loop_vars = call_body(func, loop_vars)
        flat_out, out_fmt = flatten(step_output, "while_loop step output")
        if steps and len(flat_out) != len(steps[0]):
            raise ValueError("Number of elements in step_output should be the same in each step")
        steps.append(flat_out)
    stacked = [_stack_padded(items, max_iterations, k) for k, items in enumerate(zip(*steps), 1)]
    if out_fmt is not None:
        stacked = regroup(stacked, out_fmt)
    return stacked, (loop_vars[0] if single else loop_vars)


def call_body(func: Callable, loop_vars: list | tuple) -> tuple[Any, list]:
    """Run `func(*loop_vars)` and normalise its result to (step_output, list of new loop vars)."""
    result = func(*loop_vars)
    if not isinstance(result, (list, tuple)) or len(result) != 2:
        raise ValueError("while_loop: func must return a pair (step_output, new_loop_vars), "
                         f"got {type(result).__name__}")
    step_output, new_loop_vars = result
    step_output = [] if step_output is None else step_output
    new_loop_vars = [] if new_loop_vars is None else new_loop_vars
    if isinstance(step_output, tuple):
        step_output = list(step_output)
    new_loop_vars = list(_as_list(new_loop_vars))
    if len(loop_vars) != len(new_loop_vars):
        raise ValueError(f"The length of loop_vars should be consistent during the loop: "
                         f"{len(loop_vars)} loop variables in, {len(new_loop_vars)} returned by func")
    return step_output, new_loop_vars


def _stack_padded(items: tuple, max_iterations: int, k: int) -> NDArray:
    """Stack one step output of every step, padded with zero rows to `max_iterations`."""
    from . import concat, zeros
    rows = [x.expand_dims(0) for x in items]
    if len(rows) != max_iterations:
        first = rows[0]
        rows.append(zeros((max_iterations - len(rows),) + first.shape[1:], ctx=first.context,
                          dtype=first.dtype))
    try:
        return concat(*rows, dim=0)
    except ValueError as exc:
        shapes = "\n".join(f"  Step {i}, shape is {x.shape}" for i, x in enumerate(items))
        raise ValueError(f"Shapes of {k}-th elements in step_outputs are inconsistent, which are:\n"
                         f"{shapes}") from exc


def install(module: Any) -> None:
    """Put the control-flow functions into a namespace module (`nd.contrib`)."""
    for fn in (cond, foreach, while_loop):
        setattr(module, fn.__name__, fn)
