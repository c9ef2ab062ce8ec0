"""`mx.np.ndarray`: MXNet 1.9's numpy-semantics array.

It is a subclass of NDArray over the same backend array, context and autograd entry, so
autograd, `nd.save`, Gluon and the operator registry treat both alike; converting
between them (`as_nd_ndarray` / `as_np_ndarray`) shares the buffer. What changes is the
front end: operators call the np registry ops (`_npi_add`, `_np_sum`, ...) with numpy
broadcasting, zero-dim results and MXNet's numpy type promotion, and every result is an
`ndarray` again.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as onp

from .. import autograd
from ..arith import OPERATOR_RULES
from ..backend import Context, as_dtype, current_context, to_numpy
from ..dispatch import invoke
from ..errors import MXNetError
from ..ndarray import NDArray
from ..registry import get_op
from ..writes import note_write
from . import protocol

_SCALARS = (numbers.Number, onp.number, onp.bool_)
_new = object.__new__


def as_np(res: Any) -> Any:
    """Give operator results (an NDArray or a list of them) the np class, in place."""
    if type(res) is NDArray:
        res.__class__ = ndarray
    elif isinstance(res, (list, tuple)):
        for r in res:
            if type(r) is NDArray:
                r.__class__ = ndarray
    return res


def call(name: str, inputs: list, attrs: dict, out: Any = None) -> Any:
    """Run a registry op and return np arrays (symbolic inputs go to the graph builder; so does
    an op without inputs, `np.ones(...)`, called while a hybridized block is being traced)."""
    if not inputs and _tracing():
        from ..dispatch import _symbolic_invoke  # noqa: PLC0415 - set by the symbol package
        return _symbolic_invoke(get_op(name), [], attrs, None, {})
    return as_np(invoke(get_op(name), inputs, attrs, out=out))


def _tracing() -> bool:
    import sys  # noqa: PLC0415
    tracer = sys.modules.get("hybridgraph.symbol.tracer")
    return tracer is not None and tracer.current_trace() is not None


def reduce_call(op: str, a: Any, axis, dtype=None, out=None, keepdims=False, initial=None,
                with_dtype=True) -> Any:
    """A numpy reduction through its registry op (`_np_sum`, `_npi_mean`, ...); only the
    arguments given are recorded (as MXNet's np front end writes them into a graph)."""
    attrs: dict = {}
    if axis is not None:
        attrs["axis"] = axis
    if with_dtype and dtype is not None:
        attrs["dtype"] = as_dtype(dtype).name
    if keepdims:
        attrs["keepdims"] = True
    if initial is not None:
        attrs["initial"] = initial
    return call(op, [a], attrs, out=out)


def reshape_call(a: Any, shape, order: str = "C") -> Any:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return call("_np_reshape", [a], {"newshape": shape, "order": order})


def transpose_call(a: Any, axes) -> Any:
    return call("_np_transpose", [a], {"axes": tuple(axes) if axes else None})


def _is_scalar(x: Any) -> bool:
    return isinstance(x, _SCALARS) and not isinstance(x, onp.ndarray)


def _operand(x: Any) -> Any:
    if isinstance(x, NDArray) or hasattr(x, "_is_symbolic"):
        return x
    raise TypeError(f"type {type(x)} not supported as an operand of mxnet.numpy.ndarray; "
                    "convert it with mx.np.array() first")


# Python operator -> mx.np's (tensor op, scalar op, reflected scalar op), from nd/arith.py's one table
_BINARY = {r.dunder: r.np_ops for r in OPERATOR_RULES if r.augmented}
_COMPARE = {r.dunder: r.np_stem for r in OPERATOR_RULES if not r.augmented}
_FAST = {"add": onp.add, "sub": onp.subtract, "mul": onp.multiply, "truediv": onp.true_divide}


def binary(lhs: Any, rhs: Any, tensor_op: str, scalar_op: str, rscalar_op: str) -> Any:
    """lhs op rhs where at least one side is an array: the tensor or the scalar form."""
    if _is_scalar(rhs):
        if _is_scalar(lhs):
            raise TypeError("an mx.np binary op needs at least one array operand")
        return call(scalar_op, [lhs], {"scalar": float(rhs), "is_int": isinstance(rhs, (int, onp.integer))})
    if _is_scalar(lhs):
        return call(rscalar_op, [rhs], {"scalar": float(lhs), "is_int": isinstance(lhs, (int, onp.integer))})
    return call(tensor_op, [_operand(lhs), _operand(rhs)], {})


# the legacy tensor op a Symbol's operator names -> the Python operator (`_Plus` -> "add")
_FROM_LEGACY = {r.sym_tensor: r.dunder for r in OPERATOR_RULES}


def traced_binary(sym: Any, other: Any, legacy_op: str, reverse: bool) -> Any:
    """A traced array's arithmetic in numpy mode: the np operators MXNet's np symbols record."""
    key = _FROM_LEGACY[legacy_op]
    if key in _COMPARE:
        if reverse:
            raise TypeError("reflected comparison of a traced np array")
        return _compare_method(key)(sym, other)
    return _binary_method(key, reverse=reverse)(sym, other)


def _binary_method(key: str, reverse: bool = False, inplace: bool = False):
    top, sop, rsop = _BINARY[key]
    fast = _FAST.get(key)
    kinds = "f" if key == "truediv" else "fiu"   # integer true division gives float32 (MXNet)

    use_fast = fast is not None and not inplace
    state_get, plain = autograd._STATE.get, onp.ndarray

    def method(self, other):
        if use_fast and type(self) is ndarray:
            tp = type(other)
            a = self._data
            if tp is ndarray:
                b = other._data
                dt = a.dtype
                if (dt is b.dtype and type(a) is plain and dt.kind in kinds and self._ctx is other._ctx
                        and ((self._ag is None and other._ag is None) or not state_get()[0])):
                    out = _new(ndarray)   # the eager hot path: one ufunc, no dispatch
                    out._data, out._ctx = (fast(b, a) if reverse else fast(a, b)), self._ctx
                    out._ag = out._ver = None
                    return out
            elif ((tp is float or tp is int) and type(a) is plain and a.dtype.kind == "f"
                  and (self._ag is None or not state_get()[0])):
                sc = a.dtype.type(other)   # MXNet casts the scalar to the array's dtype
                out = _new(ndarray)
                out._data, out._ctx = (fast(sc, a) if reverse else fast(a, sc)), self._ctx
                out._ag = out._ver = None
                return out
        if reverse:
            res = binary(other, self, top, sop, rsop)   # other (op) self: a scalar other takes rsop
        else:
            res = binary(self, other, top, sop, rsop)
        if inplace:
            return _assign_inplace(self, res)
        return res

    method.__name__ = f"__{'i' if inplace else 'r' if reverse else ''}{key}__"
    return method


_INPLACE_RECORDING = ("Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with "
                      "autograd: compute a new array instead (y = x + 1)")


def _assign_inplace(self: "ndarray", res: "ndarray") -> "ndarray":
    if self._is_symbolic:
        return res
    if res._ag is not None and autograd.is_recording():
        raise MXNetError(_INPLACE_RECORDING)
    if self._ag is not None or self._ver is not None:
        autograd.check_inplace(self, "in-place operator")
    self._data[...] = res._data
    note_write(self._data)
    return self


def _compare_method(key: str):
    name = _COMPARE[key]

    def method(self, other):
        if other is None:
            return key == "ne"
        if _is_scalar(other):
            return call(f"_npi_{name}_scalar", [self], {"scalar": float(other),
                                                        "is_int": isinstance(other, (int, onp.integer))})
        if isinstance(other, onp.ndarray):
            raise TypeError(f"type {type(other)} not supported as an operand of mxnet.numpy.ndarray")
        return call(f"_npi_{name}", [self, _operand(other)], {})

    method.__name__ = f"__{key}__"
    return method


class ndarray(NDArray):  # noqa: N801 - MXNet's (and numpy's) name
    """An n-dimensional array with numpy semantics (`mx.np.ndarray`)."""

    __slots__ = ()

    def __init__(self, shape=None, dtype: Any = None, ctx: Context | None = None, buffer: Any = None):
        ctx = ctx or current_context()
        if buffer is not None:
            super().__init__(buffer, ctx, dtype)
        else:
            shape = (shape,) if isinstance(shape, int) else tuple(shape or ())
            super().__init__(ctx.xp.empty(shape, dtype=as_dtype(dtype or "float32")), ctx)

    # numpy's dispatch protocols: numpy.sum(x) runs mx.np.sum, numpy.median(x) falls back (protocol.py)
    __array_function__ = protocol.array_function
    __array_ufunc__ = protocol.array_ufunc

    # -- conversion -------------------------------------------------------------------
    @property
    def dtype(self) -> onp.dtype:
        """A `numpy.dtype` (`dtype('float32')`), as MXNet 1.9.1's mx.np.ndarray gives (the legacy
        NDArray gives the scalar type `numpy.float32`)."""
        return self._data.dtype

    def as_nd_ndarray(self) -> NDArray:
        """The legacy NDArray view of this array (same buffer, same autograd entry)."""
        out = NDArray._wrap(self._data, self._ctx)
        out._ag = self._ag
        return autograd.share_version(out, self)

    def as_np_ndarray(self) -> "ndarray":
        return self

    def item(self, *args):
        if args:
            return self.asnumpy().item(*args)
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.asnumpy().item()

    def tolist(self) -> Any:
        return self.asnumpy().tolist()

    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True) -> "ndarray":
        dtype = as_dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        return call("Cast", [self], {"dtype": dtype.name})

    def copy(self, order: str = "C") -> "ndarray":
        if order != "C":
            raise NotImplementedError(f"ndarray.copy only supports order='C', while received {order}")
        return call("_np_copy", [self], {})

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.asnumpy()[()], spec)
        if spec:
            raise TypeError("unsupported format string passed to mxnet.numpy.ndarray.__format__")
        return str(self)

    def copyto(self, other: Any) -> Any:
        return as_np(super().copyto(other))

    def as_in_context(self, context: Context) -> "ndarray":
        return as_np(super().as_in_context(context))

    as_in_ctx = as_in_context
    to_device = as_in_context

    @property
    def device(self) -> Context:
        return self._ctx

    def __reduce__(self):
        return (array_from, (self.asnumpy(), Context(self._ctx.device_type, self._ctx.device_id)))

    def detach(self) -> "ndarray":
        return as_np(super().detach())

    def attach_grad(self, grad_req: str = "write", stype: str | None = None) -> None:
        super().attach_grad(grad_req, stype)
        as_np(self._ag.grad)

    # -- printing -----------------------------------------------------------------------
    def __repr__(self) -> str:
        a = self.asnumpy()
        body = onp.array2string(a, separator=", ", prefix="array(")
        dt = "" if a.dtype == onp.float32 or a.dtype == onp.bool_ or (a.size == 0 and a.dtype == onp.float32) \
            else f", dtype={a.dtype}"
        ctx = "" if self._ctx.device_type == "cpu" else f", ctx={self._ctx}"
        return f"array({body}{dt}{ctx})"

    def __str__(self) -> str:
        return str(self.asnumpy())

    # -- shape -------------------------------------------------------------------------
    def reshape(self, *args, **kwargs) -> "ndarray":
        shape = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        if "newshape" in kwargs or "shape" in kwargs:
            shape = kwargs.pop("newshape", None) or kwargs.pop("shape")
        order = kwargs.pop("order", "C")
        if kwargs:
            raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kwargs)}")
        return reshape_call(self, shape, order)

    def reshape_view(self, *shape, **kwargs) -> "ndarray":
        """The legacy NDArray.reshape (MXNet's special codes 0, -1, -2, -3, -4) as an np array."""
        return as_np(NDArray.reshape(self, *shape, **kwargs))

    def slice_assign(self, rhs, begin, end, step) -> "ndarray":
        """self[begin:end:step] = rhs in place (`_slice_assign`); returns self."""
        return call("_slice_assign", [self, rhs], {"begin": begin, "end": end, "step": step}, out=self)

    def slice_assign_scalar(self, value, begin, end, step) -> "ndarray":
        """self[begin:end:step] = value in place (`_slice_assign_scalar`); returns self."""
        return call("_slice_assign_scalar", [self], {"scalar": value, "begin": begin, "end": end,
                                                     "step": step}, out=self)

    def reshape_like(self, other) -> "ndarray":
        return self.reshape(other.shape)

    def transpose(self, *axes) -> "ndarray":
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (list, tuple))):
            axes = axes[0]
        return transpose_call(self, axes)

    @property
    def T(self) -> "ndarray":  # noqa: N802
        return self.transpose()

    def flatten(self, order: str = "C") -> "ndarray":
        return self.reshape(-1)

    ravel = flatten

    def squeeze(self, axis=None) -> "ndarray":
        return call("_np_squeeze", [self], {"axis": axis})

    def expand_dims(self, axis: int) -> "ndarray":
        return call("expand_dims", [self], {"axis": axis})

    def swapaxes(self, axis1: int, axis2: int) -> "ndarray":
        return call("SwapAxis", [self], {"dim1": axis1, "dim2": axis2})

    def repeat(self, repeats: int, axis=None) -> "ndarray":
        return call("repeat", [self], {"repeats": repeats, "axis": axis})

    def tile(self, reps) -> "ndarray":
        return call("tile", [self], {"reps": (reps,) if isinstance(reps, int) else tuple(reps)})

    def broadcast_to(self, shape) -> "ndarray":
        from .functions import broadcast_to  # noqa: PLC0415 - functions imports this module
        return broadcast_to(self, shape)

    def split(self, *args, **kwargs):
        from .functions import split  # noqa: PLC0415
        return split(self, *args, **kwargs)

    # -- reductions ----------------------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, **legacy):  # noqa: A003
        if legacy:   # MXNet's NDArray form (exclude=...), used by Gluon losses
            return as_np(NDArray.sum(self, axis=axis, keepdims=keepdims, **legacy))
        return reduce_call("_np_sum", self, axis, dtype, out, keepdims, initial)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **legacy):
        if legacy:
            return as_np(NDArray.mean(self, axis=axis, keepdims=keepdims, **legacy))
        return reduce_call("_npi_mean", self, axis, dtype, out, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=None):
        return reduce_call("_np_prod", self, axis, dtype, out, keepdims, initial)

    def max(self, axis=None, out=None, keepdims=False):  # noqa: A003
        return reduce_call("_np_max", self, axis, out=out, keepdims=keepdims, with_dtype=False)

    def min(self, axis=None, out=None, keepdims=False):  # noqa: A003
        return reduce_call("_np_min", self, axis, out=out, keepdims=keepdims, with_dtype=False)

    def argmax(self, axis=None, out=None):
        return call("_npi_argmax", [self], {"axis": axis, "keepdims": False}, out=out)

    def argmin(self, axis=None, out=None):
        return call("_npi_argmin", [self], {"axis": axis, "keepdims": False}, out=out)

    def all(self, axis=None, out=None, keepdims=False):  # noqa: A003
        from .functions import all as all_  # noqa: PLC0415
        return all_(self, axis=axis, out=out, keepdims=keepdims)

    def any(self, axis=None, out=None, keepdims=False):  # noqa: A003
        from .functions import any as any_  # noqa: PLC0415
        return any_(self, axis=axis, out=out, keepdims=keepdims)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        from .functions import std  # noqa: PLC0415
        return std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        from .functions import var  # noqa: PLC0415
        return var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None, out=None) -> "ndarray":
        from .functions import cumsum  # noqa: PLC0415
        return cumsum(self, axis, dtype, out)

    def dot(self, b, out=None) -> "ndarray":
        return call("_np_dot", [self, b], {}, out=out)

    def clip(self, min=None, max=None, out=None):  # noqa: A002
        from .functions import clip  # noqa: PLC0415
        return clip(self, min, max, out=out)

    def sort(self, axis=-1):
        from .functions import sort  # noqa: PLC0415
        self[...] = sort(self, axis=axis)

    def argsort(self, axis=-1, kind=None, order=None):
        from .functions import argsort  # noqa: PLC0415
        return argsort(self, axis=axis)

    def nonzero(self):
        return tuple(array_from(i.astype(onp.int64), self._ctx) for i in onp.nonzero(self.asnumpy()))

    # -- indexing ----------------------------------------------------------------------
    def __getitem__(self, key):
        from .indexing import getitem  # noqa: PLC0415
        return getitem(self, key)

    def __setitem__(self, key, value):
        from ..indexing import setitem  # noqa: PLC0415
        if autograd.is_recording() and (self._ag is not None or getattr(value, "_ag", None) is not None):
            raise MXNetError(_INPLACE_RECORDING)
        if isinstance(key, NDArray) and key.dtype == onp.bool_ and not isinstance(value, NDArray):
            key = key._data
        setitem(self, _raw_np_key(key), value)
        note_write(self._data)

    # -- arithmetic -----------------------------------------------------------------------
    def __neg__(self):
        return call("_npi_negative", [self], {})

    def __abs__(self):
        return call("_npi_absolute", [self], {})

    def __invert__(self):
        return call("_npi_logical_not", [self], {}) if self.dtype == onp.bool_ else NotImplemented

    # round(x, n), math.floor / ceil / trunc: arrays again, as MXNet's (not Python numbers)
    def __round__(self, n=0):
        return call("_npi_around", [self], {"decimals": n})

    def __floor__(self):
        return call("_npi_floor", [self], {})

    def __ceil__(self):
        return call("_npi_ceil", [self], {})

    def __trunc__(self):
        return call("_npi_trunc", [self], {})

    def __matmul__(self, other):
        return call("_npi_matmul", [self, _operand(other)], {})

    def __imatmul__(self, other):   # x @= y in place (MXNet's aliased out= gave zeros; this computes first)
        return _assign_inplace(self, call("_npi_matmul", [self, _operand(other)], {}))

    def __rmatmul__(self, other):
        return call("_npi_matmul", [_operand(other), self], {})

    __hash__ = NDArray.__hash__


