"""Running a registry kernel: the one function concrete code calls.

`run_kernel` is the only way code outside the registry runs an operator's kernel on
concrete arrays: eager dispatch, the NDArray operator shortcuts, the optimizers'
update calls, the step-by-step plan interpreter (Executor, first hybridized calls,
monitors) and gradient replay all call it. Only the code that symbol/plan/codegen.py
generates calls kernels directly: compilation already ran the same rules over the
whole graph. One function means one set of answers: eager, recorded, Executor and
hybridized calls of an op check the same rules, raise the same errors and report
the same writes.

What it does, in order:

1. applies the operator's shape and dtype rules (`infer_shape`, `infer_type`) to
   the concrete input shapes and dtypes, as graph inference does, and raises what
   graph inference would (MXNet checks these on every imperative call too). The
   verdict is cached per (op, attributes, shapes, dtypes), on the attribute object,
   so a repeated call pays one dict lookup;
2. runs the kernel (the op's numpy ufunc for plain numpy calls that have one),
   writing into `out` buffers when given;
3. wraps a kernel's ValueError, IndexError or TypeError as the matching MXNetError
   (`nd.errors.kernel_error_class`) naming the op and the input shapes;
4. reports every in-place write (mutated inputs, `out` buffers) to nd.writes.

Contexts are checked by `input_context` on the NDArrays a call is made with; the
plan interpreter's arrays come from one compiled graph on one device.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import attrgetter, is_
from typing import Any

import numpy as np

from .attrs import Attrs
from .backend import Context
from .errors import DTypeError, MXNetError, ShapeError, kernel_error_class
from .registry import OpDef, broadcast_shape, merge_shape, same_shape, same_type
from .writes import WATCHED, note_write

__all__ = ["input_context", "kernel_message", "rule_error", "rule_verdict", "run_kernel"]

_NP_ARRAY = np.ndarray
_SHAPE = attrgetter("shape")
_DTYPE = attrgetter("dtype")
_CONTEXT = attrgetter("_ctx")

#: ops whose rules are same_type and same_shape (any one input, two of one shape and dtype
#: pass) or numpy broadcasting (two of one dtype pass when the kernel broadcasts them): their
#: common calls skip the verdict lookup (filled as ops are first checked)
_SAME_SHAPE: set = set()
_BROADCASTING: set = set()
#: verdict tables of attribute objects that cannot hold their own (see _verdict_table)
_VERDICTS: dict = {}
#: entries per attribute set before its table starts over (the shared default attributes of
#: `a + b` see every shape a program uses)
_MAX_VERDICTS = 1024


def input_context(op: OpDef, inputs: Sequence) -> Context:
    """The one context of a call's NDArray inputs; MXNetError when they differ."""
    ctx = inputs[0]._ctx
    if len(inputs) > 1 and not all(map(is_, map(_CONTEXT, inputs), repeat(ctx))):
        for x in inputs:
            if x._ctx != ctx:
                raise MXNetError(f"operator {op.name}: inputs live on different contexts "
                                 f"({ctx} and {x._ctx}); use as_in_context() first")
    return ctx


def run_kernel(op: OpDef, attrs: Attrs, arrays: Sequence, xp: Any, is_train: bool = False,
               out: Sequence | None = None, direct: bool = False) -> tuple:
    """Run `op`'s kernel on backend arrays (one device) and return every output (hidden
    ones included).

    `out`: destination buffers for the first outputs (None entries: allocate). The
    results are copied there, or, with `direct=True` for a `writes_out` kernel, written
    there by the kernel itself (the caller vouches that the kernel may overwrite them:
    an in-place pair, an optimizer's weight). The returned tuple holds the `out` buffers
    in their positions. Writes into `out` and into the inputs the kernel mutates are
    reported to nd.writes.
    """
    n = len(arrays)
    if n == 2:   # elementwise ops of one dtype skip the lookup: broadcasting ones fail in the
        a0, a1 = arrays   # kernel exactly when their rule does (the rule's error is raised then)
        if a0.dtype is a1.dtype and op in _BROADCASTING:
            ufunc = op.ufunc   # the hot case (a + b): one ufunc call
            if ufunc is not None and out is None and type(a0) is _NP_ARRAY and type(a1) is _NP_ARRAY:
                try:
                    return (ufunc(a0, a1),)
                except ValueError as exc:   # shapes that do not broadcast: the rule's verdict
                    _check_rules(op, attrs, arrays)
                    raise ShapeError(kernel_message(op, exc, [a0.shape, a1.shape])) from None
            plain = True
        else:
            plain = a0.dtype is a1.dtype and op in _SAME_SHAPE and a0.shape == a1.shape
    else:
        plain = n == 1 and op in _SAME_SHAPE
    if not plain:
        _check_rules(op, attrs, arrays)
    try:
        if out is None:
            if op.train_aware:
                res = op.forward(xp, attrs, *arrays, is_train=is_train)
            else:
                res = op.forward(xp, attrs, *arrays)
        else:
            res = _run_into(op, attrs, arrays, xp, is_train, out, direct)
    except (ValueError, IndexError, TypeError) as exc:
        if isinstance(exc, MXNetError):
            raise
        if plain:    # the rules were skipped: their verdict comes first (graph inference's words)
            _check_rules(op, attrs, arrays)
        raise kernel_error_class(exc)(kernel_message(op, exc, [a.shape for a in arrays])) from None
    if WATCHED:
        for i in op.mutated(attrs) if op.mutate_inputs else ():
            if i < len(arrays):
                note_write(arrays[i])
        for b in out or ():
            if b is not None:
                note_write(b)
    return res


