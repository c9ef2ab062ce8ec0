"""Matrix products: dot, batch_dot, `_linalg_gemm` and `_linalg_gemm2`
(MXNet 1.9.1 semantics), and the helpers shared with the square-matrix
`_linalg_*` operators of linalg_square.py.

`dot` of N-d arrays flattens each side to a matrix the way MXNet does: the lhs
contracts its last axis (its first with `transpose_a`), the rhs its first axis
(its last with `transpose_b`). The `_linalg_*` operators work on the trailing
two axes (gemm/gemm2 take the row axis from `axis`) and, as MXNet, accept only
float32 and float64.

Gradients of dot, batch_dot, gemm and gemm2 are written with these same
operators, so higher-order gradients work.
"""
from __future__ import annotations

import math

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, MXNetError, ShapeError
from ..registry import register

_FLOATS = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
_LINALG_FLOATS = (np.dtype("float32"), np.dtype("float64"))


class LinAlgError(MXNetError, ValueError):
    """A factorisation or inverse that does not exist (singular / not positive definite)."""


def _float_type(op: str, allowed: tuple):
    """Type rule: every input and the output share one floating dtype from `allowed`."""
    def infer(a, *dtypes):
        t = None
        for i, d in enumerate(dtypes):
            if d is None:
                continue
            if t is not None and d != t:
                raise DTypeError(f"operator {op}: input {i} has dtype {d}, expected {t} "
                                 "(all inputs share one dtype)")
            t = d
        if t is None:
            return None
        if t not in allowed:
            raise DTypeError(f"operator {op}: dtype {t} is not supported; expected one of "
                             f"{[str(x) for x in allowed]}")
        return [t] * len(dtypes), [t]
    return infer


def check_float(op: str, allowed: tuple, *arrays) -> None:
    """Kernel-side dtype check (the eager path runs kernels without type inference)."""
    for x in arrays:
        if x.dtype not in allowed:
            raise DTypeError(f"operator {op}: dtype {x.dtype} is not supported; expected one of "
                             f"{[str(t) for t in allowed]}")


def _dims_match(x: int, y: int) -> bool:
    return x == y or x == 0 or y == 0


# ---------------------------------------------------------------------------
# dot


def _dot_halves(shape: tuple, contract_first: bool) -> tuple[tuple, tuple]:
    """(kept dims, contracted dims) of one side of `dot`."""
    if contract_first:
        return tuple(shape[1:]) if len(shape) > 1 else (), (shape[0],)
    return tuple(shape[:-1]) if len(shape) > 1 else (), (shape[-1],)


def _dot_shape(a, lshape, rshape):
    if lshape is None or rshape is None:
        return None
    if len(lshape) == 0 or len(rshape) == 0:
        raise ShapeError("operator dot: scalar (0-d) inputs are not supported")
    if len(lshape) == 1 and len(rshape) == 1:
        if a.transpose_a or a.transpose_b:
            raise ShapeError("operator dot: cannot transpose vectors (1-D x 1-D with transpose_a/b)")
        if not _dims_match(lshape[0], rshape[0]):
            raise ShapeError(f"operator dot: shape mismatch lhs {tuple(lshape)} x rhs {tuple(rshape)}")
        return [lshape, rshape], [(1,)]
    lkeep, lk = _dot_halves(lshape, a.transpose_a)
    rkeep, rk = _dot_halves(rshape, not a.transpose_b)
    if not _dims_match(lk[0], rk[0]):
        raise ShapeError(f"operator dot: shape mismatch lhs {tuple(lshape)} x rhs {tuple(rshape)} "
                         f"(transpose_a={a.transpose_a}, transpose_b={a.transpose_b}): contracted "
                         f"sizes {lk[0]} vs {rk[0]}")
    return [lshape, rshape], [lkeep + rkeep]


def _as_matrix(x, contract_first: bool):
    """The 2-D view MXNet's dot uses: (k, rest) when contracting the first axis,
    else (rest, k)."""
    if contract_first:
        return x.reshape(x.shape[0], math.prod(x.shape[1:]))
    return x.reshape(math.prod(x.shape[:-1]), x.shape[-1])


def _dot_mats(lhs, rhs, ta: bool, tb: bool):
    """The lhs/rhs matrices, already transposed so that out = L @ R."""
    lm = _as_matrix(lhs, ta)
    rm = _as_matrix(rhs, not tb)
    return (lm.T if ta else lm), (rm.T if tb else rm)


