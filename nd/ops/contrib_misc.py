"""Small value operators MXNet 1.9.1 keeps outside the main families: quadratic,
all_finite / multi_all_finite (AMP's overflow checks), index_array,
ravel_multi_index / unravel_index, khatri_rao, round_ste / sign_ste, gradientmultiplier
(src/operator/contrib/quadratic_op*, all_finite*, index_array*, tensor/ravel*, contrib/krprod*,
contrib/stes_op*, contrib/gradient_multiplier_op*).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, ShapeError
from ..registry import ZERO_GRAD, register, same_shape
from .elemwise import _round


# ---------------------------------------------------------------------------
# quadratic: a * x**2 + b * x + c


@register("_contrib_quadratic", hint="quadratic", infer_shape=same_shape,
          attrs={"a": Attr("float", 0.0, "Coefficient of the quadratic term in the quadratic function."),
                 "b": Attr("float", 0.0, "Coefficient of the linear term in the quadratic function."),
                 "c": Attr("float", 0.0, "Constant term in the quadratic function.")})
def quadratic(xp, a, x):
    """Elementwise a * x**2 + b * x + c, in the input's dtype."""
    t = x.dtype.type
    return ((t(a.a) * x + t(a.b)) * x + t(a.c),)


@quadratic.def_gradient
def _(F, a, inputs, outputs, ograds):
    slope = F._plus_scalar(F._mul_scalar(inputs[0], scalar=2.0 * a.a), scalar=a.b)
    return [F.elemwise_mul(ograds[0], slope)]


# ---------------------------------------------------------------------------
# all_finite / multi_all_finite


_INIT_OUTPUT = Attr("bool", True, "Initialize output to 1.")


def _finite_out(a, *shapes):
    return list(shapes), [(1,)]


def _finite_type(a, *dtypes):
    return list(dtypes), [np.dtype(np.float32)]


def _finite_flag(xp, a, arrays) -> tuple:
    if not a.init_output:
        raise NotImplementedError("all_finite(init_output=False) accumulates into an existing output "
                                  "buffer, which hybridgraph does not keep; combine the results of "
                                  "init_output=True calls with elemwise_mul instead")
    ok = all(bool(xp.all(xp.isfinite(x))) for x in arrays)
    return (xp.asarray([1.0 if ok else 0.0], dtype=np.float32),)


@register("all_finite", attrs={"init_output": _INIT_OUTPUT}, gradient=ZERO_GRAD,
          infer_shape=_finite_out, infer_type=_finite_type)
def all_finite(xp, a, x):
    """A (1,) float32 array: 1 when every element of the input is finite, else 0."""
    return _finite_flag(xp, a, (x,))


def _multi_inputs(a) -> tuple[str, ...]:
    return tuple(f"data{i}" for i in range(a.num_arrays if a.num_arrays is not None else 1))


@register("multi_all_finite",
          monitor_inputs="array_", inputs=_multi_inputs, key_var_num_args="num_arrays", gradient=ZERO_GRAD,
          attrs={"num_arrays": Attr("int", 1, "Number of arrays."), "init_output": _INIT_OUTPUT},
          infer_shape=_finite_out, infer_type=_finite_type)
def multi_all_finite(xp, a, *arrays):
    """A (1,) float32 array: 1 when every element of every input is finite, else 0."""
    if len(arrays) != a.num_arrays:
        raise AttrError(f"operator multi_all_finite: num_arrays={a.num_arrays} but {len(arrays)} inputs were given")
    return _finite_flag(xp, a, arrays)


# ---------------------------------------------------------------------------
# index_array


def _index_axes(a, ndim: int) -> tuple[int, ...]:
    if a.axes is None:
        return tuple(range(ndim))
    out = []
    for ax in a.axes:
        if not -ndim <= ax < ndim:
            raise AttrError(f"operator index_array: axis {ax} is out of range for {ndim}-D input")
        out.append(ax % ndim)
    return tuple(out)


def _index_array_shape(a, data):
    if data is None:
        return None
    return [data], [tuple(data) + (len(_index_axes(a, len(data))),)]


@register("_contrib_index_array", hint="index_array", gradient=ZERO_GRAD,
          attrs={"axes": Attr("shape", None, "The axes to include in the index array. Supports negative values.")},
          infer_shape=_index_array_shape, infer_type=lambda a, data: ([data], [np.dtype(np.int64)]))
def index_array(xp, a, x):
    """For every element of the input, its index along `axes` (default: all), as int64 in a last axis."""
    axes = _index_axes(a, x.ndim)
    grids = xp.indices(x.shape, dtype=np.int64) if x.ndim else xp.zeros((0,), dtype=np.int64)
    if not x.ndim:
        return (grids,)
    return (xp.stack([grids[ax] for ax in axes], axis=-1),)


# ---------------------------------------------------------------------------
# ravel_multi_index / unravel_index


_RAVEL_SHAPE = Attr("shape", None, "Shape of the array into which the multi-indices apply.")


