"""The numpy front end's reductions and shape operators (`_np_sum`, `_np_reshape`,
`_npx_reshape`, `_np_transpose`, `_np_dot`, `_npi_concatenate`, ...).

Each one runs a legacy kernel (reduce.py, matrix.py, matrix_join.py, linalg.py) and reuses
its gradient rule; the np versions differ in attribute names (MXNet's `_np*` schemas),
numpy shapes (a full reduction is 0-d, not `(1,)`) and dtypes (`mean` of integers is
float32, `sum` of bool is float32, `argmax` is int64).
"""
from __future__ import annotations

import math

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import ZERO_GRAD, OpDef, add_op, get_op, shape_known
from .matrix import _as_list
from .reduce import REDUCTIONS, _reduce_gradient, sum_to_shape

_F32 = np.dtype(np.float32)


def _norm_axes(op: str, axis, ndim: int) -> tuple:
    """numpy's axis argument: None = every axis, () = none, negatives from the end."""
    if axis is None:
        return tuple(range(ndim))
    out = []
    for ax in (axis if isinstance(axis, (tuple, list)) else (axis,)):
        if not -max(ndim, 1) <= ax < max(ndim, 1):   # a 0-d array takes axis 0 / -1, as numpy's
            raise ShapeError(f"operator {op}: axis {ax} is out of bounds for an array of dimension {ndim}")
        out.append(ax % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ShapeError(f"operator {op}: duplicate value in axis {tuple(axis)}")
    return tuple(sorted(out))


def _np_reduced(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduce_out_dtype(name: str, a, dtype: np.dtype) -> np.dtype:
    if a.get("dtype") is not None:
        return np.dtype(a.dtype)
    if name == "mean" and dtype.kind in "iub":
        return _F32
    if name in ("sum", "prod") and dtype == np.bool_:
        return _F32
    return dtype


def _np_reduce_forward(name: str, kernel):
    def forward(xp, a, x):
        axes = _norm_axes(name, a.axis, x.ndim)
        out_dt = _reduce_out_dtype(name, a, x.dtype)
        src = x.astype(out_dt, copy=False) if name in ("sum", "mean", "prod") else x
        r = kernel(xp, src, axes) if axes else src.copy()
        if a.get("initial") is not None:
            init = out_dt.type(a.initial)
            r = {"sum": lambda: r + init, "prod": lambda: r * init,
                 "max": lambda: xp.maximum(r, init), "min": lambda: xp.minimum(r, init)}[name]()
        return (r.reshape(_np_reduced(x.shape, axes, a.keepdims)).astype(out_dt, copy=False),)
    return forward


def _np_reduce_shape(name):
    def infer(a, data):
        if data is None:
            return None
        return [data], [_np_reduced(tuple(data), _norm_axes(name, a.axis, len(data)), a.keepdims)]
    return infer


def _np_reduce_type(name):
    def infer(a, x):
        return None if x is None else ([x], [_reduce_out_dtype(name, a, np.dtype(x))])
    return infer


def _np_reduce_gradient(rule):
    legacy = _reduce_gradient(rule)

    def gradient(F, a, inputs, outputs, ograds):
        if a.axis is not None and len(tuple(a.axis)) == 0:
            return [ograds[0]]
        return legacy(F, a, inputs, outputs, ograds)
    return gradient


_AXIS = Attr("shape", None, "The axis or axes to reduce (None: all; (): none).")
_KEEP = Attr("bool", False, "Keep the reduced axes as size-one dimensions.")
_INITIAL = Attr("float", None, "The starting value of the reduction.")
_DTYPE_NONE = Attr("dtype", None, "The dtype of the result (default: numpy's rule as MXNet implements it).")

# np op -> (legacy reduction key, attribute names it takes)
NP_REDUCTIONS = {"_np_sum": ("sum", True), "_npi_mean": ("mean", True), "_np_prod": ("prod", True),
                 "_np_max": ("max", False), "_np_min": ("min", False)}
for _name, (_key, _has_dtype) in NP_REDUCTIONS.items():
    _kernel, _rule, _, _what = REDUCTIONS[_key]
    _attrs = {"axis": _AXIS, **({"dtype": _DTYPE_NONE} if _has_dtype else {}), "keepdims": _KEEP,
              "initial": _INITIAL}
    add_op(OpDef(_name, inputs=("a",), attrs=_attrs, forward=_np_reduce_forward(_key, _kernel),
                 infer_shape=_np_reduce_shape(_key), infer_type=_np_reduce_type(_key),
                 gradient=_np_reduce_gradient(_rule), hint=_key,
                 doc=f"numpy's {_key}: {_what} over the given axes (a full reduction is 0-d)."))


def _arg_forward(fn):
    def forward(xp, a, x):
        if a.axis is None:
            r = fn(x.reshape(-1), axis=0)
            return (np.int64(r).reshape((1,) * x.ndim if a.keepdims else ()).astype(np.int64),) \
                if xp is np else (xp.asarray(r, dtype=np.int64).reshape((1,) * x.ndim if a.keepdims else ()),)
        return (xp.asarray(fn(x, axis=a.axis, keepdims=a.keepdims), dtype=np.int64),)
    return forward


def _arg_shape(a, data):
    if data is None:
        return None
    axes = _norm_axes("argmax", a.axis, len(data))
    if data and any(data[i] == 0 for i in axes):
        raise ShapeError(f"operator argmax: attempt to get argmax/argmin of an empty sequence (shape {tuple(data)}, "
                         f"axis {a.axis})")
    return [data], [_np_reduced(tuple(data), axes, a.keepdims)]


for _name, _fn in (("_npi_argmax", np.argmax), ("_npi_argmin", np.argmin)):
    add_op(OpDef(_name,
                 monitor_inputs="input", attrs={"axis": Attr("int", None, "The axis (None: the flattened array)."),
                               "keepdims": _KEEP},
                 forward=_arg_forward(lambda x, _f=_fn.__name__, **kw: getattr(np, _f)(x, **kw)),
                 infer_shape=_arg_shape, infer_type=lambda a, x: None if x is None else ([x], [np.dtype(np.int64)]),
                 gradient=ZERO_GRAD, hint=_name[5:], doc=f"numpy's {_name[5:]} (int64 indices)."))


# -- reshape ----------------------------------------------------------------------------

def np_reshape_out(op: str, shape: tuple, newshape: tuple) -> tuple:
    """numpy's reshape target: one -1 inferred, sizes must match."""
    newshape = tuple(int(d) for d in newshape)
    size = math.prod(shape)
    if newshape.count(-1) > 1:
        raise ShapeError(f"operator {op}: can only specify one unknown dimension, got {newshape}")
    if -1 in newshape:
        known = math.prod(d for d in newshape if d != -1)
        if known == 0 or size % known:
            raise ShapeError(f"operator {op}: cannot reshape array of size {size} into shape {newshape}")
        newshape = tuple(size // known if d == -1 else d for d in newshape)
    if math.prod(newshape) != size or any(d < 0 for d in newshape):
        raise ShapeError(f"operator {op}: cannot reshape array of shape {shape} (size {size}) into "
                         f"shape {newshape}")
    return newshape


def npx_reshape_out(shape: tuple, newshape: tuple, reverse: bool = False) -> tuple:
    """npx.reshape's special codes: -1 infer, -2 copy one dim, -3 drop a size-1 dim, -4 copy
    the rest, -5 merge two dims, -6 split a dim into the next two values."""
    if reverse:
        return tuple(reversed(npx_reshape_out(tuple(reversed(shape)), _reverse_codes(newshape))))
    out, i, j, infer = [], 0, 0, None
    spec = list(newshape)
    while j < len(spec):
        c = spec[j]
        if c > 0 or c == 0:
            out.append(c)
            i += 1
        elif c == -1:
            infer = len(out)
            out.append(-1)
            i += 1
        elif c == -2:
            out.append(shape[i])
            i += 1
        elif c == -3:
            if shape[i] != 1:
                raise ShapeError(f"npx.reshape: -3 drops a dimension of size 1, but dimension {i} of "
                                 f"{shape} has size {shape[i]}")
            i += 1
        elif c == -4:
            out.extend(shape[i:])
            i = len(shape)
        elif c == -5:
            out.append(shape[i] * shape[i + 1])
            i += 2
        elif c == -6:
            d1, d2 = spec[j + 1], spec[j + 2]
            if d1 == -1:
                d1 = shape[i] // d2
            if d2 == -1:
                d2 = shape[i] // d1
            if d1 * d2 != shape[i]:
                raise ShapeError(f"npx.reshape: -6 splits dimension {i} of {shape} ({shape[i]}) into "
                                 f"{spec[j + 1]} x {spec[j + 2]}")
            out += [d1, d2]
            i += 1
            j += 2
        else:
            raise ShapeError(f"npx.reshape: unknown code {c} in {tuple(newshape)}")
        j += 1
    if infer is not None:
        known = math.prod(d for k, d in enumerate(out) if k != infer)
        out[infer] = math.prod(shape) // known if known else 0
    if math.prod(out) != math.prod(shape):
        raise ShapeError(f"npx.reshape: cannot reshape {shape} into {tuple(newshape)} (got {tuple(out)})")
    return tuple(out)


def _reverse_codes(spec) -> list:
    """reverse=True reads the codes right to left, as MXNet reverses both the input shape and the
    code list (so a -6 splits with the two codes that precede it)."""
    return list(reversed(spec))


def _reshape_grad(F, a, inputs, outputs, ograds):
    return [F.reshape_like(ograds[0], inputs[0])]


def _np_reshape_shape(a, data):
    if data is None:   # numpy shapes: an empty (0) dimension is a real size
        return None
    return [data], [np_reshape_out("_np_reshape", tuple(data), a.newshape)]


def _npx_reshape_shape(a, data):
    if data is None or (0 in data and -1 in tuple(a.newshape)):
        return None
    return [data], [npx_reshape_out(tuple(data), a.newshape, a.reverse)]


_ORDER = Attr("str", "C", "Read the elements in this index order (only 'C').", choices=("C",))
add_op(OpDef("_np_reshape", inputs=("a",), attrs={"newshape": Attr("shape", doc="The new shape."),
                                                  "order": _ORDER},
             forward=lambda xp, a, x: (x.reshape(np_reshape_out("_np_reshape", x.shape, a.newshape)).copy(),),
             infer_shape=_np_reshape_shape, gradient=_reshape_grad, hint="reshape",
             doc="numpy's reshape (one -1 is inferred)."))
add_op(OpDef("_npx_reshape", inputs=("a",), attrs={
    "newshape": Attr("shape", doc="The new shape with npx's codes -1..-6."),
    "reverse": Attr("bool", False, "Apply the codes right to left."), "order": _ORDER},
    forward=lambda xp, a, x: (x.reshape(npx_reshape_out(x.shape, a.newshape, a.reverse)).copy(),),
    infer_shape=_npx_reshape_shape, gradient=_reshape_grad, hint="reshape",
    doc="npx.reshape: reshape with MXNet's special codes."))


# -- transpose, squeeze, dot, matmul ------------------------------------------------------

def _perm(a, ndim: int) -> tuple:
    if a.axes is None or len(tuple(a.axes)) == 0:
        return tuple(reversed(range(ndim)))
    if len(a.axes) != ndim:
        raise ShapeError(f"operator _np_transpose: axes {tuple(a.axes)} do not match an array of "
                         f"dimension {ndim}")
    return tuple(ax % ndim for ax in a.axes)


def _transpose_grad(F, a, inputs, outputs, ograds):
    if a.axes is None or len(tuple(a.axes)) == 0:
        return [F._np_transpose(ograds[0])]   # reversing the axes is its own inverse
    perm = _perm(a, len(a.axes))
    return [F._np_transpose(ograds[0], axes=tuple(int(i) for i in np.argsort(perm)))]


add_op(OpDef("_np_transpose", inputs=("a",), attrs={"axes": Attr("shape", None, "The axis order.")},
             forward=lambda xp, a, x: (xp.ascontiguousarray(xp.transpose(x, _perm(a, x.ndim))),),
             infer_shape=lambda a, d: None if d is None else ([d], [tuple(d[i] for i in _perm(a, len(d)))]),
             gradient=_transpose_grad, hint="transpose", doc="numpy's transpose."))


def _squeezed(a, shape: tuple) -> tuple:
    if not shape:   # numpy squeezes a 0-d array over axis None, 0 or -1 to itself
        _norm_axes("_np_squeeze", a.axis, 0)
        return ()
    axes = tuple(i for i, d in enumerate(shape) if d == 1) if a.axis is None \
        else _norm_axes("_np_squeeze", a.axis, len(shape))
    for i in axes:
        if shape[i] != 1:
            raise ShapeError(f"operator _np_squeeze: cannot select an axis to squeeze out which has "
                             f"size not equal to one (axis {i} of {shape})")
    return tuple(d for i, d in enumerate(shape) if i not in axes)


add_op(OpDef("_np_squeeze", inputs=("a",), attrs={"axis": Attr("shape", None, "The axes to remove.")},
             forward=lambda xp, a, x: (x.reshape(_squeezed(a, x.shape)).copy(),),
             infer_shape=lambda a, d: None if d is None else ([d], [_squeezed(a, tuple(d))]),
             gradient=_reshape_grad, hint="squeeze", doc="numpy's squeeze (all size-1 axes by default)."))


def _dot_out(op: str, ls: tuple, rs: tuple) -> tuple:
    if not ls or not rs:
        return tuple(ls or rs)
    if len(rs) == 1:
        if ls[-1] != rs[0]:
            raise ShapeError(f"operator {op}: shapes {ls} and {rs} not aligned")
        return tuple(ls[:-1])
    k = rs[-2]
    if ls[-1] != k:
        raise ShapeError(f"operator {op}: shapes {ls} and {rs} not aligned: {ls[-1]} (dim {len(ls) - 1}) "
                         f"!= {k} (dim {len(rs) - 2})")
    return tuple(ls[:-1]) + tuple(rs[:-2]) + tuple(rs[-1:])


def _np_dot(xp, a, lhs, rhs):
    _dot_out("_np_dot", lhs.shape, rhs.shape)
    if lhs.ndim == 0 or rhs.ndim == 0:
        return (xp.multiply(lhs, rhs),)
    dt = np.result_type(lhs.dtype, rhs.dtype)
    return (xp.asarray(xp.dot(lhs.astype(dt, copy=False), rhs.astype(dt, copy=False))),)


def _pair_type(a, lhs, rhs):
    return None if lhs is None or rhs is None else ([lhs, rhs], [np.result_type(lhs, rhs)])


def _dot_grad(F, a, inputs, outputs, ograds):
    return list(F._backward_np_dot(ograds[0], *inputs))


def _backward_np_dot(xp, a, g, lhs, rhs):
    """np.dot's input gradients, for any ranks (the shapes are only known at run time)."""
    na, nb = lhs.ndim, rhs.ndim
    if na == 0 or nb == 0:
        return (sum_to_shape(xp, g * rhs, lhs.shape).astype(lhs.dtype, copy=False),
                sum_to_shape(xp, g * lhs, rhs.shape).astype(rhs.dtype, copy=False))
    b_other = list(range(nb - 2)) + [nb - 1] if nb > 1 else []
    ga = xp.tensordot(g, rhs, axes=(list(range(na - 1, g.ndim)), b_other))
    gb = xp.tensordot(lhs, g, axes=(list(range(na - 1)), list(range(na - 1))))
    if nb > 1:
        gb = xp.moveaxis(gb, 0, nb - 2)
    return (xp.ascontiguousarray(ga.reshape(lhs.shape)).astype(lhs.dtype, copy=False),
            xp.ascontiguousarray(gb.reshape(rhs.shape)).astype(rhs.dtype, copy=False))


add_op(OpDef("_backward_np_dot", inputs=("ograd", "a", "b"), outputs=("grad_a", "grad_b"),
             forward=_backward_np_dot, infer_shape=lambda a, g, ls, rs: ([g, ls, rs], [ls, rs]),
             infer_type=lambda a, g, lt, rt: ([g, lt, rt], [lt, rt]), public=False, fluent=False,
             doc="np.dot's gradient with respect to both operands."))


def _fill_contracted(ls, rs, r_axis: int) -> tuple:
    """Unknown (0) contracted dimensions learn their size from the other operand (deferred init)."""
    ls, rs = list(ls), list(rs)
    if ls and rs:
        lk, rk = ls[-1], rs[r_axis]
        if lk == 0 and rk:
            ls[-1] = rk
        elif rk == 0 and lk:
            rs[r_axis] = lk
    return tuple(ls), tuple(rs)


def _dot_shape(a, ls, rs):
    if ls is None or rs is None:
        return None
    ls, rs = _fill_contracted(ls, rs, -2 if len(rs) > 1 else 0)
    if not (shape_known(ls) and shape_known(rs)):
        return [ls, rs], [None]
    return [ls, rs], [_dot_out("_np_dot", ls, rs)]


add_op(OpDef("_np_dot", inputs=("a", "b"), forward=_np_dot, infer_shape=_dot_shape,
             infer_type=_pair_type,
             gradient=_dot_grad, hint="dot", doc="numpy's dot."))


def _matmul_out(ls: tuple, rs: tuple) -> tuple:
    if not ls or not rs:
        raise ShapeError("operator _npi_matmul: operands must not be 0-d")
    lm = ls if len(ls) > 1 else (1,) + tuple(ls)
    rm = rs if len(rs) > 1 else tuple(rs) + (1,)
    if lm[-1] != rm[-2]:
        raise ShapeError(f"operator _npi_matmul: shapes {ls} and {rs} not aligned")
    batch = np.broadcast_shapes(tuple(lm[:-2]), tuple(rm[:-2]))
    out = tuple(batch) + (lm[-2], rm[-1])
    if len(ls) == 1:
        out = out[:-2] + out[-1:]
    if len(rs) == 1:
        out = out[:-1]
    return out


def _matmul_shape(a, ls, rs):
    if ls is None or rs is None:
        return None
    ls, rs = _fill_contracted(ls, rs, -2 if len(rs) > 1 else 0)
    return [ls, rs], [_matmul_out(ls, rs)]   # numpy shapes: an empty (0) dimension is a real size


def _matmul_grad(F, a, inputs, outputs, ograds):
    return list(F._backward_npi_matmul(ograds[0], *inputs))


def _backward_matmul(xp, a, g, lhs, rhs):
    """np.matmul's input gradients: 1-D operands promoted, broadcast batch axes summed back."""
    lm = lhs if lhs.ndim > 1 else lhs.reshape((1,) + lhs.shape)
    rm = rhs if rhs.ndim > 1 else rhs.reshape(rhs.shape + (1,))
    gm = g
    if rhs.ndim == 1:   # the dropped axes come back last-first (both 1-D: g is 0-d)
        gm = xp.expand_dims(gm, -1)
    if lhs.ndim == 1:
        gm = xp.expand_dims(gm, -2)
    ga = sum_to_shape(xp, xp.matmul(gm, xp.swapaxes(rm, -1, -2)), lm.shape)
    gb = sum_to_shape(xp, xp.matmul(xp.swapaxes(lm, -1, -2), gm), rm.shape)
    return (xp.ascontiguousarray(ga.reshape(lhs.shape)).astype(lhs.dtype, copy=False),
            xp.ascontiguousarray(gb.reshape(rhs.shape)).astype(rhs.dtype, copy=False))


add_op(OpDef("_backward_npi_matmul", inputs=("ograd", "a", "b"), outputs=("grad_a", "grad_b"),
             forward=_backward_matmul, infer_shape=lambda a, g, ls, rs: ([g, ls, rs], [ls, rs]),
             infer_type=lambda a, g, lt, rt: ([g, lt, rt], [lt, rt]), public=False, fluent=False,
             doc="np.matmul's gradient with respect to both operands."))


add_op(OpDef("_npi_matmul", inputs=("a", "b"), forward=lambda xp, a, lhs, rhs: (xp.matmul(lhs, rhs),),
             infer_shape=_matmul_shape,
             infer_type=_pair_type,
             gradient=_matmul_grad, hint="matmul", doc="numpy's matmul (batched, broadcasting)."))


# -- joining, where, creation ---------------------------------------------------------------

def _arg_names(a) -> tuple:
    return tuple(f"arg{i}" for i in range(a.num_args or 0))


def _concat_axis(a, ndim: int) -> int:
    return a.axis % max(ndim, 1)


def _concatenate(xp, a, *xs):
    if a.axis is None:
        return (xp.concatenate([x.reshape(-1) for x in xs]),)
    dt = np.result_type(*[x.dtype for x in xs])
    return (xp.concatenate([x.astype(dt, copy=False) for x in xs], axis=a.axis),)


def _concatenate_shape(a, *shapes):
    if any(s is None for s in shapes):
        return None
    if a.axis is None:
        return list(shapes), [(sum(math.prod(s) for s in shapes),)]
    first = tuple(shapes[0])
    if not first:
        raise ShapeError("operator _npi_concatenate: zero-dimensional arrays cannot be concatenated")
    if not -len(first) <= a.axis < len(first):
        raise ShapeError(f"operator _npi_concatenate: axis {a.axis} is out of bounds for arrays of dimension "
                         f"{len(first)}")
    axis = a.axis % len(first)
    for i, s in enumerate(shapes):   # numpy's rule: an empty (0) dimension is a real size
        if len(s) != len(first) or any(d != e for k, (d, e) in enumerate(zip(s, first)) if k != axis):
            raise ShapeError(f"operator _npi_concatenate: all the input array dimensions except for the "
                             f"concatenation axis must match exactly, but input 0 has shape {first} and "
                             f"input {i} has shape {tuple(s)}")
    out = list(first)
    out[axis] = sum(s[axis] for s in shapes)
    return list(shapes), [tuple(out)]


def _concatenate_grad(F, a, inputs, outputs, ograds):
    n = len(inputs)
    if a.axis is None:   # join the flattened inputs' gradients, then give each its shape back
        flat = [F._np_reshape(x, newshape=(-1,)) for x in inputs]
        pieces = _as_list(F._backward_Concat(ograds[0], *flat, num_args=n, dim=0), n)
        return [F.reshape_like(p, x) for p, x in zip(pieces, inputs)]
    return _as_list(F._backward_Concat(ograds[0], *inputs, num_args=n, dim=a.axis), n)


add_op(OpDef("_npi_concatenate", monitor_inputs="data", inputs=_arg_names, key_var_num_args="num_args",
             attrs={"num_args": Attr("int", doc="Number of inputs."),
                    "axis": Attr("int", 0, "The axis along which to join (None: flattened).", optional=True)},
             forward=_concatenate, infer_shape=_concatenate_shape, gradient=_concatenate_grad,
             hint="concatenate", doc="numpy's concatenate."))

_STACK = get_op("stack")
add_op(OpDef("_npi_stack", inputs=_arg_names, key_var_num_args="num_args",
             attrs={"axis": Attr("int", 0, "The new axis."), "num_args": Attr("int", doc="Number of inputs.")},
             forward=_STACK.forward, infer_shape=_STACK.infer_shape, gradient=_STACK.gradient,
             hint="stack", doc="numpy's stack (the legacy stack kernel)."))

_WHERE = get_op("where")


def _np_where(xp, a, cond, x, y):
    dt = np.result_type(x.dtype, y.dtype)
    return (xp.where(cond != 0, x.astype(dt, copy=False), y.astype(dt, copy=False)),)


def _where_grad(F, a, inputs, outputs, ograds):
    cond, x, y = inputs
    g = ograds[0]
    zero = F.zeros_like(g)
    return [None, F._sum_to_like(F._npi_where(cond, g, zero), x), F._sum_to_like(F._npi_where(cond, zero, g), y)]


def _where_shape(a, c, x, y):
    if c is None or x is None or y is None:
        return None
    return [c, x, y], [tuple(np.broadcast_shapes(tuple(c), tuple(x), tuple(y)))]


add_op(OpDef("_npi_where", inputs=("condition", "x", "y"), forward=_np_where, infer_shape=_where_shape,
             infer_type=lambda a, c, x, y: None if x is None or y is None else ([c, x, y], [np.result_type(x, y)]),
             gradient=_where_grad, hint="where", doc="numpy's where with broadcasting."))