_DOT_ATTRS = {
    "transpose_a": Attr("bool", False, "If true then transpose the first input before dot."),
    "transpose_b": Attr("bool", False, "If true then transpose the second input before dot."),
    "forward_stype": Attr("str", None, "Desired storage type of the output (hybridgraph arrays "
                          "are dense; the values are the same).",
                          choices=("csr", "default", "row_sparse")),
}


@register("dot", aliases=("_sparse_dot",), inputs=("lhs", "rhs"), attrs=dict(_DOT_ATTRS),
          infer_shape=_dot_shape, infer_type=_float_type("dot", _FLOATS))
def dot(xp, a, lhs, rhs):
    """Dot product of two arrays: matrix product for 2-D, inner product for 1-D,
    and for N-d a contraction of lhs's last axis with rhs's first axis."""
    check_float("dot", _FLOATS, lhs, rhs)
    out_shape = _dot_shape(a, lhs.shape, rhs.shape)[1][0]
    lm, rm = _dot_mats(lhs, rhs, a.transpose_a, a.transpose_b)
    return (xp.matmul(lm, rm).reshape(out_shape),)


@dot.def_gradient
def _(F, a, inputs, outputs, ograds):
    lhs, rhs = inputs
    grads = F._backward_dot(ograds[0], lhs, rhs, transpose_a=a.transpose_a, transpose_b=a.transpose_b)
    return [grads[0], grads[1]]


def _backward_dot_shape(a, gshape, lshape, rshape):
    return [gshape, lshape, rshape], [lshape, rshape]


@register("_backward_dot", inputs=("ograd", "lhs", "rhs"), outputs=("lhs_grad", "rhs_grad"),
          attrs={k: v for k, v in _DOT_ATTRS.items() if k != "forward_stype"},
          infer_shape=_backward_dot_shape, infer_type=lambda a, *t: _backward_dot_type(t))
def _backward_dot(xp, a, ograd, lhs, rhs):
    """Gradients of `dot` for lhs and rhs, on the same flattened matrices as the forward."""
    ta, tb = a.transpose_a, a.transpose_b
    lm, rm = _dot_mats(lhs, rhs, ta, tb)          # out = lm @ rm
    g = ograd.reshape(lm.shape[0], rm.shape[1])
    dl = xp.matmul(g, rm.T)                          # d(lm)
    dr = xp.matmul(lm.T, g)                          # d(rm)
    return ((dl.T if ta else dl).reshape(lhs.shape), (dr.T if tb else dr).reshape(rhs.shape))


def _backward_dot_type(dtypes):
    t = next((d for d in dtypes if d is not None), None)
    return None if t is None else ([t] * 3, [t, t])


@_backward_dot.def_gradient
def _(F, a, inputs, outputs, ograds):
    # lhs_grad is linear in (ograd, rhs), rhs_grad in (ograd, lhs); their adjoints
    # are dot itself and _backward_dot with one argument swapped for a head gradient
    g, lhs, rhs = inputs
    gl, gr = ograds
    kw = {"transpose_a": a.transpose_a, "transpose_b": a.transpose_b}
    dg = F.elemwise_add(F.dot(gl, rhs, **kw), F.dot(lhs, gr, **kw))
    dlhs = F._backward_dot(g, lhs, gr, **kw)[0]
    drhs = F._backward_dot(g, gl, rhs, **kw)[1]
    return [dg, dlhs, drhs]


# ---------------------------------------------------------------------------
# batch_dot


def _batch_dot_shape(a, lshape, rshape):
    if lshape is None or rshape is None:
        return None
    if len(lshape) < 3 or len(lshape) != len(rshape):
        raise ShapeError(f"operator batch_dot: inputs must both be N-d with N >= 3, got lhs "
                         f"{tuple(lshape)} and rhs {tuple(rshape)}")
    if not lshape[-1] or not rshape[-2]:
        return None   # MXNet infers nothing until lhs's last and rhs's second-last dims are known
    if not all(_dims_match(p, q) for p, q in zip(lshape[:-2], rshape[:-2])):
        raise ShapeError(f"operator batch_dot: leading (batch) dimensions must be equal, got lhs "
                         f"{tuple(lshape)} and rhs {tuple(rshape)}")
    m, lk = (lshape[-1], lshape[-2]) if a.transpose_a else (lshape[-2], lshape[-1])
    n, rk = (rshape[-2], rshape[-1]) if a.transpose_b else (rshape[-1], rshape[-2])
    if not _dims_match(lk, rk):
        raise ShapeError(f"operator batch_dot: shape mismatch lhs {tuple(lshape)} x rhs "
                         f"{tuple(rshape)} (transpose_a={a.transpose_a}, "
                         f"transpose_b={a.transpose_b})")
    batch = tuple(p or q for p, q in zip(lshape[:-2], rshape[:-2]))
    return [lshape, rshape], [batch + (m, n)]