def _raw_np_key(key):
    """Boolean np masks stay boolean (numpy masking); everything else as nd indexing."""
    if isinstance(key, NDArray) and key.dtype == onp.bool_:
        return key._data
    if isinstance(key, tuple):
        return tuple(_raw_np_key(k) for k in key)
    return key


for _key in _BINARY:
    setattr(ndarray, f"__{_key}__", _binary_method(_key))
    setattr(ndarray, f"__r{_key}__", _binary_method(_key, reverse=True))
    setattr(ndarray, f"__i{_key}__", _binary_method(_key, inplace=True))
ndarray.__div__, ndarray.__rdiv__, ndarray.__idiv__ = ndarray.__truediv__, ndarray.__rtruediv__, ndarray.__itruediv__
for _key in _COMPARE:
    setattr(ndarray, f"__{_key}__", _compare_method(_key))


def array_from(data: Any, ctx: Context) -> ndarray:
    """Wrap a backend array (no copy) as an ndarray on ctx."""
    out = _new(ndarray)
    out._data, out._ctx, out._ag, out._ver = ctx.xp.asarray(data), ctx, None, None
    return out


def array(object: Any, dtype: Any = None, ctx: Context | None = None, device: Context | None = None,  # noqa: A002
          copy: bool = True) -> ndarray:
    """An ndarray from array-like data: float32 unless `dtype` says otherwise or the source is an
    array with a dtype (MXNet's rule: Python lists of numbers become float32)."""
    ctx = ctx or device or current_context()
    if isinstance(object, NDArray):
        src = to_numpy(object._data)
        dtype = object.dtype if dtype is None else dtype
    elif isinstance(object, onp.ndarray):
        src = object
        dtype = object.dtype if dtype is None else dtype
    else:
        src = onp.asarray(object)
        if dtype is None:
            dtype = onp.float32   # MXNet: Python data (bools included) becomes float32
    return array_from(onp.array(src, dtype=as_dtype(dtype)), ctx)

