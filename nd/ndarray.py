"""NDArray: a mutable n-dimensional array on a context, with MXNet's semantics.

It wraps one backend array (numpy or cupy) plus its Context. Arithmetic,
comparisons and method forms all go through the operator registry, so the
same code records onto the autograd tape and traces into graphs.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from . import autograd, profiling
from .backend import Context, as_dtype, current_context, to_numpy
from .arith import OPERATOR_RULES
from .dispatch import invoke, parse_cached, run_eager, typed_key
from .kernel import run_kernel
from .errors import AutogradError, MXNetError
from .registry import get_op
from .writes import note_write

# MXNet's ndarray module names the builtin `py_slice` (its own `slice` op shadows it);
# code written for MXNet imports it from here
py_slice = slice
# MXNet's storage-type ids (the codes of its .params records); code written for MXNet imports it
_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}

_SCALARS = (numbers.Number, np.number, np.bool_)
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}


class NDArray:
    """An n-dimensional array on a device (MXNet's `mx.nd.NDArray`)."""

    # _ver: the version cell autograd counts in-place writes with (autograd.version_cell)
    __slots__ = ("_data", "_ctx", "_ag", "_ver", "__weakref__")
    _is_symbolic = False
    __array_priority__ = 1000.0  # numpy defers `np_array + nd_array` to us

    def __init__(self, data: Any, ctx: Context | None = None, dtype: Any = None):
        ctx = ctx or current_context()
        xp = ctx.xp
        if isinstance(data, NDArray):
            data = data._data
        self._data = xp.asarray(data, dtype=None if dtype is None else as_dtype(dtype))
        self._ctx = ctx
        self._ag = self._ver = None

    @classmethod
    def _wrap(cls, data: Any, ctx: Context) -> "NDArray":
        obj = object.__new__(cls)
        obj._data = data
        obj._ctx = ctx
        obj._ag = obj._ver = None
        return obj

    # -- basic properties --------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self) -> type:
        """The numpy scalar type (`numpy.float32`), as MXNet returns, not a `numpy.dtype`:
        `x.dtype is np.float32` holds and `x.dtype.__name__` is the name. Use
        `np.dtype(x.dtype)` for `.itemsize`, `.kind` or `.name`."""
        return self._data.dtype.type

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def stype(self) -> str:
        return "default"

    @property
    def handle(self) -> "NDArray":
        return self

    @property
    def T(self) -> "NDArray":  # noqa: N802 - MXNet's name
        if self.ndim < 2:
            return self
        return self.transpose()

    @property
    def grad(self) -> "NDArray | None":
        leaf = self._ag
        return leaf.grad if isinstance(leaf, autograd.Leaf) else None

    # -- conversion ----------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """A host copy as a numpy array."""
        return np.array(to_numpy(self._data), copy=True)

    def asscalar(self):
        data = self._data
        if data.size != 1:
            raise ValueError(f"asscalar() needs an array of size 1, got shape {self.shape}")
        # a numpy scalar (a copy of the value), as MXNet returns; called once per batch, so
        # numpy arrays skip the host-copy helper
        return (data if type(data) is np.ndarray else to_numpy(data)).reshape(-1)[0]

    def item(self):
        return self.asscalar().item()

    def __array__(self, dtype=None, copy=None):
        out = to_numpy(self._data)
        if dtype is not None:
            return out.astype(dtype)
        if copy:
            return out.copy()
        if out is self._data:  # a read-only alias: writes must go through the NDArray (nd.writes)
            out = out.view()
            out.flags.writeable = False
        return out

    def tolist(self) -> list:
        return self.asnumpy().tolist()

    def as_np_ndarray(self) -> "NDArray":
        """The `mx.np.ndarray` view of this array (same buffer and autograd entry)."""
        from .numpy.multiarray import ndarray  # noqa: PLC0415 - the np front end builds on this module
        out = ndarray._wrap(self._data, self._ctx)
        out._ag = self._ag
        return autograd.share_version(out, self)

    def as_nd_ndarray(self) -> "NDArray":
        return self

    def astype(self, dtype: Any, copy: bool = True) -> "NDArray":
        dtype = as_dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        return invoke(get_op("Cast"), [self], {"dtype": dtype.name})

    def copy(self) -> "NDArray":
        return invoke(get_op("_copy"), [self], {})

    def copyto(self, other: "NDArray | Context") -> "NDArray":
        if isinstance(other, Context):
            return NDArray._wrap(other.xp.array(to_numpy(self._data) if other.device_type == "cpu"
                                                 else self._data, copy=True), other)
        if other is self:
            return other
        if other.shape != self.shape:
            raise MXNetError(f"copyto: shape mismatch, destination {other.shape} vs source {self.shape}")
        if other._ag is not None or other._ver is not None:
            autograd.check_inplace(other, "copyto")
        if autograd.is_recording() and autograd.live_entry(self) is not None:
            res = invoke(get_op("_copy"), [self], {})   # recorded, as MXNet records _copyto
            other._data[...] = res._data.astype(other.dtype, copy=False)
            other._ag = res._ag
            note_write(other._data)
            return other
        other._data[...] = other._ctx.xp.asarray(self._data if other._ctx == self._ctx
                                                 else to_numpy(self._data)).astype(other.dtype, copy=False)
        note_write(other._data)
        return other

    def as_in_context(self, context: Context) -> "NDArray":
        if context == self._ctx:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def wait_to_read(self) -> None:
        if self._ctx.device_type == "gpu":  # pragma: no cover - GPU only
            self._ctx.xp.cuda.get_current_stream().synchronize()

    wait_to_write = wait_to_read

    def tostype(self, stype: str) -> "NDArray":
        """This array with storage type `stype` ('default', 'row_sparse', 'csr'; see nd/sparse.py)."""
        from .sparse import cast_storage  # noqa: PLC0415 - sparse subclasses NDArray
        return cast_storage(self, stype)

    # -- autograd --------------------------------------------------------------
    def attach_grad(self, grad_req: str = "write", stype: str | None = None) -> None:
        """Allocate a gradient buffer and mark this array as a variable. The buffer has storage
        type `stype` ('default', 'row_sparse', 'csr'; this array's own when None), as in MXNet."""
        stype = stype or self.stype
        if stype == "default":
            grad = NDArray._wrap(self._ctx.xp.zeros_like(self._data), self._ctx)
        else:
            from .sparse import zeros  # noqa: PLC0415 - sparse subclasses NDArray
            grad = zeros(stype, self.shape, ctx=self._ctx, dtype=self.dtype)
        self._ag = autograd.Leaf(grad, grad_req)

    @property
    def _fresh_grad(self) -> int:
        """1 when backward() wrote this variable's gradient since the flag was last cleared, else 0
        (also for arrays that are not variables): MXNet's semi-private flag Trainer reads."""
        leaf = self._ag
        return int(leaf.fresh) if isinstance(leaf, autograd.Leaf) else 0

    @_fresh_grad.setter
    def _fresh_grad(self, state) -> None:
        leaf = self._ag
        if not isinstance(leaf, autograd.Leaf):
            raise AutogradError("_fresh_grad: this NDArray has not been marked as a variable "
                                         "(attach_grad / mark_variables) and has no gradient state")
        leaf.fresh = bool(state)

    def detach(self) -> "NDArray":
        """The same memory, outside the graph (its in-place writes still count for autograd's
        check of the arrays a recorded op read)."""
        return autograd.share_version(NDArray._wrap(self._data, self._ctx), self)

    def backward(self, out_grad: "NDArray | None" = None, retain_graph: bool = False,
                 train_mode: bool = True) -> None:  # noqa: A002
        autograd.backward([self], None if out_grad is None else [out_grad],
                          retain_graph=retain_graph, train_mode=train_mode)

    # -- shape helpers with MXNet conventions ----------------------------------
    def reshape(self, *shape, **kwargs) -> "NDArray":
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        if "shape" in kwargs:
            shape = kwargs.pop("shape")
        op = get_op("Reshape")
        given = dict(shape=tuple(shape), **kwargs)
        if autograd.is_recording() and self._ag is not None:
            return invoke(op, [self], given)
        # MXNet's reshape shares memory with the source: a view, shape from the registry rule
        out_shape = op.infer_shape(parse_cached(op, given), self.shape)[1][0]
        return autograd.share_version(NDArray._wrap(self._data.reshape(out_shape), self._ctx), self)

    def squeeze(self, axis=None, inplace: bool = False) -> "NDArray":
        """MXNet's squeeze; `inplace=True` returns a view sharing this array's memory."""
        return self._reshaping_op("squeeze", {} if axis is None else {"axis": axis}, inplace)

    def expand_dims(self, axis: int, inplace: bool = False) -> "NDArray":
        """MXNet's expand_dims; `inplace=True` returns a view sharing this array's memory."""
        return self._reshaping_op("expand_dims", {"axis": axis}, inplace)

    def _reshaping_op(self, name: str, given: dict, inplace: bool) -> "NDArray":
        op = get_op(name)
        if not inplace:
            return invoke(op, [self], given)
        return self.reshape(op.infer_shape(parse_cached(op, given), self.shape)[1][0])

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        if self.size == 0:
            return False
        if self.size == 1:
            return bool(self.asnumpy().reshape(()))
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    __nonzero__ = __bool__

    def __float__(self) -> float:
        return float(self.asscalar())

    def __int__(self) -> int:
        return int(self.asscalar())

    def __index__(self) -> int:
        if not np.issubdtype(self.dtype, np.integer) or self.size != 1:
            raise TypeError("only integer NDArrays of size 1 can be used as an index")
        return int(self.asscalar())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        shape = "x".join(str(d) for d in self.shape)
        return f"\n{self.asnumpy()}\n<NDArray {shape} @{self._ctx}>"

    def __str__(self) -> str:
        return self.__repr__()

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), str(self._ctx.device_type), self._ctx.device_id))

    def __getstate__(self):
        return None

    def __setstate__(self, state: dict) -> None:
        """Take the values of MXNet's pickled state `{'handle': raw NDArray record}` (any
        saved device: the values land on this array's context)."""
        from .serialization import load_record  # noqa: PLC0415
        data = load_record(state["handle"])
        if data is None:
            raise MXNetError("NDArray state holds a none (uninitialised) array")
        self._data = self._ctx.xp.asarray(data)
        self._ag = self._ver = None

    def flatten(self, inplace: bool = False) -> "NDArray":
        """MXNet's flatten; `inplace=True` returns a view sharing this array's memory."""
        return self._reshaping_op("Flatten", {}, inplace)

    # -- indexing -----------------------------------------------------------------
    def __getitem__(self, key):
        from .indexing import getitem  # noqa: PLC0415 - keeps this file about the array itself
        return getitem(self, key)

    def __setitem__(self, key, value):
        from .indexing import setitem  # noqa: PLC0415
        setitem(self, key, value)
        note_write(self._data)

    # -- arithmetic -----------------------------------------------------------------
    def __neg__(self):
        return invoke(get_op("negative"), [self], {})

    def __abs__(self):
        return invoke(get_op("abs"), [self], {})

    def __pos__(self):
        return self


