"""numpy's stacking functions as MXNet 1.9.1's operators: `_npi_hstack`, `_npi_vstack`,
`_npi_dstack`, `_npi_column_stack` (variable inputs `arg0..`, `num_args`).

Each lifts its inputs to the rank numpy's function does (atleast_1d/2d/3d, or columns for
column_stack, so 0-d and 1-d inputs work) and concatenates along one axis. The gradient
cuts the head gradient back into the inputs' pieces (`_backward_np_*`).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import register
from .reduce import sum_to_shape


def _lift(kind: str, s: tuple) -> tuple:
    """An input's shape as numpy's function sees it before joining."""
    s = tuple(s)
    if kind == "hstack":
        return s or (1,)
    if kind == "vstack":
        return {0: (1, 1), 1: (1,) + s}.get(len(s), s)
    if kind == "dstack":
        return {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s)
    return {0: (1, 1), 1: s + (1,)}.get(len(s), s)   # column_stack: 1-D inputs are columns


def _axis(kind: str, lifted: list) -> int:
    if kind == "hstack":
        return 0 if len(lifted[0]) == 1 else 1
    return {"vstack": 0, "dstack": 2, "column_stack": 1}[kind]


def _joined(op: str, kind: str, shapes) -> tuple[list, int, tuple]:
    lifted = [_lift(kind, s) for s in shapes]
    axis = _axis(kind, lifted)
    first = lifted[0]
    for i, s in enumerate(lifted):
        if len(s) != len(first) or any(d != e for k, (d, e) in enumerate(zip(s, first)) if k != axis):
            raise ShapeError(f"operator {op}: all the input array dimensions except for the concatenation "
                             f"axis must match exactly, but input 0 has shape {tuple(shapes[0])} and input {i} "
                             f"has shape {tuple(shapes[i])}")
    out = list(first)
    out[axis] = sum(s[axis] for s in lifted)
    return lifted, axis, tuple(out)


def _arg_names(a) -> tuple:
    return tuple(f"arg{i}" for i in range(a.num_args or 0))


def _grad_names(a) -> tuple:
    return tuple(f"grad{i}" for i in range(a.num_args or 0))


def _make(kind: str, attrs: dict) -> None:
    op_name, back_name = f"_npi_{kind}", f"_backward_np_{kind}"

    def infer_shape(a, *shapes):
        if any(s is None for s in shapes):
            return None
        return list(shapes), [_joined(op_name, kind, shapes)[2]]

    def infer_type(a, *dtypes):
        if any(d is None for d in dtypes):
            return None
        return list(dtypes), [np.result_type(*dtypes)]

    def forward(xp, a, *xs):
        lifted, axis, _ = _joined(op_name, kind, [x.shape for x in xs])
        dt = np.result_type(*[x.dtype for x in xs])
        return (xp.concatenate([x.astype(dt, copy=False).reshape(s) for x, s in zip(xs, lifted)], axis=axis),)

    def gradient(F, a, inputs, outputs, ograds):
        res = getattr(F, back_name)(ograds[0], *inputs, **a.values())
        return list(res) if len(inputs) > 1 else [res]

    def backward(xp, a, g, *xs):
        lifted, axis, _ = _joined(op_name, kind, [x.shape for x in xs])
        cuts = np.cumsum([s[axis] for s in lifted])[:-1]
        pieces = xp.split(g, [int(c) for c in cuts], axis=axis)
        return tuple(xp.ascontiguousarray(p).reshape(x.shape).astype(x.dtype, copy=False)
                     for p, x in zip(pieces, xs))

    register(op_name, inputs=_arg_names, key_var_num_args="num_args", attrs=dict(attrs), hint=kind,
             infer_shape=infer_shape, infer_type=infer_type, gradient=gradient,
             doc=f"numpy's {kind}: inputs lifted as numpy's {kind} does, joined along one axis.")(forward)
    register(back_name, inputs=lambda a: ("ograd",) + _arg_names(a), outputs=_grad_names, attrs=dict(attrs),
             public=False, fluent=False,
             infer_shape=lambda a, g, *s: None if any(x is None for x in s) else ([g, *s], list(s)),
             infer_type=lambda a, g, *t: None if any(x is None for x in t) else ([g, *t], list(t)),
             doc=f"{kind}'s gradient: the head gradient cut back into the inputs.")(backward)


_NUM_ARGS = {"num_args": Attr("int", doc="Number of inputs.")}
_CONCAT_ATTRS = {"num_args": Attr("int", doc="Number of inputs."),
                 "dim": Attr("int", 1, "The concatenation axis (MXNet's ConcatParam; unused: numpy's rule "
                                       "decides the axis).")}
for _kind, _attrs in (("hstack", _CONCAT_ATTRS), ("dstack", _CONCAT_ATTRS), ("vstack", _NUM_ARGS),
                      ("column_stack", _NUM_ARGS)):
    _make(_kind, _attrs)


# -- broadcast_to -----------------------------------------------------------------------------

def _broadcast_to_shape(a, s) -> tuple:
    """numpy's rule on MXNet's attribute: trailing axes align, a -2 keeps the input's size,
    0 is a real (empty) size."""
    target = list(a.shape)
    if len(s) > len(target):
        raise ShapeError(f"operator _npi_broadcast_to: shape {tuple(s)} is not broadcastable to {tuple(target)}")
    for i in range(len(target) - 1, len(target) - len(s) - 1, -1):
        j = i - len(target) + len(s)
        if target[i] == -2:
            target[i] = s[j]
        if s[j] != target[i] and s[j] != 1:
            raise ShapeError(f"operator _npi_broadcast_to: shape {tuple(s)} is not broadcastable to "
                             f"{tuple(a.shape)}")
    if any(d < 0 for d in target):
        raise ShapeError(f"operator _npi_broadcast_to: the objective shape {tuple(a.shape)} must be known")
    return tuple(target)


_BCAST_ATTRS = {"shape": Attr("shape", (), "The target shape (-2: the input's size on that axis).")}


@register("_npi_broadcast_to", inputs=("array",), attrs=dict(_BCAST_ATTRS), hint="broadcast_to",
          infer_shape=lambda a, s: None if s is None else ([s], [_broadcast_to_shape(a, s)]))
def _npi_broadcast_to(xp, a, x):
    """numpy's broadcast_to (a copy, as MXNet's)."""
    return (xp.array(xp.broadcast_to(x, _broadcast_to_shape(a, x.shape))),)


@_npi_broadcast_to.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_np_broadcast_to(ograds[0], inputs[0], **a.values())]


@register("_backward_np_broadcast_to", inputs=("ograd", "array"), attrs=dict(_BCAST_ATTRS), public=False,
          fluent=False, infer_shape=lambda a, g, s: None if s is None else ([g, s], [s]),
          infer_type=lambda a, g, t: None if t is None else ([g, t], [t]))
def _backward_np_broadcast_to(xp, a, g, x):
    """broadcast_to's gradient: the head gradient summed back to the input's shape."""
    return (sum_to_shape(xp, g, x.shape).astype(x.dtype, copy=False),)
