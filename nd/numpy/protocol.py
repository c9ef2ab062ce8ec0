"""NumPy's dispatch protocols for `mx.np.ndarray`: `numpy.sum(x)`, `numpy.exp(x)` on mx.np arrays.

MXNet 1.9.1 (python/mxnet/numpy_dispatch_protocol.py) implements NEP 18 (`__array_function__`)
and NEP 13 (`__array_ufunc__`) for its np arrays with two name lists:

- a numpy function in `ARRAY_FUNCTION_LIST` runs as the mx.np function of the same name, when
  every array type taking part is an mx.np ndarray (a mix with numpy arrays: `NotImplemented`, so
  numpy raises TypeError); a ufunc in `ARRAY_UFUNC_LIST` runs as the mx.np function of its name;
- any other numpy function or ufunc falls back to NumPy itself: the mx.np arrays among the
  arguments are copied to numpy, the result is copied back to mx.np arrays on the context of the
  inputs (numbers pass through; a result of another type is a TypeError). A fallback under
  `autograd.record()` raises ValueError (NumPy cannot record gradients).

The lists are MXNet's, less the names the installed NumPy no longer has (NumPy 2 dropped
`round_`, `product`, `sometrue`): a function NumPy does not offer cannot be dispatched.
Names that `mx.np` does not offer (yet) fall back to NumPy.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as onp

from .. import autograd

# MXNet 1.9.1's _NUMPY_ARRAY_FUNCTION_LIST: numpy functions that dispatch to mx.np
_MXNET_ARRAY_FUNCTIONS = (
    "all any sometrue argmin argmax around round round_ argsort sort append broadcast_arrays "
    "broadcast_to clip concatenate copy cumsum diag diagonal diagflat dot expand_dims fix flip "
    "flipud fliplr inner insert max amax mean min amin nonzero ones_like atleast_1d atleast_2d "
    "atleast_3d prod product ravel repeat reshape roll split array_split hsplit vsplit dsplit "
    "squeeze stack std sum swapaxes take tensordot tile transpose unique unravel_index "
    "diag_indices_from delete var vdot vstack column_stack hstack dstack zeros_like linalg.norm "
    "linalg.cholesky linalg.inv linalg.solve linalg.tensorinv linalg.tensorsolve linalg.pinv "
    "linalg.eigvals linalg.eig linalg.eigvalsh linalg.eigh shape trace tril meshgrid outer einsum "
    "polyval shares_memory may_share_memory quantile percentile diff ediff1d resize where "
    "full_like bincount empty_like nan_to_num isnan isfinite isposinf isneginf isinf pad").split()

# MXNet 1.9.1's _NUMPY_ARRAY_UFUNC_LIST: numpy ufuncs that dispatch to mx.np (ldexp is not one)
_MXNET_ARRAY_UFUNCS = (
    "abs fabs add arctan2 copysign degrees hypot lcm subtract multiply true_divide negative power "
    "mod matmul absolute rint sign exp log log2 log10 expm1 sqrt square cbrt reciprocal invert "
    "bitwise_not remainder sin cos tan sinh cosh tanh arcsin arccos arctan arcsinh arccosh arctanh "
    "maximum minimum ceil trunc floor bitwise_and bitwise_xor bitwise_or logical_not equal "
    "not_equal less less_equal greater greater_equal").split()


def _lookup(module: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


ARRAY_FUNCTION_LIST = [n for n in _MXNET_ARRAY_FUNCTIONS if _lookup(onp, n) is not None]
ARRAY_UFUNC_LIST = [n for n in _MXNET_ARRAY_UFUNCS if _lookup(onp, n) is not None]

# numpy function object -> mx.np function; ufunc name -> mx.np function (filled by register())
ARRAY_FUNCTION_DICT: dict = {}
ARRAY_UFUNC_DICT: dict = {}

# NumPy 2 returns a tuple where NumPy 1.x returned a list (and mx.np, following it, still does):
# called through numpy, these give numpy's container
_TUPLE_SINCE_NUMPY2 = ("broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d", "meshgrid")
_AS_TUPLE = frozenset(_lookup(onp, n) for n in _TUPLE_SINCE_NUMPY2) if onp.lib.NumpyVersion(
    onp.__version__) >= "2.0.0" else frozenset()


def register(mx_np: Any) -> None:
    """Fill the two tables from the `mx.np` module (names it lacks are left to the fallback)."""
    for name in ARRAY_FUNCTION_LIST:
        mine = _lookup(mx_np, name)
        if mine is not None:
            ARRAY_FUNCTION_DICT[_lookup(onp, name)] = mine
    for name in ARRAY_UFUNC_LIST:
        mine = _lookup(mx_np, name)
        if mine is not None:
            ARRAY_UFUNC_DICT[name] = mine


def _no_recording(what: Any) -> None:
    if autograd.is_recording():
        raise ValueError(f"Falling back to NumPy operator {what} with autograd active is not supported: "
                         "move the operator outside the autograd.record() scope")


def _to_numpy(obj: Any, ndarray: type) -> tuple[Any, Any]:
    """mx.np arrays (also inside lists and tuples) as numpy arrays, and the context they share."""
    if isinstance(obj, ndarray):
        return obj.asnumpy(), obj.ctx
    if isinstance(obj, (list, tuple)):
        ctx, items = None, []
        for item in obj:
            item, item_ctx = _to_numpy(item, ndarray)
            items.append(item)
            if ctx is None:
                ctx = item_ctx
            elif item_ctx is not None and item_ctx != ctx:
                raise ValueError(f"the input arrays are on different devices ({ctx} and {item_ctx}): "
                                 "cannot tell where the result of the NumPy fallback goes")
        return type(obj)(items), ctx
    return obj, None


def _to_mx(obj: Any, ctx: Any) -> Any:
    """A NumPy result as mx.np arrays on ctx (numbers unchanged), as MXNet's fallback returns it."""
    from .multiarray import array, array_from  # noqa: PLC0415 - multiarray defines the dunders with this
    if isinstance(obj, onp.ndarray):   # (ascontiguousarray would make a 0-d array 1-d under NumPy 1.x)
        return array_from(obj if obj.flags.c_contiguous else obj.copy(order="C"), ctx)
    if isinstance(obj, onp.bool_):
        return array(obj, dtype=onp.bool_, ctx=ctx)
    if isinstance(obj, (int, float, onp.generic)):
        return obj
    if isinstance(obj, (list, tuple)):
        items = [_to_mx(o, ctx) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)   # named tuples too
    raise TypeError(f"the NumPy fallback returned a {type(obj)}, which mx.np cannot represent as an array")