_new = object.__new__
_NP_ARRAY = np.ndarray


def _rebuild(data, devtype, devid):
    return NDArray._wrap(Context(devtype, devid).xp.asarray(data), Context(devtype, devid))


def _as_operand(x: Any, like: NDArray) -> Any:
    """Numbers stay scalars; numpy arrays become NDArrays; anything else is a TypeError."""
    if isinstance(x, NDArray) or isinstance(x, _SCALARS) or getattr(x, "_is_symbolic", False):
        return x
    if isinstance(x, np.ndarray):
        return NDArray._wrap(like._ctx.xp.asarray(x, dtype=like.dtype), like._ctx)
    raise TypeError(f"type {type(x).__name__} not supported as an NDArray operand")


def _binary_method(tensor_op: str, scalar_op: str | None, rscalar_op: str | None,
                   reverse: bool = False, inplace: bool = False, how: str | None = None):
    """Build `__add__`-style methods: array op array broadcasts, array op number uses the scalar op."""
    top = get_op(tensor_op)
    sop = get_op(scalar_op) if scalar_op else None
    rsop = get_op(rscalar_op) if rscalar_op else None
    default_attrs = top.schema.parse({})

    scalar_op = rsop if reverse else sop
    scalar_attrs: dict = {}

    def method(self, other):
        if inplace:
            if self._ag is not None or self._ver is not None:
                autograd.check_inplace(self, how)
        elif type(self) is NDArray and not profiling.ACTIVE and not (
                autograd._STATE.get()[0] and (self._ag is not None or getattr(other, "_ag", None) is not None)):
            # hot paths: no binding, no attribute parsing, no tape (nd.kernel applies the rules;
            # numpy's module is named directly: Context.xp is a property)
            tp = type(other)
            if tp is NDArray and not reverse and (self._ctx is other._ctx or self._ctx == other._ctx):
                a = self._data
                r = run_kernel(top, default_attrs, (a, other._data), np if type(a) is _NP_ARRAY else self._ctx.xp)[0]
                out = _new(NDArray)
                out._data, out._ctx, out._ag, out._ver = r, self._ctx, None, None
                return out
            if (tp is float or tp is int) and scalar_op is not None:
                key = (tp, other) if other else typed_key(other)  # keeps -0.0 apart from 0.0
                a = scalar_attrs.get(key)
                if a is None:
                    a = scalar_attrs[key] = scalar_op.schema.parse({"scalar": other})
                    if len(scalar_attrs) > 256:
                        scalar_attrs.clear()
                d = self._data
                r = run_kernel(scalar_op, a, (d,), np if type(d) is _NP_ARRAY else self._ctx.xp)[0]
                out = _new(NDArray)
                out._data, out._ctx, out._ag, out._ver = r, self._ctx, None, None
                return out
        other = _as_operand(other, self)
        if isinstance(other, _SCALARS):
            op = rsop if reverse else sop
            if op is None:
                return NotImplemented
            args = [self]
            # MXNet's NDArray operators pass float(scalar): `a * True` is `a * 1.0`
            given = {"scalar": other if self._is_symbolic else float(other)}
            res = run_eager(op, parse_cached(op, given), args) if not self._is_symbolic else invoke(op, args, given)
        else:
            args = [other, self] if reverse else [self, other]
            res = invoke(top, args, {})
        if inplace:
            if res._ag is not None:   # MXNet 1.9.1 refuses: its recorded op writes into an input
                raise autograd.AutogradError(
                    "Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with "
                    f"autograd: `{how}` into an array of shape {self.shape} whose other operand is in "
                    "the graph. Write into a new array instead (x = x + y), or outside autograd.record().")
            self._data[...] = res._data
            note_write(self._data)
            return self
        return res

    method.__name__ = tensor_op
    return method


def install_operators() -> None:
    """Attach arithmetic and comparison operators (after the ops are registered), from the
    one table of rules (nd/arith.py): `a + b` broadcasts, `a + 1` uses the scalar op,
    `a += b` writes into a."""
    for rule in OPERATOR_RULES:
        d = rule.dunder
        setattr(NDArray, f"__{d}__", _binary_method(rule.broadcast, rule.scalar, None))
        if rule.augmented:
            setattr(NDArray, f"__r{d}__", _binary_method(rule.broadcast, None, rule.rscalar, reverse=True))
            setattr(NDArray, f"__i{d}__", _binary_method(rule.broadcast, rule.scalar, None, inplace=True,
                                                         how=rule.augmented))
    NDArray.__div__ = NDArray.__truediv__
    NDArray.__rdiv__ = NDArray.__rtruediv__
    NDArray.__idiv__ = NDArray.__itruediv__