def _t(xp, x, flag: bool):
    """Swap the last two axes when `flag`."""
    return xp.swapaxes(x, -1, -2) if flag else x


@register("batch_dot", aliases=("_npx_batch_dot",), inputs=("lhs", "rhs"), attrs=dict(_DOT_ATTRS),
          infer_shape=_batch_dot_shape, infer_type=_float_type("batch_dot", _FLOATS))
def batch_dot(xp, a, lhs, rhs):
    """Batched matrix product over the last two axes; leading axes are the batch."""
    check_float("batch_dot", _FLOATS, lhs, rhs)
    _batch_dot_shape(a, lhs.shape, rhs.shape)
    return (xp.matmul(_t(xp, lhs, a.transpose_a), _t(xp, rhs, a.transpose_b)),)


@batch_dot.def_gradient
def _(F, a, inputs, outputs, ograds):
    lhs, rhs = inputs
    g = ograds[0]
    bd = F.batch_dot
    if a.transpose_a and a.transpose_b:      # z = l^T r^T
        return [bd(rhs, g, transpose_a=True, transpose_b=True),
                bd(g, lhs, transpose_a=True, transpose_b=True)]
    if a.transpose_b:                        # z = l r^T
        return [bd(g, rhs), bd(g, lhs, transpose_a=True)]
    if a.transpose_a:                        # z = l^T r
        return [bd(rhs, g, transpose_b=True), bd(lhs, g)]
    return [bd(g, rhs, transpose_b=True), bd(lhs, g, transpose_a=True)]


# ---------------------------------------------------------------------------
# gemm / gemm2


def _row_axis(op: str, axis: int, ndim: int) -> int:
    """MXNet's `axis` of gemm: the row axis, in [-ndim, ndim - 2] (columns are last)."""
    ax = axis + ndim if axis < 0 else axis
    if not 0 <= ax < ndim - 1:
        raise AttrError(f"operator {op}: invalid row axis {axis} for inputs of rank {ndim}; "
                        f"expected an axis in [{-ndim}, {ndim - 2}] (columns are the last axis)")
    return ax


def _mat_view(xp, x, ax: int):
    """Moves the row axis next to the column axis: (..., rows, cols)."""
    return xp.moveaxis(x, ax, -2)


def _gemm_out_shape(op: str, a, ashape, bshape):
    """Shape of op(A) @ op(B) on the row axis `a.axis` (partial dims allowed)."""
    nd_ = len(ashape)
    if nd_ < 2 or len(bshape) != nd_:
        raise ShapeError(f"operator {op}: A and B must have the same rank >= 2, got "
                         f"{tuple(ashape)} and {tuple(bshape)}")
    ax = _row_axis(op, a.axis, nd_)
    rest = [i for i in range(nd_) if i not in (ax, nd_ - 1)]
    for i in rest:
        if not _dims_match(ashape[i], bshape[i]):
            raise ShapeError(f"operator {op}: A {tuple(ashape)} and B {tuple(bshape)} must match "
                             "except on the row/column axes")
    m, ka = (ashape[-1], ashape[ax]) if a.transpose_a else (ashape[ax], ashape[-1])
    kb, n = (bshape[-1], bshape[ax]) if a.transpose_b else (bshape[ax], bshape[-1])
    if not _dims_match(ka, kb):
        raise ShapeError(f"operator {op}: inner dimensions differ: A {tuple(ashape)} x B "
                         f"{tuple(bshape)} (transpose_a={a.transpose_a}, "
                         f"transpose_b={a.transpose_b}, axis={a.axis})")
    out = [p or q for p, q in zip(ashape, bshape)]
    out[ax], out[-1] = m, n
    return tuple(out)


def _gemm2_shape(a, ashape, bshape):
    if ashape is None or bshape is None:
        return None
    return [ashape, bshape], [_gemm_out_shape("_linalg_gemm2", a, ashape, bshape)]


