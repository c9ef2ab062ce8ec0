"""The `mx.np` function namespace: MXNet 1.9's signatures over the np registry ops.

Every function calls registry operators (`_npi_*`, `_np_*`, or the legacy op MXNet's np
front end itself uses, such as `clip`, `expand_dims`, `_split_v2`), so results record on
the autograd tape and trace into exportable graphs; a few composite functions (`var`,
`std`, `linalg.norm`, `tensordot`) are written with those ops.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from ..backend import Context, as_dtype, current_context
from .multiarray import (_BINARY, _is_scalar, array, array_from, binary, call, ndarray, reduce_call,
                         reshape_call, transpose_call)

# -- creation ---------------------------------------------------------------------------------


def _ctx(ctx: Context | None, device: Context | None) -> Context:
    return ctx or device or current_context()


def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, (int, onp.integer)) else tuple(int(d) for d in shape)


def _dt(dtype, default="float32") -> str:
    return as_dtype(default if dtype is None else dtype).name


def _c_order(fn: str, order: str) -> None:
    if order != "C":
        raise NotImplementedError(f"{fn} only supports order='C' (row-major), while received {order!r}")


def zeros(shape, dtype=None, order="C", ctx=None, device=None) -> ndarray:
    """An array of zeros (float32 by default)."""
    _c_order("zeros", order)
    return call("_npi_zeros", [], {"shape": _shape(shape), "ctx": _ctx(ctx, device), "dtype": _dt(dtype)})


def ones(shape, dtype=None, order="C", ctx=None, device=None) -> ndarray:
    """An array of ones (float32 by default)."""
    _c_order("ones", order)
    return call("_npi_ones", [], {"shape": _shape(shape), "ctx": _ctx(ctx, device), "dtype": _dt(dtype)})


def empty(shape, dtype=None, order="C", ctx=None, device=None) -> ndarray:
    """An uninitialised array (zero-filled here)."""
    _c_order("empty", order)
    return zeros(shape, dtype, order, ctx, device)


def full(shape, fill_value, dtype=None, order="C", ctx=None, device=None, out=None) -> ndarray:
    """An array filled with `fill_value` (float32 unless `dtype`, as MXNet; an array fill
    value is broadcast)."""
    _c_order("full", order)
    if not _is_scalar(fill_value):   # an array (or a traced one): broadcast
        return broadcast_to(fill_value.astype(dtype or fill_value.dtype), _shape(shape))
    return call("_npi_full", [], {"shape": _shape(shape), "ctx": _ctx(ctx, device), "dtype": _dt(dtype),
                                  "value": float(fill_value)}, out=out)


def _like(a, fill, dtype, ctx=None, device=None, out=None) -> ndarray:
    return call("_npi_full_like", [a], {"fill_value": fill, "dtype": None if dtype is None else _dt(dtype),
                                        "ctx": _ctx(ctx, device)}, out=out)


def zeros_like(a, dtype=None, order="C", ctx=None, out=None, device=None) -> ndarray:
    return _like(a, 0, dtype, ctx, device, out)


def ones_like(a, dtype=None, order="C", ctx=None, out=None, device=None) -> ndarray:
    return _like(a, 1, dtype, ctx, device, out)


def full_like(a, fill_value, dtype=None, order="C", ctx=None, out=None, device=None) -> ndarray:
    return _like(a, float(fill_value), dtype, ctx, device, out)


def empty_like(prototype, dtype=None, order="C", subok=False, shape=None) -> ndarray:
    return zeros(shape or prototype.shape, dtype or prototype.dtype, ctx=prototype.ctx)


def arange(start, stop=None, step=1, dtype=None, ctx=None, device=None) -> ndarray:
    """Evenly spaced values in [start, stop) (float32 by default, as MXNet)."""
    step = 1 if step is None else step
    if stop is None:
        start, stop = 0, start
    return call("_npi_arange", [], {"start": start, "stop": stop, "step": step, "ctx": _ctx(ctx, device),
                                    "dtype": _dt(dtype)})


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None, device=None):
    """`num` evenly spaced samples over [start, stop]."""
    res = call("_linspace", [], {"start": start, "stop": stop, "num": num, "endpoint": endpoint,
                                 "ctx": _ctx(ctx, device), "dtype": _dt(dtype)})
    if retstep:
        return res, (stop - start) / builtins_max(num - (1 if endpoint else 0), 1)
    return res


def eye(N, M=None, k=0, dtype=None, ctx=None, device=None) -> ndarray:  # noqa: N803
    return call("_npi_eye", [], {"N": N, "M": M, "k": k, "ctx": _ctx(ctx, device), "dtype": _dt(dtype)})


def identity(n, dtype=None, ctx=None, device=None) -> ndarray:
    return call("_npi_identity", [], {"shape": (n, n), "ctx": _ctx(ctx, device), "dtype": _dt(dtype)})


def asarray(obj, dtype=None, ctx=None, device=None) -> ndarray:
    if isinstance(obj, ndarray) and (dtype is None or as_dtype(dtype) == obj.dtype):
        return obj
    return array(obj, dtype=dtype, ctx=ctx, device=device)


def copy(a) -> ndarray:
    return call("_np_copy", [a], {})


# -- elementwise --------------------------------------------------------------------------------

# numpy's ufunc keywords MXNet accepts, only at these values (others raise NotImplementedError)
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_UFUNC_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "dtype": None, "subok": True}


def _check_ufunc_kwargs(name: str, kwargs: dict) -> None:
    for key, value in kwargs.items():
        if key not in _UFUNC_DEFAULTS:
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
        if key == "dtype" and value is not None:
            onp.dtype(value)   # an invalid dtype is a TypeError, as numpy's
        if key == "casting" and value not in _CASTINGS:
            raise TypeError(f"casting={value} not understood for operator {name}")
        if value is not _UFUNC_DEFAULTS[key] and value != _UFUNC_DEFAULTS[key]:
            raise NotImplementedError(f"{name}: {key}={value!r} is not supported (MXNet's np ufuncs support "
                                      f"only {key}={_UFUNC_DEFAULTS[key]!r}); convert the result instead")


def _unary(np_name: str, op: str):
    def fn(x, out=None, **kwargs):
        _check_ufunc_kwargs(np_name, kwargs)
        if _is_scalar(x):
            return getattr(onp, np_name)(x)
        return call(op, [x], {}, out=out)
    fn.__name__ = np_name
    fn.__doc__ = f"numpy's {np_name}, elementwise (registry op {op})."
    return fn


_UNARY_OPS = {n: f"_npi_{n}" for n in (
    "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "square", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "degrees", "radians",
    "negative", "reciprocal", "sign", "floor", "ceil", "trunc", "fix", "rint", "absolute", "deg2rad",
    "rad2deg", "logical_not")}
_UNARY_OPS["abs"] = "_npi_absolute"
for _n, _op in _UNARY_OPS.items():
    globals()[_n] = _unary(_n, _op)


def _binary_fn(np_name: str, ops: tuple):
    def fn(x1, x2, out=None, **kwargs):
        _check_ufunc_kwargs(np_name, kwargs)
        if _is_scalar(x1) and _is_scalar(x2):
            return getattr(onp, np_name)(x1, x2)
        res = binary(x1, x2, *ops)
        if out is not None:
            out[...] = res
            return out
        return res
    fn.__name__ = np_name
    fn.__doc__ = f"numpy's {np_name} with broadcasting (registry op {ops[0]})."
    return fn


_BIN = {"add": _BINARY["add"], "subtract": _BINARY["sub"], "multiply": _BINARY["mul"],
        "true_divide": _BINARY["truediv"], "divide": _BINARY["truediv"], "mod": _BINARY["mod"],
        "remainder": _BINARY["mod"], "power": _BINARY["pow"]}
for _n in ("maximum", "minimum", "hypot"):
    _BIN[_n] = (f"_npi_{_n}", f"_npi_{_n}_scalar", f"_npi_{_n}_scalar")
_FLIP = {"greater": "less", "less": "greater", "greater_equal": "less_equal", "less_equal": "greater_equal"}
for _n in ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and",
           "logical_or", "logical_xor"):
    _BIN[_n] = (f"_npi_{_n}", f"_npi_{_n}_scalar", f"_npi_{_FLIP.get(_n, _n)}_scalar")
for _n, _ops in _BIN.items():
    globals()[_n] = _binary_fn(_n, _ops)


def clip(a, a_min, a_max, out=None) -> ndarray:
    """Limit the values to [a_min, a_max] (MXNet's np.clip is the legacy `clip` op)."""
    if a_min is None and a_max is None:
        raise ValueError("array_clip: must set either max or min")
    if _is_scalar(a):
        return onp.clip(a, a_min, a_max)
    return call("clip", [a], {"a_min": -onp.inf if a_min is None else float(a_min),
                              "a_max": onp.inf if a_max is None else float(a_max)}, out=out)


def where(condition, x=None, y=None) -> Any:
    """Elements of x where condition, else of y (scalars allowed); one argument: nonzero."""
    if x is None and y is None:
        return nonzero(condition)
    like = next(v for v in (condition, x, y) if not _is_scalar(v))
    x = full_like(like, x, dtype=onp.float32) if _is_scalar(x) else x
    y = full_like(like, y, dtype=onp.float32) if _is_scalar(y) else y
    return call("_npi_where", [condition, x, y], {})


def nonzero(a) -> tuple:
    return tuple(array_from(i.astype(onp.int64), a.ctx) for i in onp.nonzero(a.asnumpy()))


def _into(name: str, res: Any, out: Any) -> Any:
    """Write a composite function's result into `out` (same dtype required, as MXNet's ops)."""
    if out is None:
        return res
    if out.dtype != res.dtype:
        raise TypeError(f"{name}: out= has dtype {out.dtype}, the result is {res.dtype}")
    out[...] = res
    return out


def isnan(x, out=None, **kwargs) -> ndarray:
    _check_ufunc_kwargs("isnan", kwargs)
    return _into("isnan", not_equal(x, x), out)  # noqa: F821 - generated above


def isinf(x, out=None, **kwargs) -> ndarray:
    _check_ufunc_kwargs("isinf", kwargs)
    return _into("isinf", equal(absolute(x), onp.inf), out)  # noqa: F821


def isfinite(x, out=None, **kwargs) -> ndarray:
    _check_ufunc_kwargs("isfinite", kwargs)
    return _into("isfinite", logical_not(logical_or(isnan(x), isinf(x))), out)  # noqa: F821


def isposinf(x, out=None, **kwargs) -> ndarray:
    _check_ufunc_kwargs("isposinf", kwargs)
    return _into("isposinf", equal(x, onp.inf), out)  # noqa: F821


def isneginf(x, out=None, **kwargs) -> ndarray:
    _check_ufunc_kwargs("isneginf", kwargs)
    return _into("isneginf", equal(x, -onp.inf), out)  # noqa: F821


# -- reductions ---------------------------------------------------------------------------------

def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):  # noqa: A001
    return reduce_call("_np_sum", a, axis, dtype, out, keepdims, initial)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    return reduce_call("_npi_mean", a, axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    return reduce_call("_np_prod", a, axis, dtype, out, keepdims, initial)


def max(a, axis=None, out=None, keepdims=False):  # noqa: A001
    return reduce_call("_np_max", a, axis, out=out, keepdims=keepdims, with_dtype=False)


def min(a, axis=None, out=None, keepdims=False):  # noqa: A001
    return reduce_call("_np_min", a, axis, out=out, keepdims=keepdims, with_dtype=False)


amax, amin = max, min
product = prod   # MXNet registers _np_product as an alias of _np_prod


def argmax(a, axis=None, out=None):
    return call("_npi_argmax", [a], {"axis": axis, "keepdims": False}, out=out)


def argmin(a, axis=None, out=None):
    return call("_npi_argmin", [a], {"axis": axis, "keepdims": False}, out=out)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance, written with registry ops (mean of squared deviations)."""
    m = mean(a, axis=axis, dtype=dtype, keepdims=True)
    d = subtract(a, m)  # noqa: F821
    s = sum(multiply(d, d), axis=axis, keepdims=keepdims)  # noqa: F821
    n = a.size // builtins_max(s.size, 1)
    res = true_divide(s, builtins_max(n - ddof, 0))  # noqa: F821
    if out is not None:
        out[...] = res
        return out
    return res


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    res = sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))  # noqa: F821
    if out is not None:
        out[...] = res
        return out
    return res


def builtins_max(x, y):
    return x if x >= y else y


# -- shape manipulation ------------------------------------------------------------------------

def reshape(a, newshape, order="C") -> ndarray:
    return reshape_call(a, newshape, order)


def transpose(a, axes=None) -> ndarray:
    return transpose_call(a, axes)


def squeeze(x, axis=None) -> ndarray:
    return call("_np_squeeze", [x], {"axis": axis})


def expand_dims(a, axis) -> ndarray:
    return call("expand_dims", [a], {"axis": axis})


def swapaxes(a, axis1, axis2) -> ndarray:
    return call("SwapAxis", [a], {"dim1": axis1, "dim2": axis2})


def ravel(x, order="C") -> ndarray:
    return reshape_call(x, (-1,))


def broadcast_to(array, shape) -> ndarray:  # noqa: A002 - numpy's name
    """numpy's broadcast_to (`_npi_broadcast_to`; a scalar gives np.full)."""
    if _is_scalar(array):
        return full(shape, array)
    return call("_npi_broadcast_to", [array], {"shape": _shape(shape)})


def concatenate(seq, axis=0, out=None) -> ndarray:
    return call("_npi_concatenate", list(seq), {"axis": axis, "num_args": len(seq)}, out=out)


def stack(arrays, axis=0, out=None) -> ndarray:
    return call("_npi_stack", list(arrays), {"axis": axis, "num_args": len(arrays)}, out=out)


def _stack_call(op: str, arrays, out=None) -> ndarray:
    if not hasattr(arrays, "__getitem__") and hasattr(arrays, "__iter__"):
        raise ValueError(f"expected iterable for arrays but got {type(arrays)}")
    arrays = list(arrays)
    return call(op, arrays, {"num_args": len(arrays)}, out=out)


def vstack(arrays, out=None) -> ndarray:
    """Stack row-wise (1-D inputs become rows) - `_npi_vstack`."""
    return _stack_call("_npi_vstack", arrays, out)


row_stack = vstack


def hstack(arrays) -> ndarray:
    """Stack column-wise (along axis 1, or 0 for 1-D inputs) - `_npi_hstack`."""
    return _stack_call("_npi_hstack", arrays)


def dstack(arrays) -> ndarray:
    """Stack depth-wise (along axis 2, inputs lifted to 3-D) - `_npi_dstack`."""
    return _stack_call("_npi_dstack", arrays)


def column_stack(tup) -> ndarray:
    """Stack 1-D arrays as columns (2-D inputs as they are) - `_npi_column_stack`."""
    return _stack_call("_npi_column_stack", tup)


def _split_call(ary, indices: list, sections: int, axis: int) -> list:
    res = call("_split_v2", [ary], {"indices": tuple(indices), "sections": sections, "axis": axis})
    n = sections or len(indices)
    return [res] if n == 1 else list(res)   # a traced multi-output value iterates over its outputs


def _split_indices(fn: str, indices_or_sections) -> list:
    if isinstance(indices_or_sections, (list, set, tuple)):
        return [0] + list(indices_or_sections)
    raise ValueError("indices_or_sections must be either int, or tuple / list / set of ints")


def split(ary, indices_or_sections, axis=0) -> list:
    """Split into equal sections (which must divide the axis) or at indices (MXNet's `_split_v2`)."""
    if isinstance(indices_or_sections, (int, onp.integer)):
        sections, size = int(indices_or_sections), ary.shape[axis]
        if size % sections:
            raise ValueError("array split does not result in an equal division")
        return _split_call(ary, [i * (size // sections) for i in range(sections)], 0, axis)
    return _split_call(ary, _split_indices("split", indices_or_sections), 0, axis)


def array_split(ary, indices_or_sections, axis=0) -> list:
    """Like split, but `sections` need not divide the axis (the first pieces are one longer)."""
    if isinstance(indices_or_sections, (int, onp.integer)):
        return _split_call(ary, [], int(indices_or_sections), axis)
    return _split_call(ary, _split_indices("array_split", indices_or_sections), 0, axis)


def tile(A, reps) -> ndarray:  # noqa: N803
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    if 0 in reps:   # numpy allows empty repetitions; the tile kernel needs positive ones
        nd_ = builtins_max(len(reps), A.ndim)
        shape = (1,) * (nd_ - A.ndim) + tuple(A.shape)
        reps_full = (1,) * (nd_ - len(reps)) + reps
        return zeros(tuple(d * r for d, r in zip(shape, reps_full)), dtype=A.dtype, ctx=A.ctx)
    return call("tile", [A], {"reps": reps})


def repeat(a, repeats, axis=None) -> ndarray:
    return call("repeat", [a], {"repeats": repeats, "axis": axis})


def flip(m, axis=None) -> ndarray:
    axes = tuple(range(m.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    return call("reverse", [m], {"axis": axes})


def sort(a, axis=-1, kind=None, order=None) -> ndarray:
    return call("sort", [a], {"axis": axis})


def argsort(a, axis=-1, kind=None, order=None) -> ndarray:
    return call("argsort", [a], {"axis": axis, "dtype": "int64"})


def take(a, indices, axis=None, mode="raise", out=None) -> ndarray:
    if axis is None:
        a, axis = a.reshape(-1), 0
    if _is_scalar(indices) or isinstance(indices, (list, tuple, onp.ndarray)):
        indices = array(indices, dtype=onp.int64, ctx=a.ctx)
    return call("take", [a, indices], {"axis": axis, "mode": "clip" if mode == "raise" else mode}, out=out)


# -- products -------------------------------------------------------------------------------------

def dot(a, b, out=None) -> ndarray:
    return call("_np_dot", [a, b], {}, out=out)


def matmul(a, b, out=None) -> ndarray:
    return call("_npi_matmul", [a, b], {}, out=out)


def tensordot(a, b, axes=2) -> ndarray:
    """Sum of products over `axes` (an int N: the last N of a with the first N of b; or a pair
    of axis sequences) - `_npi_tensordot_int_axes` / `_npi_tensordot`, as MXNet."""
    if isinstance(axes, (int, onp.integer)):
        return call("_npi_tensordot_int_axes", [a, b], {"axes": int(axes)})
    a_axes, b_axes = [tuple(x) if isinstance(x, (list, tuple)) else (x,) for x in axes]
    return call("_npi_tensordot", [a, b], {"a_axes_summed": a_axes, "b_axes_summed": b_axes})


def _flat(a) -> ndarray:
    """numpy's flatten as an operator (a free Symbol's own .flatten() is the legacy 2-D Flatten)."""
    return call("_np_reshape", [a], {"newshape": (-1,)})


def outer(a, b) -> ndarray:
    return tensordot(_flat(a), _flat(b), 0)


def inner(a, b) -> ndarray:
    return tensordot(a, b, [-1, -1])


def vdot(a, b) -> ndarray:
    return tensordot(_flat(a), _flat(b), 1)


def any(a, axis=None, out=None, keepdims=False) -> ndarray:  # noqa: A001
    """Whether any element is non-zero (bool), from registry ops."""
    return _into("any", greater(sum(not_equal(a, 0), axis=axis, keepdims=keepdims), 0), out)  # noqa: F821


def all(a, axis=None, out=None, keepdims=False) -> ndarray:  # noqa: A001
    """Whether every element is non-zero (bool), from registry ops."""
    return _into("all", equal(sum(equal(a, 0), axis=axis, keepdims=keepdims), 0), out)  # noqa: F821


sometrue = any   # MXNet: _np_sometrue is an alias of _np_any


def average(a, axis=None, weights=None, returned=False, out=None):
    if weights is None:
        avg = mean(a, axis=axis)
        wsum = full_like(avg, a.size // builtins_max(avg.size, 1))
    else:
        wsum = sum(weights, axis=axis if weights.ndim == a.ndim else None)
        avg = true_divide(sum(multiply(a, weights), axis=axis), wsum)  # noqa: F821
    return (avg, wsum) if returned else avg


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None, device=None):
    return power(base, linspace(start, stop, num, endpoint=endpoint, dtype=dtype, ctx=ctx, device=device))  # noqa: F821


def atleast_1d(*arys):
    res = [a.reshape(1) if a.ndim == 0 else a for a in arys]
    return res[0] if len(res) == 1 else res


def atleast_2d(*arys):
    res = [a.reshape(1, 1) if a.ndim == 0 else a.reshape(1, -1) if a.ndim == 1 else a for a in arys]
    return res[0] if len(res) == 1 else res


def atleast_3d(*arys):
    def lift(a):
        if a.ndim == 0:
            return a.reshape(1, 1, 1)
        if a.ndim == 1:
            return a.reshape(1, -1, 1)
        return expand_dims(a, -1) if a.ndim == 2 else a
    res = [lift(a) for a in arys]
    return res[0] if len(res) == 1 else res


def broadcast_arrays(*args) -> list:
    shape = tuple(onp.broadcast_shapes(*[tuple(a.shape) for a in args]))
    return [broadcast_to(a, shape) for a in args]


def meshgrid(*xi, indexing="xy", sparse=False, copy=True) -> list:
    n = len(xi)
    shapes = [[1] * n for _ in xi]
    for i in range(n):
        shapes[i][i] = -1
    if indexing == "xy" and n > 1:
        shapes[0][0], shapes[0][1] = 1, -1
        shapes[1][0], shapes[1][1] = -1, 1
    grids = [reshape_call(x, tuple(s)) for x, s in zip(xi, shapes)]
    return grids if sparse else broadcast_arrays(*grids)


def append(arr, values, axis=None) -> ndarray:
    """arr with values appended (both flattened when axis is None) - `_npi_concatenate`."""
    return call("_npi_concatenate", [arr, values], {"axis": axis, "num_args": 2})


def vsplit(ary, indices_or_sections) -> list:
    if ary.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, axis=0)


def hsplit(ary, indices_or_sections) -> list:
    if ary.ndim < 1:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, axis=1 if ary.ndim > 1 else 0)


def dsplit(ary, indices_or_sections) -> list:
    if ary.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, axis=2)


def roll(a, shift, axis=None) -> ndarray:
    shift = (shift,) if isinstance(shift, int) else tuple(shift)
    axis = None if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    return call("_np_roll", [a], {"shift": shift, "axis": axis})


def cumsum(a, axis=None, dtype=None, out=None) -> ndarray:
    return call("_np_cumsum", [a], {"axis": axis, "dtype": None if dtype is None else as_dtype(dtype).name},
                out=out)


def diff(a, n=1, axis=-1, prepend=None, append=None) -> ndarray:
    if prepend is not None or append is not None:
        raise NotImplementedError("np.diff: prepend= and append= are not supported (as in MXNet 1.9); "
                                  "concatenate the values first")
    return call("_npi_diff", [a], {"n": n, "axis": axis})


def tril(m, k=0) -> ndarray:
    return call("_npi_tril", [m], {"k": k})


def flipud(m) -> ndarray:
    return flip(m, 0)


def fliplr(m) -> ndarray:
    return flip(m, 1)


def moveaxis(a, source, destination) -> ndarray:
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src, dst = [s % a.ndim for s in src], [d % a.ndim for d in dst]
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose_call(a, tuple(order))


def around(x, decimals=0, out=None) -> ndarray:
    """Round half to even at `decimals` places (numpy's rule; `_npi_around`)."""
    if _is_scalar(x):
        return onp.around(x, decimals)
    return call("_npi_around", [x], {"decimals": decimals}, out=out)


round = round_ = around  # noqa: A001 - numpy's names


def may_share_memory(a, b, max_work=None) -> bool:
    return bool(onp.may_share_memory(a._data, b._data))


def shares_memory(a, b, max_work=None) -> bool:
    return bool(onp.shares_memory(a._data, b._data))


def shape(a) -> tuple:
    return tuple(a.shape)


def ndim(a) -> int:
    return a.ndim


def size(a, axis=None) -> int:
    return a.size if axis is None else a.shape[axis]


__all__ = [n for n in list(globals()) if not n.startswith("_")
           and n not in ("Any", "Context", "NDArray", "annotations", "binary",
                         "call", "builtins_max",
                         "reduce_call", "reshape_call", "transpose_call", "array_from", "onp", "as_dtype",
                         "current_context")]
