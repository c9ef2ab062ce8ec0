"""numpy's tensor products as MXNet 1.9.1's operators: `_npi_tensordot` (explicit summed axes)
and `_npi_tensordot_int_axes` (the last `axes` of a with the first of b); `np.inner`,
`np.vdot` and `np.outer` are written with them, as in MXNet.

The kernels are the backend's `tensordot`; the gradients are hidden backward operators that
contract the head gradient with the other operand and put the axes back in order.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import register


def _norm(op: str, axes, ndim: int, which: str) -> list:
    out = []
    for ax in axes:
        if not -ndim <= ax < ndim:
            raise ShapeError(f"operator {op}: axis {ax} of {which} is out of bounds for {ndim} dimensions")
        out.append(ax % ndim)
    if len(set(out)) != len(out):
        raise ShapeError(f"operator {op}: repeated axis in {which}'s summed axes {tuple(axes)}")
    return out


def _axes(op: str, a, sa: tuple, sb: tuple) -> tuple[list, list]:
    """The summed axes of a and b (normalised), checked against the shapes."""
    if op == "_npi_tensordot_int_axes":
        n = a.axes
        if n < 0 or n > len(sa) or n > len(sb):
            raise ShapeError(f"operator {op}: axes={n} is out of range for shapes {tuple(sa)} and {tuple(sb)}")
        aa, ba = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        aa = _norm(op, tuple(a.a_axes_summed), len(sa), "a")
        ba = _norm(op, tuple(a.b_axes_summed), len(sb), "b")
        if len(aa) != len(ba):
            raise ShapeError(f"operator {op}: a_axes_summed {tuple(a.a_axes_summed)} and b_axes_summed "
                             f"{tuple(a.b_axes_summed)} differ in length")
    for i, j in zip(aa, ba):
        if sa[i] != sb[j]:
            raise ShapeError(f"operator {op}: shape mismatch for the summed axes: a {tuple(sa)} axis {i} "
                             f"vs b {tuple(sb)} axis {j}")
    return aa, ba


def _out_shape(op, a, sa, sb) -> tuple:
    aa, ba = _axes(op, a, sa, sb)
    return tuple(d for i, d in enumerate(sa) if i not in aa) + tuple(d for j, d in enumerate(sb) if j not in ba)


def _shape_rule(op):
    def infer(a, sa, sb):
        if sa is None or sb is None:
            return None
        return [sa, sb], [_out_shape(op, a, sa, sb)]
    return infer


def _type_rule(a, ta, tb):
    return None if ta is None or tb is None else ([ta, tb], [np.result_type(ta, tb)])


def _forward(op):
    def fwd(xp, a, x, y):
        aa, ba = _axes(op, a, x.shape, y.shape)
        dt = np.result_type(x.dtype, y.dtype)
        return (xp.asarray(xp.tensordot(x.astype(dt, copy=False), y.astype(dt, copy=False), (aa, ba))),)
    return fwd


def _backward(op):
    def bwd(xp, a, g, x, y):
        aa, ba = _axes(op, a, x.shape, y.shape)
        af = [i for i in range(x.ndim) if i not in aa]
        bf = [j for j in range(y.ndim) if j not in ba]
        # what tensordot leaves of the other operand keeps its own axis order
        ga = xp.tensordot(g, y, (list(range(len(af), g.ndim)), bf))
        gb = xp.tensordot(x, g, (af, list(range(len(af)))))
        ga_axes = af + [aa[ba.index(j)] for j in sorted(ba)]
        gb_axes = [ba[aa.index(i)] for i in sorted(aa)] + bf
        ga = xp.transpose(ga, np.argsort(ga_axes)) if ga.ndim else ga
        gb = xp.transpose(gb, np.argsort(gb_axes)) if gb.ndim else gb
        return (xp.ascontiguousarray(ga).reshape(x.shape).astype(x.dtype, copy=False),
                xp.ascontiguousarray(gb).reshape(y.shape).astype(y.dtype, copy=False))
    return bwd


_SUMMED = {"a_axes_summed": Attr("shape", None, "The axes of a summed over."),
           "b_axes_summed": Attr("shape", None, "The axes of b summed over (paired with a's).")}
_INT = {"axes": Attr("int", 2, "Sum over the last `axes` axes of a and the first `axes` of b.")}

for _name, _attrs in (("_npi_tensordot", _SUMMED), ("_npi_tensordot_int_axes", _INT)):
    _op = register(_name, inputs=("a", "b"), attrs=dict(_attrs), hint=_name[5:],
                   infer_shape=_shape_rule(_name), infer_type=_type_rule,
                   doc="numpy's tensordot: the sum of products over the paired axes of a and b.")(_forward(_name))
    _back = "_backward" + _name
    register(_back, inputs=("ograd", "a", "b"), outputs=("grad_a", "grad_b"), attrs=dict(_attrs),
             public=False, fluent=False,
             infer_shape=lambda a, g, sa, sb: None if sa is None or sb is None else ([g, sa, sb], [sa, sb]),
             infer_type=lambda a, g, ta, tb: None if ta is None or tb is None else ([g, ta, tb], [ta, tb]),
             doc="tensordot's gradients with respect to a and b.")(_backward(_name))

    def _grad(F, a, inputs, outputs, ograds, _back=_back):
        return list(getattr(F, _back)(ograds[0], inputs[0], inputs[1], **a.values()))
    _op.def_gradient(_grad)