def _strides(name: str, shape) -> list[int]:
    if shape is None or not len(shape):
        raise AttrError(f"operator {name}: attribute 'shape' is required")
    if any(d <= 0 for d in shape[1:]):
        raise AttrError(f"operator {name}: only the leading dimension of shape may be -1, got {tuple(shape)}")
    strides, s = [], 1
    for d in reversed(shape):
        strides.insert(0, s)
        s *= max(int(d), 1)
    return strides


def _ravel_shape(a, data):
    if data is None:
        return None
    if len(data) != 2 or data[0] != len(a.shape):
        raise ShapeError(f"operator ravel_multi_index: data must be ({len(a.shape)}, N) for shape "
                         f"{tuple(a.shape)}, got {tuple(data)}")
    return [data], [(data[1],)]


@register("_ravel_multi_index", aliases=("ravel_multi_index",), gradient=ZERO_GRAD,
          attrs={"shape": _RAVEL_SHAPE}, infer_shape=_ravel_shape)
def ravel_multi_index(xp, a, x):
    """Flat indices (N,) of a batch of multi-indices (ndim, N) into an array of `shape`."""
    _ravel_shape(a, x.shape)
    strides = xp.asarray(_strides("ravel_multi_index", a.shape), dtype=np.float64).reshape(-1, 1)
    return ((x.astype(np.float64) * strides).sum(axis=0).astype(x.dtype),)


@register("_unravel_index", aliases=("unravel_index",), gradient=ZERO_GRAD, attrs={"shape": _RAVEL_SHAPE},
          infer_shape=lambda a, data: None if data is None else ([data], [(len(a.shape),) + tuple(data)]))
def unravel_index(xp, a, x):
    """Multi-indices (ndim, ...) of flat indices into an array of `shape` (the leading axis is unbounded)."""
    strides = _strides("unravel_index", a.shape)
    rest = x.astype(np.int64)
    rows = []
    for s in strides:  # the leading index is not wrapped (MXNet 1.9.1 does the same)
        rows.append(rest // s)
        rest = rest - rows[-1] * s
    return (xp.stack(rows, axis=0).astype(x.dtype),)


# ---------------------------------------------------------------------------
# khatri_rao: column-wise Kronecker product (src/operator/contrib/krprod.cc)


def _khatri_rao_inputs(a) -> tuple[str, ...]:
    return tuple(f"arg{i}" for i in range(a.num_args or 0))


def _khatri_rao_shape(a, *shapes):
    if any(s is None for s in shapes):
        return None
    for i, s in enumerate(shapes):
        if len(s) != 2:
            raise ShapeError(f"operator khatri_rao: input arg{i} must be a matrix, got shape {tuple(s)}")
        if s[1] != shapes[0][1]:
            raise ShapeError(f"operator khatri_rao: every input needs {shapes[0][1]} columns (as arg0); "
                             f"arg{i} has shape {tuple(s)}")
    return list(shapes), [(int(np.prod([s[0] for s in shapes])), shapes[0][1])]


@register("khatri_rao", inputs=_khatri_rao_inputs, key_var_num_args="num_args", infer_shape=_khatri_rao_shape,
          attrs={"num_args": Attr("int", doc="Number of input matrices.")})
def khatri_rao(xp, a, *mats):
    """Khatri-Rao product: row ``i1 * (n2 * ... ) + i2 * (...) + ...`` of the result is the
    elementwise product of row i1 of arg0, row i2 of arg1, ... (every input has the same
    number of columns). Not differentiable, as in MXNet 1.9.1 (it registers no gradient)."""
    if len(mats) != a.num_args or a.num_args < 1:
        raise AttrError(f"operator khatri_rao: num_args={a.num_args} but {len(mats)} inputs were given "
                        "(at least one is needed)")
    _khatri_rao_shape(a, *(m.shape for m in mats))
    out = mats[0]
    for m in mats[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, m.shape[1])
    return (xp.array(out, copy=True) if out is mats[0] else out,)


# ---------------------------------------------------------------------------
# straight-through estimators and the gradient multiplier (contrib/stes_op*, gradient_multiplier_op*)


@register("_contrib_round_ste", monitor_inputs="input", hint="round_ste", infer_shape=same_shape)
def round_ste(xp, a, x):
    """round() (half away from zero, as MXNet) forward; the gradient passes straight through."""
    return (_round(xp, x),)


@register("_contrib_sign_ste", monitor_inputs="input", hint="sign_ste", infer_shape=same_shape)
def sign_ste(xp, a, x):
    """sign() forward; the gradient passes straight through (1 instead of sign's 0)."""
    return (xp.sign(x),)


@round_ste.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [ograds[0]]


@sign_ste.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [ograds[0]]


@register("_contrib_gradientmultiplier", monitor_inputs="input", hint="gradientmultiplier", infer_shape=same_shape,
          attrs={"scalar": Attr("float", 1.0, "lambda multiplier"),
                 "is_int": Attr("bool", True, "Indicate whether scalar input is int type")})
def gradientmultiplier(xp, a, x):
    """The identity forward; the gradient is multiplied by `scalar` (a gradient reversal layer
    with a negative one)."""
    return (x.copy(),)


@gradientmultiplier.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._mul_scalar(ograds[0], scalar=a.scalar)]