def array_function(self: Any, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
    """`ndarray.__array_function__` (NEP 18)."""
    from .multiarray import ndarray  # noqa: PLC0415 - multiarray defines the dunders with this
    mine = ARRAY_FUNCTION_DICT.get(func)
    if mine is not None:
        if not all(issubclass(t, ndarray) for t in types):
            return NotImplemented
        res = mine(*args, **kwargs)
        return tuple(res) if func in _AS_TUPLE and isinstance(res, list) else res
    _no_recording(getattr(func, "__name__", func))
    new_args, ctx = _to_numpy(args, ndarray)
    if ctx is None:
        raise ValueError(f"NumPy fallback of {func.__name__}: no mx.np array among the positional "
                         "arguments, so the result's context is unknown")
    new_kwargs = {k: v.asnumpy() if isinstance(v, ndarray) else v for k, v in kwargs.items()}
    return _to_mx(func(*new_args, **new_kwargs), ctx)


def array_ufunc(self: Any, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """`ndarray.__array_ufunc__` (NEP 13): only plain calls (`numpy.add(a, b)`) are handled;
    `reduce`, `accumulate`, `outer`, `at` are left to NumPy, which then raises TypeError."""
    from .multiarray import ndarray  # noqa: PLC0415
    if "out" in kwargs:
        out = kwargs["out"]
        if len(out) != 1:
            raise ValueError("The `out` parameter must have exactly one ndarray")
        kwargs["out"] = out[0]
    if method != "__call__":
        return NotImplemented
    mine = ARRAY_UFUNC_DICT.get(ufunc.__name__)
    if mine is not None:
        return mine(*inputs, **kwargs)
    _no_recording(ufunc.__name__)
    ctx = next(x.ctx for x in (*inputs, kwargs.get("out")) if isinstance(x, ndarray))
    out = kwargs.pop("out", None)
    new_inputs = [x.asnumpy() if isinstance(x, ndarray) else x for x in inputs]
    if out is not None and not isinstance(out, ndarray):
        kwargs["out"] = out
    res = _to_mx(ufunc(*new_inputs, **kwargs), ctx)
    if isinstance(out, ndarray):
        out[...] = res
        return out
    return res


def with_array_function_protocol(func: Callable) -> Callable:
    """Run `func` expecting the array function protocol; any exception becomes a RuntimeError
    naming `func` (MXNet's test decorator)."""
    @functools.wraps(func)
    def run(*args, **kwargs):
        try:
            func(*args, **kwargs)
        except Exception as e:   # noqa: BLE001 - re-raised as MXNet does
            raise RuntimeError(f"Running function {func.__name__} with NumPy array function protocol "
                               f"failed with exception {e}") from e
    return run


def with_array_ufunc_protocol(func: Callable) -> Callable:
    """As with_array_function_protocol, for the array ufunc protocol."""
    @functools.wraps(func)
    def run(*args, **kwargs):
        try:
            func(*args, **kwargs)
        except Exception as e:   # noqa: BLE001
            raise RuntimeError(f"Running function {func.__name__} with NumPy array ufunc protocol "
                               f"failed with exception {e}") from e
    return run
