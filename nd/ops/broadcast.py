"""Broadcasting operators: `broadcast_to`, `broadcast_axis`, `broadcast_like`
and `add_n` (MXNet's src/operator/tensor/broadcast_reduce_op_value.cc and
elemwise_sum.cc). Their gradients unbroadcast with `_sum_to_like` from
reduce.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..attrs import Attr
from ..errors import AttrError, ShapeError
from ..registry import register, same_shape


# ---------------------------------------------------------------------------
# broadcasting


def _broadcast_check(op: str, ishape: Sequence[int], oshape: Sequence[int]) -> None:
    for i, o in zip(ishape, oshape):
        if i not in (o, 1) and 0 not in (i, o):
            raise ShapeError(f"operator {op}: array cannot be broadcast from {tuple(ishape)} to {tuple(oshape)}")


def _broadcast_copy(xp, x, shape: tuple):
    """A contiguous (writable) broadcast of x to shape."""
    return xp.broadcast_to(x, shape).copy()


def _broadcast_to_shape(a, data):
    if data is None:
        return None
    if len(data) != len(a.shape):
        raise ShapeError(f"operator broadcast_to: operand of shape {tuple(data)} cannot be broadcast to "
                         f"{tuple(a.shape)} (the number of dimensions differs)")
    out = tuple(d if s == 0 else s for d, s in zip(data, a.shape))
    _broadcast_check("broadcast_to", data, out)
    return [data], [out]


@register("broadcast_to",
          monitor_inputs="input", attrs={"shape": Attr("shape", (), "The shape of the desired array; a 0 keeps "
                                               "the input's size on that axis.")},
          infer_shape=_broadcast_to_shape)
def broadcast_to(xp, a, x):
    """Broadcast the input to a new shape (axes of size 1 are repeated)."""
    return (_broadcast_copy(xp, x, _broadcast_to_shape(a, x.shape)[1][0]),)


@broadcast_to.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._sum_to_like(ograds[0], inputs[0])]


def _broadcast_axis_shape(a, data):
    if data is None:
        return None
    if len(a.axis) != len(a.size):
        raise AttrError(f"operator broadcast_axis: axis {tuple(a.axis)} and size {tuple(a.size)} "
                        "must have the same length")
    out = list(data)
    for ax, size in zip(a.axis, a.size):
        if not 0 <= ax < len(data):
            raise ShapeError(f"operator broadcast_axis: axis {ax} must be in range [0, {len(data)})")
        if data[ax] not in (1, 0):
            raise ShapeError(f"operator broadcast_axis: broadcasting axis {ax} must have size 1, "
                             f"input shape {tuple(data)}")
        out[ax] = size
    return [data], [tuple(out)]


@register("broadcast_axis", monitor_inputs="input", aliases=("broadcast_axes",),
          attrs={"axis": Attr("shape", (), "The axes to perform the broadcasting."),
                 "size": Attr("shape", (), "Target sizes of the broadcasting axes.")},
          infer_shape=_broadcast_axis_shape)
def broadcast_axis(xp, a, x):
    """Broadcast the input along the given axes of size 1 to the given sizes."""
    return (_broadcast_copy(xp, x, _broadcast_axis_shape(a, x.shape)[1][0]),)


@broadcast_axis.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._sum_to_like(ograds[0], inputs[0])]


def _broadcast_like_out(a, lhs: tuple, rhs: tuple) -> tuple:
    """MXNet's BroadcastLikeShape; additionally an lhs with fewer dimensions than rhs
    (no axes given) is padded with leading 1s, numpy-style (the unbroadcast gradient needs it)."""
    if a.lhs_axes is None or a.rhs_axes is None:
        if len(lhs) > len(rhs):
            raise ShapeError(f"operator broadcast_like: operand of shape {lhs} cannot be broadcast to {rhs}")
        padded = (1,) * (len(rhs) - len(lhs)) + lhs
        out = tuple(p if r == 0 else r for p, r in zip(padded, rhs))
        _broadcast_check("broadcast_like", padded, out)
        return out
    if len(a.lhs_axes) != len(a.rhs_axes):
        raise AttrError(f"operator broadcast_like: lhs_axes {a.lhs_axes} and rhs_axes {a.rhs_axes} "
                        "must have the same length")
    if not a.lhs_axes:
        raise AttrError("operator broadcast_like: empty lhs_axes / rhs_axes are not allowed")
    out = list(lhs)
    for la, ra in zip(a.lhs_axes, a.rhs_axes):
        if not -len(lhs) <= la < len(lhs):
            raise ShapeError(f"operator broadcast_like: invalid dimension {la} in lhs_axes for lhs {lhs}")
        if not -len(rhs) <= ra < len(rhs):
            raise ShapeError(f"operator broadcast_like: invalid dimension {ra} in rhs_axes for rhs {rhs}")
        if lhs[la] != 1:
            raise ShapeError(f"operator broadcast_like: lhs axis {la} has size {lhs[la]}, not 1, and "
                             f"cannot be broadcast to {rhs[ra]}")
        out[la % len(lhs)] = rhs[ra]
    return tuple(out)


def _broadcast_like_shape(a, lhs, rhs):
    if lhs is None or rhs is None:
        return None
    return [lhs, rhs], [_broadcast_like_out(a, tuple(lhs), tuple(rhs))]


def _broadcast_like_type(a, lhs, rhs):
    if lhs is None:
        return None
    return [lhs, rhs], [lhs]


@register("broadcast_like", inputs=("lhs", "rhs"),
          attrs={"lhs_axes": Attr("shape", None, "Axes of lhs to broadcast (default: all)."),
                 "rhs_axes": Attr("shape", None, "Axes of rhs whose sizes are copied (default: all).")},
          infer_shape=_broadcast_like_shape, infer_type=_broadcast_like_type)
def broadcast_like(xp, a, lhs, rhs):
    """Broadcast lhs to the shape of rhs (or only the given axes)."""
    shape = _broadcast_like_out(a, tuple(lhs.shape), tuple(rhs.shape))
    return (_broadcast_copy(xp, lhs.reshape((1,) * (len(shape) - lhs.ndim) + lhs.shape), shape),)


@broadcast_like.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._sum_to_like(ograds[0], inputs[0]), F.zeros_like(inputs[1])]


# ---------------------------------------------------------------------------
# add_n


def _add_n_inputs(a) -> tuple[str, ...]:
    n = a.num_args if a.num_args is not None else 0
    return tuple(f"arg{i}" for i in range(n))


def _add_n_type(a, *dtypes):
    t = next((d for d in dtypes if d is not None), None)
    if t is None:
        return None
    for i, d in enumerate(dtypes):
        if d is not None and d != t:
            raise AttrError(f"operator add_n: input arg{i} has dtype {d}, expected {t}")
    return [t] * len(dtypes), [t]


def _add_n_shape(a, *shapes):
    try:
        return same_shape(a, *shapes)
    except ShapeError as exc:
        raise ShapeError(f"operator add_n: inputs must share one shape: {exc}") from None


@register("add_n", aliases=("ElementWiseSum",), inputs=_add_n_inputs, key_var_num_args="num_args",
          attrs={"num_args": Attr("int", doc="Number of inputs to be summed.")},
          infer_shape=_add_n_shape, infer_type=_add_n_type)
def add_n(xp, a, *arrays: Any):
    """Adds all input arguments elementwise (inputs must share shape and dtype)."""
    if len(arrays) != a.num_args or a.num_args < 1:
        raise AttrError(f"operator add_n: num_args={a.num_args} but {len(arrays)} inputs were given "
                        "(at least one is needed)")
    _add_n_shape(a, *(x.shape for x in arrays))
    _add_n_type(a, *(x.dtype for x in arrays))
    out = arrays[0].copy()
    for x in arrays[1:]:
        out += x
    return (out,)


@add_n.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [ograds[0]] * len(inputs)