def _run_into(op: OpDef, attrs: Attrs, arrays: Sequence, xp: Any, is_train: bool,
              out: Sequence, direct: bool) -> tuple:
    kw = {"is_train": is_train} if op.train_aware else {}
    if direct and op.writes_out and all(b is not None for b in out):
        return tuple(op.forward(xp, attrs, *arrays, out=tuple(out), **kw))
    res = list(op.forward(xp, attrs, *arrays, **kw))
    for i, b in enumerate(out):
        if b is not None and i < len(res):
            if res[i] is not b:
                b[...] = res[i]
            res[i] = b
    return tuple(res)


def _check_rules(op: OpDef, attrs: Attrs, arrays: Sequence) -> None:
    """Raise the rules' verdict on these inputs (cached on the attribute object)."""
    try:
        seen = attrs._verdicts
    except AttributeError:
        seen = _verdict_table(attrs)
    n = len(arrays)
    if n == 1:     # spelled out for up to two inputs: star-unpacking costs ~1 us
        a0 = arrays[0]
        key = (op, a0.shape, a0.dtype)
    elif n == 2:
        a0, a1 = arrays
        key = (op, a0.shape, a1.shape, a0.dtype, a1.dtype)
    elif n == 0:
        key = (op,)
    else:
        key = (op, *map(_SHAPE, arrays), *map(_DTYPE, arrays))
    try:
        verdict = seen[key]
    except KeyError:
        if len(seen) >= _MAX_VERDICTS:
            seen.clear()
        verdict = seen[key] = rule_error(op, attrs, key[1:n + 1], key[n + 1:])
        if op.infer_type is same_type and op.key_var_num_args is None and len(op.input_names(attrs)) <= 2:
            if op.infer_shape is same_shape:
                _SAME_SHAPE.add(op)
            elif op.infer_shape is broadcast_shape and op.elementwise:
                _BROADCASTING.add(op)
    if verdict is not None:
        raise verdict[0](verdict[1])


def _verdict_table(attrs: Any) -> dict:
    """The verdict cache of one attribute set: (op, *shapes, *dtypes) -> None or (class,
    message). Kept on the Attrs object, so a lookup hashes shapes and dtypes only."""
    table: dict = {}
    try:
        attrs._verdicts = table
    except AttributeError:   # an attribute object without a __dict__: a shared table per object
        table = _VERDICTS.setdefault(attrs, {})
    return table


# -- the rules on concrete inputs ---------------------------------------------------------

def kernel_message(op: OpDef, exc: BaseException, shapes: Sequence) -> str:
    """How a kernel's own ValueError / IndexError / TypeError reads on every path (eager
    calls, plans, compiled graphs): the op, the kernel's words, the input shapes."""
    text = ", ".join(str(tuple(s)) if s is not None else "?" for s in shapes)
    return f"operator {op.name}: {exc} (input shapes {text})"


def rule_error(op: OpDef, attrs: Attrs, shapes: Sequence[tuple], dtypes: Sequence) -> tuple | None:
    """None when `op`'s shape and dtype rules accept inputs of these shapes and dtypes,
    else (error class, message): what graph inference raises for them."""
    names = op.input_names(attrs)
    if len(shapes) != len(names) and not op.key_var_num_args:
        return ShapeError, (f"operator {op.name}: expected {len(names)} inputs {list(names)}, "
                            f"got {len(shapes)}")
    return (rule_verdict(op, attrs, "shape", shapes, names)
            or rule_verdict(op, attrs, "dtype", dtypes, names))


def rule_verdict(op: OpDef, attrs: Attrs, what: str, values: Sequence,
                 names: Sequence[str] | None = None) -> tuple | None:
    """One rule (`what`: "shape" or "dtype") on known input values: None when it accepts
    them, else (error class, message). The message is the same on every path: eager calls
    raise it as is, graph inference and tracing add the node's context after a newline."""
    what = "shape" if what == "shape" else "dtype"   # graph inference says "type"
    rule = op.infer_shape if what == "shape" else op.infer_type
    if rule is None:
        return None
    if names is None:
        names = op.input_names(attrs)
    if what == "shape":
        values, cls = tuple(map(tuple, values)), ShapeError
    else:
        values, cls = tuple(map(np.dtype, values)), DTypeError
    try:
        res = rule(attrs, *values)
    except MXNetError as exc:
        return type(exc), _message(op, names, what, values, str(exc))
    except Exception as exc:  # noqa: BLE001 - graph inference reports a failing rule the same way
        return MXNetError, _message(op, names, what, values, f"its {what} rule failed: {exc}")
    if res is None:
        return None
    for i, (want, got) in enumerate(zip(res[0], values)):
        if want is None or _fits(what, want, got):
            continue
        slot = names[i] if i < len(names) else f"#{i}"
        word = "shape" if what == "shape" else "type"   # graph inference's words (symbol/infer.py)
        return cls, _message(op, names, what, values,
                             f"{word} of input {slot!r}: expected {_fmt(want)}, got {_fmt(got)}")
    return None


def _fits(what: str, want: Any, got: Any) -> bool:
    if what == "dtype":
        return np.dtype(want) == got
    try:
        merge_shape(tuple(want), got)
    except MXNetError:
        return False
    return True


def _fmt(v: Any) -> str:
    return str(tuple(v)) if isinstance(v, (tuple, list)) else np.dtype(v).name


def _message(op: OpDef, names: Sequence[str], what: str, values: Sequence, detail: str) -> str:
    slots = [names[i] if i < len(names) else f"#{i}" for i in range(len(values))]
    inputs = ", ".join(f"{n}={_fmt(v)}" for n, v in zip(slots, values)) or "(none)"
    return f"Error in operator {op.name}: {detail}. Input {what}s: {inputs}"
