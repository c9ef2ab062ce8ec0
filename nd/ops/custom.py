"""`Custom`: operators written in Python (MXNet's mx.operator.CustomOp / CustomOpProp).

The user registers a CustomOpProp subclass under a name (`mx.operator.register`);
`Custom(..., op_type=name, **kwargs)` builds the prop with the other attributes
(as strings, as MXNet passes them) and asks it for argument, output and aux
names, shapes and dtypes. The kernel calls the prop's operator's `forward` on
NDArrays wrapping the input buffers (aux states are written in place); the
gradient rule hands output gradients, inputs and outputs to the hidden
`_backward_Custom`, which calls the operator's `backward`. Both are ordinary
registry entries, so Custom runs eagerly, under autograd, in Symbol graphs,
JSON ("op": "Custom", attrs with op_type) and hybridized blocks alike.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import profiling
from ..attrs import Attrs, AttrSchema, format_value
from ..errors import AttrError, MXNetError, ShapeError
from ..registry import OpDef, add_op, backward_op_grads

#: op_type -> the user's CustomOpProp subclass (filled by mx.operator.register)
PROPS: dict[str, type] = {}
_PROP_CACHE: dict[tuple, Any] = {}
_OP_CACHE: dict[tuple, Any] = {}


def _kwargs(a: Attrs) -> dict:
    return {k: str(v) for k, v in a.given.items() if k != "op_type"}


def prop_of(a: Attrs) -> Any:
    """The CustomOpProp instance for these attributes (one per op_type and attribute set)."""
    op_type = a.get("op_type")
    if op_type is None:
        raise AttrError("operator Custom: the attribute op_type is required (the name given to "
                        "mx.operator.register)")
    op_type = str(op_type)
    if op_type not in PROPS:
        raise AttrError(f"operator Custom: op_type {op_type!r} is not registered; registered: {sorted(PROPS)} "
                        "(decorate a CustomOpProp subclass with @mx.operator.register(name) first)")
    kwargs = _kwargs(a)
    key = (op_type, PROPS[op_type], tuple(sorted(kwargs.items())))
    prop = _PROP_CACHE.get(key)
    if prop is None:
        prop = _PROP_CACHE[key] = PROPS[op_type](**kwargs)
    return prop


def _nargs(a: Attrs) -> int:
    return len(prop_of(a).list_arguments())


def _inputs(a: Attrs) -> tuple:
    prop = prop_of(a)
    return tuple(prop.list_arguments()) + tuple(prop.list_auxiliary_states())


def _outputs(a: Attrs) -> tuple:
    return tuple(prop_of(a).list_outputs())


def _triple(res: Any, what: str, n_aux: int) -> tuple[list, list, list]:
    res = list(res)
    if len(res) == 2:
        res.append([None] * n_aux)
    if len(res) != 3:
        raise MXNetError(f"CustomOpProp.{what} must return (in, out) or (in, out, aux) lists, got {len(res)} items")
    return [list(r) for r in res]


def _infer_shape(a: Attrs, *shapes):
    prop, n = prop_of(a), _nargs(a)
    args = shapes[:n]
    if any(s is None for s in args):
        return None
    ins, outs, aux = _triple(prop.infer_shape([list(s) for s in args]), "infer_shape",
                             len(prop.list_auxiliary_states()))
    return ([tuple(int(d) for d in s) for s in ins] + [None if s is None else tuple(int(d) for d in s)
                                                       for s in aux],
            [tuple(int(d) for d in s) for s in outs])


def _infer_type(a: Attrs, *dtypes):
    prop, n = prop_of(a), _nargs(a)
    args = dtypes[:n]
    if any(d is None for d in args):
        return None
    ins, outs, aux = _triple(prop.infer_type([np.dtype(d).type for d in args]), "infer_type",
                             len(prop.list_auxiliary_states()))
    return [np.dtype(d) for d in ins] + [None if d is None else np.dtype(d) for d in aux], [np.dtype(d) for d in outs]


def _context_of(xp: Any, arr: Any):
    from ..backend import cpu, gpu  # noqa: PLC0415
    if xp is np:
        return cpu()
    return gpu(int(arr.device.id))


def _operator(a: Attrs, ctx: Any, shapes: list, dtypes: list) -> Any:
    """The CustomOp for one node: made once per attributes, context, shapes and dtypes, so a
    node's forward and backward share the instance (as MXNet's executor does)."""
    prop = prop_of(a)
    key = (id(prop), str(ctx), tuple(map(tuple, shapes)), tuple(map(str, dtypes)))
    op = _OP_CACHE.get(key)
    if op is None:
        op = _OP_CACHE[key] = prop.create_operator(ctx, [list(s) for s in shapes], [np.dtype(d).type
                                                                                      for d in dtypes])
    return op


def _wrap(arrays: list, ctx: Any) -> list:
    from ..ndarray import NDArray  # noqa: PLC0415 - cycle
    return [NDArray._wrap(x, ctx) for x in arrays]


def _out_specs(a: Attrs, in_shapes: list, in_dtypes: list) -> tuple[list, list]:
    n = _nargs(a)
    got = _infer_shape(a, *[tuple(s) for s in in_shapes])
    types = _infer_type(a, *in_dtypes)
    if got is None or types is None:
        raise ShapeError(f"Custom {a.get('op_type')}: cannot infer output shapes/dtypes from input shapes "
                         f"{in_shapes[:n]}")
    return got[1], types[1]


def _forward(xp, a: Attrs, *arrays, is_train: bool = False):
    from .. import autograd  # noqa: PLC0415
    n = _nargs(a)
    ctx = _context_of(xp, arrays[0]) if arrays else _default_ctx(a)
    shapes, dtypes = [x.shape for x in arrays[:n]], [x.dtype for x in arrays[:n]]
    out_shapes, out_dtypes = _out_specs(a, shapes, dtypes)
    outs = [xp.zeros(s, dtype=d) for s, d in zip(out_shapes, out_dtypes)]
    wrapped = _wrap(list(arrays) + outs, ctx)
    op = _operator(a, ctx, shapes, dtypes)
    with autograd.pause(is_train), _profiled(str(a.get("op_type")), "{}::pure_python"), _user_code(a, op, "forward"):
        op.forward(is_train, ["write"] * len(outs), wrapped[:n], wrapped[len(arrays):], wrapped[n:len(arrays)])
    return tuple(o._data for o in wrapped[len(arrays):])


@contextmanager
def _user_code(a: Attrs, op: Any, method: str):
    """An exception in the user's forward/backward becomes an MXNetError naming the operator
    (as MXNet reports errors of custom operators), chained to the original."""
    try:
        yield
    except MXNetError:
        raise
    except Exception as exc:
        raise MXNetError(f"Custom operator {a.get('op_type')!r}: {type(op).__name__}.{method} raised "
                         f"{type(exc).__name__}: {exc}") from exc


@contextmanager
def _profiled(op_type: str, label: str):
    """While the profiler runs: time the user's Python code as MXNet names it, and record the
    operators it calls as "<op_type>::<op>" (both in the "Custom Operator" domain)."""
    if not profiling.ACTIVE:
        yield
        return
    profiling.SCOPE.append(op_type)
    t0 = time.perf_counter_ns()
    try:
        yield
    finally:
        profiling.SCOPE.pop()
        profiling.record_custom(label.format(op_type), t0, time.perf_counter_ns())


def _default_ctx(a: Attrs):
    from ..backend import current_context  # noqa: PLC0415
    return current_context()


def _gradient(F, a: Attrs, inputs, outputs, ograds):
    n = _nargs(a)
    res = backward_op_grads(F, "_backward_Custom", ograds, outputs, (*inputs, *outputs), n, **a.given)
    return res + [None] * (len(inputs) - n)


def _bw_counts(a: Attrs) -> tuple[int, int, int]:
    prop = prop_of(a)
    return len(prop.list_outputs()), len(prop.list_arguments()), len(prop.list_auxiliary_states())


def _bw_inputs(a: Attrs) -> tuple:
    prop = prop_of(a)
    return (tuple(f"{o}_grad" for o in prop.list_outputs()) + tuple(prop.list_arguments())
            + tuple(prop.list_auxiliary_states()) + tuple(prop.list_outputs()))


def _bw_outputs(a: Attrs) -> tuple:
    return tuple(f"{x}_grad" for x in prop_of(a).list_arguments())


def _bw_shape(a: Attrs, *shapes):
    nout, n, naux = _bw_counts(a)
    args = shapes[nout:nout + n]
    if any(s is None for s in args):
        return None
    return list(shapes), list(args)


def _bw_type(a: Attrs, *dtypes):
    nout, n, naux = _bw_counts(a)
    args = dtypes[nout:nout + n]
    if any(d is None for d in args):
        return None
    return list(dtypes), list(args)


def _backward(xp, a: Attrs, *arrays):
    from .. import autograd  # noqa: PLC0415
    nout, n, naux = _bw_counts(a)
    ctx = _context_of(xp, arrays[0])
    ograds, ins = arrays[:nout], arrays[nout:nout + n]
    aux, outs = arrays[nout + n:nout + n + naux], arrays[nout + n + naux:]
    in_grads = [xp.zeros(x.shape, dtype=x.dtype) for x in ins]
    w_og, w_in, w_aux, w_out, w_ig = (_wrap(list(g), ctx) for g in (ograds, ins, aux, outs, in_grads))
    op = _operator(a, ctx, [x.shape for x in ins], [x.dtype for x in ins])
    with (autograd.pause(False), _profiled(str(a.get("op_type")), "_backward_{}::pure_python"),
          _user_code(a, op, "backward")):
        op.backward(["write"] * n, w_og, w_in, w_out, w_ig, w_aux)
    return tuple(g._data for g in w_ig)


def _aux_positions(a: Attrs) -> tuple:
    n, total = _nargs(a), len(_inputs(a))
    return tuple(range(n, total))


class _CustomSchema(AttrSchema):
    """Every attribute is the prop's (strings); the lenient parse that learns the input names
    must keep them too, since the prop is built from them."""

    def parse_lenient(self, given: dict) -> Attrs:
        return Attrs(dict(given), {k: format_value(v) for k, v in given.items()})


class _PropDef(OpDef):
    """An operator whose attributes are all the prop's."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.schema = _CustomSchema(self.name, {}, allow_extra=True)


class _CustomDef(_PropDef):
    """Custom's auxiliary states are named by the prop, so they are found by position."""

    def aux_indices(self, a: Attrs) -> tuple:
        return _aux_positions(a)


add_op(_CustomDef(
    "Custom", inputs=_inputs, outputs=_outputs, forward=_forward, train_aware=True,
    infer_shape=_infer_shape, infer_type=_infer_type, gradient=_gradient, mutate_inputs=_aux_positions,
    doc="Apply a custom operator implemented in Python (mx.operator.CustomOp / CustomOpProp), chosen by "
        "`op_type`; the other attributes are passed to the prop's constructor as strings."))
add_op(_PropDef(
    "_backward_Custom", inputs=_bw_inputs, outputs=_bw_outputs, forward=_backward, infer_shape=_bw_shape,
    infer_type=_bw_type, differentiable=False,
    doc="The input gradients of a Custom operator (calls its CustomOp.backward)."))
