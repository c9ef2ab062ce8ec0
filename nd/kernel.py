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
   verdict is cached per (op, attributes, shapes, dtypes), so a repeated call pays
   one dict lookup;
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
from .registry import OpDef, merge_shape
from .writes import WATCHED, note_write

__all__ = ["input_context", "rule_error", "run_kernel"]

_SHAPE = attrgetter("shape")
_DTYPE = attrgetter("dtype")
_CONTEXT = attrgetter("_ctx")

#: (op, attrs, input shapes, input dtypes) -> None (the rules accept) or (error class, message)
_VERDICTS: dict = {}
_MAX_VERDICTS = 8192


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
    key = (op, attrs, tuple(map(_SHAPE, arrays)), tuple(map(_DTYPE, arrays)))
    try:
        verdict = _VERDICTS[key]
    except KeyError:
        verdict = _remember(key, rule_error(op, attrs, key[2], key[3]))
    except TypeError:   # unhashable attributes (a list given programmatically): check uncached
        verdict = rule_error(op, attrs, key[2], key[3])
    if verdict is not None:
        raise verdict[0](verdict[1])
    try:
        if out is None:
            ufunc = op.ufunc
            if ufunc is not None and type(arrays[0]) is np.ndarray and type(arrays[1]) is np.ndarray:
                res = (ufunc(*arrays),)
            elif op.train_aware:
                res = op.forward(xp, attrs, *arrays, is_train=is_train)
            else:
                res = op.forward(xp, attrs, *arrays)
        else:
            res = _run_into(op, attrs, arrays, xp, is_train, out, direct)
    except (ValueError, IndexError, TypeError) as exc:
        if isinstance(exc, MXNetError):
            raise
        shapes = ", ".join(str(tuple(a.shape)) for a in arrays)
        raise kernel_error_class(exc)(f"operator {op.name}: {exc} (input shapes {shapes})") from None
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


def _remember(key: tuple, verdict: tuple | None) -> tuple | None:
    if len(_VERDICTS) >= _MAX_VERDICTS:
        _VERDICTS.clear()
    _VERDICTS[key] = verdict
    return verdict


# -- the rules on concrete inputs ---------------------------------------------------------

def rule_error(op: OpDef, attrs: Attrs, shapes: Sequence[tuple], dtypes: Sequence) -> tuple | None:
    """None when `op`'s shape and dtype rules accept inputs of these shapes and dtypes,
    else (error class, message): what graph inference raises for them."""
    names = op.input_names(attrs)
    if len(shapes) != len(names) and not op.key_var_num_args:
        return ShapeError, (f"operator {op.name}: expected {len(names)} inputs {list(names)}, "
                            f"got {len(shapes)}")
    for what, rule, values, cls in (("shape", op.infer_shape, tuple(map(tuple, shapes)), ShapeError),
                                    ("dtype", op.infer_type, tuple(map(np.dtype, dtypes)), DTypeError)):
        if rule is None:
            continue
        try:
            res = rule(attrs, *values)
        except MXNetError as exc:
            return type(exc), _message(op, names, what, values, str(exc))
        except Exception as exc:  # noqa: BLE001 - graph inference reports a failing rule the same way
            return MXNetError, _message(op, names, what, values, f"its {what} rule failed: {exc}")
        if res is None:
            continue
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