def _gemm_shape(a, ashape, bshape, cshape):
    out = None
    if ashape is not None and bshape is not None:
        out = _gemm_out_shape("_linalg_gemm", a, ashape, bshape)
    if cshape is not None:
        if out is not None and (len(cshape) != len(out)
                                or not all(_dims_match(p, q) for p, q in zip(cshape, out))):
            raise ShapeError(f"operator _linalg_gemm: input 'C' expected shape {out}, "
                             f"got {tuple(cshape)}")
        out = tuple(cshape) if out is None else tuple(p or q for p, q in zip(out, cshape))
    if out is None:
        return None
    return [ashape, bshape, out], [out]


def _gemm_product(xp, op: str, a, *mats):
    """alpha * op(A) @ op(B) on the row axis, as (..., rows, cols) plus the row axis."""
    check_float(op, _LINALG_FLOATS, *mats)
    A, B = mats[:2]
    ax = _row_axis(op, a.axis, A.ndim)
    am = _t(xp, _mat_view(xp, A, ax), a.transpose_a)
    bm = _t(xp, _mat_view(xp, B, ax), a.transpose_b)
    prod = xp.matmul(am, bm)
    return prod * A.dtype.type(a.alpha), ax


_GEMM_ATTRS = {
    "transpose_a": Attr("bool", False, "Multiply with transposed of first input (A)."),
    "transpose_b": Attr("bool", False, "Multiply with transposed of second input (B)."),
    "alpha": Attr("float", 1.0, "Scalar factor multiplied with A*B."),
}
_AXIS = Attr("int", -2, "Axis corresponding to the matrix rows (columns are the last axis).")


@register("_linalg_gemm2", aliases=("linalg_gemm2",), inputs=("A", "B"), hint="gemm2",
          attrs={**_GEMM_ATTRS, "axis": _AXIS}, infer_shape=_gemm2_shape,
          infer_type=_float_type("_linalg_gemm2", _LINALG_FLOATS))
def _linalg_gemm2(xp, a, A, B):
    """out = alpha * op(A) * op(B), batched over all axes but the row axis and the last."""
    prod, ax = _gemm_product(xp, "_linalg_gemm2", a, A, B)
    return (xp.ascontiguousarray(xp.moveaxis(prod, -2, ax)),)


@register("_linalg_gemm", aliases=("linalg_gemm",), inputs=("A", "B", "C"), hint="gemm",
          attrs={**_GEMM_ATTRS, "beta": Attr("float", 1.0, "Scalar factor multiplied with C."),
                 "axis": _AXIS},
          infer_shape=_gemm_shape, infer_type=_float_type("_linalg_gemm", _LINALG_FLOATS))
def _linalg_gemm(xp, a, A, B, C):
    """out = alpha * op(A) * op(B) + beta * C, batched like gemm2."""
    prod, ax = _gemm_product(xp, "_linalg_gemm", a, A, B, C)
    out = xp.moveaxis(prod, -2, ax) + C * C.dtype.type(a.beta)
    return (xp.ascontiguousarray(out),)


def _gemm_grads(F, a, A, B, g):
    """Gradients of alpha * op(A) op(B) for A and B, as gemm2 calls."""
    ta, tb = a.transpose_a, a.transpose_b
    kw = {"alpha": a.alpha, "axis": a.axis}
    mm = F._linalg_gemm2
    if ta:   # dA = alpha * op(B) g^T
        da = mm(B, g, transpose_a=tb, transpose_b=True, **kw)
    else:    # dA = alpha * g op(B)^T
        da = mm(g, B, transpose_b=not tb, **kw)
    if tb:   # dB = alpha * g^T op(A)
        db = mm(g, A, transpose_a=True, transpose_b=ta, **kw)
    else:    # dB = alpha * op(A)^T g
        db = mm(A, g, transpose_a=not ta, **kw)
    return da, db


@_linalg_gemm2.def_gradient
def _(F, a, inputs, outputs, ograds):
    return list(_gemm_grads(F, a, inputs[0], inputs[1], ograds[0]))


@_linalg_gemm.def_gradient
def _(F, a, inputs, outputs, ograds):
    da, db = _gemm_grads(F, a, inputs[0], inputs[1], ograds[0])
    return [da, db, F._mul_scalar(ograds[0], scalar=a.beta)]
