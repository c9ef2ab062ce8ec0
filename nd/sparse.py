"""`mx.nd.sparse`: MXNet's row_sparse and csr arrays, backed by dense storage.

`RowSparseNDArray` and `CSRNDArray` are NDArrays (subclasses) whose value is
held as a dense array, like every hybridgraph array; what makes them sparse is
their storage type (`stype`) and the sparse views MXNet users read:
``indices`` / ``data`` (and ``indptr`` for csr), computed from the dense value
on request. So every operator accepts them (a registry operator returns a
dense NDArray), memory is that of the dense array, and results equal MXNet's.

What follows MXNet 1.9.1 exactly: construction (`zeros`, `empty`, `array`,
`row_sparse_array`, `csr_matrix`, `NDArray.tostype`), the result storage type
of ``+ - * /`` between arrays of one sparse type and with scalars, ``[:]``
indexing, `copyto` rules, `retain`, and the kvstore's `row_sparse_pull`.
A row_sparse array remembers rows stored explicitly (by `row_sparse_array`,
`retain`, `row_sparse_pull`, ...) even when they hold zeros, so ``indices``
lists exactly those rows plus any row with a non-zero value; csr ``indices``
are the non-zero entries. Sparse kernels (MXNet's `sparse.dot` and friends) are
not separate here: `nd.dot` on the dense values gives their results.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from . import autograd
from .backend import Context, as_dtype, current_context, to_numpy
from .errors import MXNetError
from .ndarray import NDArray
from .writes import note_write

__all__ = ["BaseSparseNDArray", "RowSparseNDArray", "CSRNDArray", "zeros", "empty", "array",
           "row_sparse_array", "csr_matrix", "cast_storage", "retain", "add", "subtract",
           "multiply", "divide", "zeros_like"]

_STYPES = ("default", "row_sparse", "csr")
# (operator, other operand is a scalar) -> the result keeps the sparse storage type (MXNet 1.9.1)
_KEEPS = {("add", False), ("sub", False), ("mul", False), ("mul", True), ("truediv", True)}


class BaseSparseNDArray(NDArray):
    """An NDArray with a sparse storage type (MXNet's base class of the two)."""

    __slots__ = ("_rows",)
    _stype = ""

    @classmethod
    def _wrap(cls, data: Any, ctx: Context) -> NDArray:
        """Operator results are dense, as MXNet's are for sparse inputs (the arithmetic that keeps
        a sparse storage type builds its result with `_like`)."""
        return NDArray._wrap(data, ctx)

    @property
    def stype(self) -> str:
        return self._stype

    def __repr__(self) -> str:
        shape = "x".join(str(d) for d in self.shape)
        return f"\n<{type(self).__name__} {shape} @{self.context}>"

    def reshape(self, *shape: Any, **kwargs: Any) -> NDArray:
        from hybridgraph.base import NotSupportedForSparseNDArray  # noqa: PLC0415 - base imports nd
        raise NotSupportedForSparseNDArray(self.reshape, None, shape)

    def _like(self, data: Any, ctx: Context | None = None, rows: Any = None) -> "BaseSparseNDArray":
        return _make(type(self), data, ctx or self._ctx, rows)

    def detach(self) -> "BaseSparseNDArray":
        """The same memory outside the graph, with this storage type (as MXNet's detach)."""
        return autograd.share_version(self._like(self._data, rows=self._rows), self)

    def copy(self) -> "BaseSparseNDArray":
        return self._like(self._data.copy(), rows=self._rows)

    def astype(self, dtype: Any, copy: bool = True) -> NDArray:
        dtype = as_dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        return self._like(self._data.astype(dtype), rows=self._rows)

    def copyto(self, other: Any) -> NDArray:
        """Copy to a context (a new array of this storage type) or into `other`, which must be
        dense or of this storage type (MXNet refuses a copy between the two sparse types)."""
        if isinstance(other, Context):
            return self._like(other.xp.array(to_numpy(self._data) if other.device_type == "cpu"
                                             else self._data, copy=True), other, self._rows)
        if not isinstance(other, NDArray):
            raise TypeError(f"copyto does not support type {type(other)}")
        if other.stype not in ("default", self.stype):
            raise TypeError(f"copyto does not support destination NDArray stype {other.stype}")
        NDArray.copyto(self, other)
        if isinstance(other, BaseSparseNDArray) and other is not self:
            other._rows = self._rows
        return other

    def tostype(self, stype: str) -> NDArray:
        return cast_storage(self, stype)

    def asscalar(self):
        raise NotImplementedError(f"asscalar() is not supported for {type(self).__name__} (as in MXNet); "
                                  "use tostype('default').asscalar()")

    def __getitem__(self, key: Any) -> NDArray:
        if isinstance(key, slice) and key == slice(None):
            return self
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")
        return self._index(key)

    def _index(self, key: Any) -> NDArray:
        raise ValueError(f"Undefined behaviour for {key}")

    def __setitem__(self, key: Any, value: Any) -> None:
        """Only ``x[:] = value`` (an NDArray, a numpy array, or a number for row_sparse)."""
        if not (isinstance(key, slice) and key == slice(None)):
            raise TypeError(f"{type(self).__name__} only supports [:] for assignment, got {key!r}")
        if isinstance(value, NDArray):
            if value is not self:
                value.copyto(self)
            if not isinstance(value, BaseSparseNDArray):
                self._rows = None
            return
        if isinstance(value, numbers.Number):
            if self.stype == "csr":
                raise ValueError("Assigning numeric types to CSRNDArray is not implemented yet.")
            self._data[...] = value
        elif isinstance(value, (np.ndarray, np.generic)):
            self._data[...] = self._ctx.xp.asarray(value, dtype=self.dtype)
        else:
            raise TypeError(f"type {type(value)} not supported")
        self._rows = None
        note_write(self._data)

    def __reduce__(self):
        return (_rebuild, (type(self).__name__, self.asnumpy(), self._ctx.device_type, self._ctx.device_id,
                           self._rows))

    def check_format(self, full_check: bool = True) -> None:
        """Dense-backed arrays are always well formed (kept for MXNet's API)."""


class RowSparseNDArray(BaseSparseNDArray):
    """A set of row slices at given indices (MXNet's ``row_sparse`` storage), dense-backed:
    ``dense[indices[i]] = data[i]``, every other row is zero."""

    __slots__ = ()
    _stype = "row_sparse"

    @property
    def indices(self) -> NDArray:
        """The stored row indices (int64, ascending): rows stored explicitly and rows holding
        a non-zero value."""
        return NDArray(_row_indices(self), ctx=self._ctx)

    @property
    def data(self) -> NDArray:
        """The stored rows, shape ``(len(indices),) + shape[1:]``."""
        return NDArray._wrap(self._data[self._ctx.xp.asarray(_row_indices(self))], self._ctx)

    def _index(self, key: Any) -> NDArray:
        if isinstance(key, int):
            raise MXNetError("__getitem__ with int key is not implemented for RowSparseNDArray yet")
        raise MXNetError("RowSparseNDArray only supports [:] for __getitem__")

    def retain(self, indices: Any) -> "RowSparseNDArray":
        """The rows `indices` of this array (stored explicitly), every other row dropped."""
        return retain(self, indices)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D matrix in compressed sparse row format (MXNet's ``csr`` storage), dense-backed:
    ``indptr``, ``indices`` (column of each non-zero) and ``data`` describe its non-zeros."""

    __slots__ = ()
    _stype = "csr"

    def _nonzero(self) -> tuple:
        return np.nonzero(to_numpy(self._data))

    @property
    def indices(self) -> NDArray:
        """The column index of each non-zero entry (int64, row-major order)."""
        return NDArray(self._nonzero()[1].astype(np.int64), ctx=self._ctx)

    @property
    def indptr(self) -> NDArray:
        """Offsets of each row's entries in `data` / `indices` (int64, ``shape[0] + 1`` long)."""
        rows = self._nonzero()[0]
        counts = np.bincount(rows, minlength=self.shape[0])
        return NDArray(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), ctx=self._ctx)

    @property
    def data(self) -> NDArray:
        """The non-zero values, row-major."""
        return NDArray(to_numpy(self._data)[self._nonzero()], ctx=self._ctx)

    def _index(self, key: Any) -> NDArray:
        if isinstance(key, (int, np.integer)):
            key = slice(int(key) if key >= 0 else self.shape[0] + int(key), None)
            key = slice(key.start, key.start + 1)
        if isinstance(key, slice):
            if key.step is not None:
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            return self._like(self._data[key].copy())
        return super()._index(key)

    def asscipy(self) -> Any:
        """A ``scipy.sparse.csr_matrix`` with this value (needs scipy)."""
        import scipy.sparse as spsp  # noqa: PLC0415 - optional dependency
        return spsp.csr_matrix(to_numpy(self._data))


_CLASSES = {"row_sparse": RowSparseNDArray, "csr": CSRNDArray}


def _make(cls: type, data: Any, ctx: Context, rows: Any = None) -> BaseSparseNDArray:
    obj = object.__new__(cls)
    obj._data, obj._ctx, obj._ag, obj._ver, obj._rows = data, ctx, None, None, rows
    return obj


def _rebuild(cls_name: str, value: np.ndarray, devtype: str, devid: int, rows: Any) -> BaseSparseNDArray:
    ctx = Context(devtype, devid)
    cls = RowSparseNDArray if cls_name == "RowSparseNDArray" else CSRNDArray
    return _make(cls, ctx.xp.asarray(value), ctx, rows)


def _row_indices(arr: RowSparseNDArray) -> np.ndarray:
    dense = to_numpy(arr._data)
    nonzero = np.flatnonzero(dense.reshape(dense.shape[0], -1).any(axis=1)) if dense.ndim else np.array([], int)
    if arr._rows is not None:
        nonzero = np.union1d(nonzero, arr._rows)
    return nonzero.astype(np.int64)


def _check_stype(stype: str) -> None:
    if stype not in _STYPES:
        raise MXNetError(f"unknown storage type {stype!r}: expected one of {', '.join(_STYPES)}")


def cast_storage(arr: NDArray, stype: str) -> NDArray:
    """`arr` with storage type `stype` (MXNet's `cast_storage`): the same array when the type is
    already `stype`, else a copy. Casting between row_sparse and csr is refused, as in MXNet."""
    _check_stype(stype)
    if arr.stype == stype:
        return arr
    if stype == "default":
        return NDArray._wrap(arr._data.copy(), arr._ctx)
    if arr.stype != "default":
        raise ValueError(f"cast_storage from {arr.stype} to {stype} is not supported")
    if stype == "csr" and arr.ndim != 2:
        raise MXNetError(f"cast_storage: csr storage needs a 2-D array, got shape {arr.shape}")
    if arr.ndim == 0:
        raise MXNetError("cast_storage: a 0-d array cannot be row_sparse")
    return _make(_CLASSES[stype], arr._data.copy(), arr._ctx)


def _shape(shape: Any) -> tuple:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def zeros(stype: str, shape: Any, ctx: Context | None = None, dtype: Any = None, **kwargs: Any) -> NDArray:
    """An all-zero array of storage type `stype` (``'default'`` gives a plain NDArray)."""
    _check_stype(stype)
    if stype == "default":
        from .creation import zeros as dense_zeros  # noqa: PLC0415 - creation imports this module
        return dense_zeros(shape, ctx=ctx, dtype=dtype, **kwargs)
    ctx = ctx or current_context()
    shape = _shape(shape)
    if stype == "csr" and len(shape) != 2:
        raise MXNetError(f"csr storage needs a 2-D shape, got {shape}")
    return _make(_CLASSES[stype], ctx.xp.zeros(shape, dtype=as_dtype(dtype or np.float32)), ctx)


def empty(stype: str, shape: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """As `zeros` (MXNet's sparse `empty` holds no entries, i.e. all zeros)."""
    if stype not in _CLASSES:
        raise MXNetError(f"unknown stype : {stype}")
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def zeros_like(arr: NDArray) -> NDArray:
    """Zeros of `arr`'s shape, dtype, context and storage type."""
    return zeros(arr.stype, arr.shape, ctx=arr.context, dtype=arr.dtype)


def _default_dtype(src: Any, dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    return getattr(src, "dtype", None) if isinstance(src, (NDArray, np.ndarray)) or _is_scipy_csr(src) \
        else np.float32


def _is_scipy_csr(x: Any) -> bool:
    return type(x).__module__.startswith("scipy.sparse") and getattr(x, "format", None) == "csr"


def _check_shape(got: tuple, want: Any) -> None:
    if want and tuple(got) != tuple(want):
        raise ValueError(f"Shape mismatch detected. {tuple(got)} v.s. {tuple(want)}")


def _dense_source(src: Any, ctx: Context | None, dtype: Any) -> NDArray:
    dtype = _default_dtype(src, dtype)
    value = to_numpy(src._data) if isinstance(src, NDArray) else np.asarray(src)
    ctx = ctx or (src.context if isinstance(src, NDArray) else current_context())
    return NDArray._wrap(ctx.xp.asarray(np.array(value, dtype=as_dtype(dtype))), ctx)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """A sparse copy of a RowSparseNDArray, CSRNDArray or ``scipy.sparse.csr_matrix``."""
    if isinstance(source_array, NDArray):
        if source_array.stype == "default":
            raise AssertionError("Please use `tostype` to create RowSparseNDArray or CSRNDArray from an NDArray")
        out = source_array.astype(_default_dtype(source_array, dtype))
        return out.copyto(ctx) if ctx is not None and ctx != out.context else out.copy()
    if _is_scipy_csr(source_array):
        dense = source_array.toarray()
        return cast_storage(_dense_source(dense, ctx, _default_dtype(source_array, dtype)), "csr")
    if isinstance(source_array, (np.ndarray, np.generic)):
        raise ValueError(f"Please use mx.nd.array to create an NDArray with source_array of type "
                         f"{type(source_array)}")
    raise ValueError(f"Unexpected source_array type: {type(source_array)}")


def _host(x: Any, dtype: Any) -> np.ndarray:
    return np.asarray(to_numpy(x._data) if isinstance(x, NDArray) else x, dtype=dtype)


def row_sparse_array(arg1: Any, shape: Any = None, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """A RowSparseNDArray from ``(data, indices)``, a shape ``(D0, D1, ...)``, a
    RowSparseNDArray, or any dense array-like (MXNet's forms)."""
    if isinstance(arg1, tuple):
        if len(arg1) < 2:
            raise ValueError(f"Unexpected length of input tuple: {len(arg1)}")
        if len(arg1) > 2 or isinstance(arg1[0], (int, np.integer)):
            _check_shape(arg1, shape)
            return zeros("row_sparse", arg1, ctx=ctx, dtype=dtype)
        dtype = _default_dtype(arg1[0], dtype)
        data, idx = _host(arg1[0], as_dtype(dtype)), _host(arg1[1], np.int64)
        if shape is None:
            if idx.size == 0:
                raise ValueError("invalid shape")
            shape = (int(idx[-1]) + 1,) + data.shape[1:]
        shape = _shape(shape)
        if data.ndim != len(shape) or idx.ndim != 1 or np.prod(shape[1:]) == 0 or len(idx) != len(data):
            raise ValueError(f"invalid shape: data {data.shape}, indices {idx.shape}, shape {shape}")
        if idx.size and (idx.min() < 0 or idx.max() >= shape[0]):
            raise MXNetError(f"row_sparse_array: indices must lie in [0, {shape[0]}), got {idx.min()}..{idx.max()}")
        dense = np.zeros(shape, dtype=as_dtype(dtype))
        dense[idx] = data
        ctx = ctx or current_context()
        return _make(RowSparseNDArray, ctx.xp.asarray(dense), ctx, np.unique(idx))
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, CSRNDArray):
        raise ValueError("Unexpected input type: CSRNDArray")
    dense = _dense_source(arg1, ctx, dtype)
    _check_shape(dense.shape, shape)
    return cast_storage(dense, "row_sparse")


def csr_matrix(arg1: Any, shape: Any = None, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """A CSRNDArray from ``(data, indices, indptr)``, ``(data, (row, col))``, a shape ``(M, N)``,
    a CSRNDArray or scipy csr matrix, or any dense 2-D array-like (MXNet's forms)."""
    if isinstance(arg1, tuple):
        if len(arg1) == 2 and isinstance(arg1[1], tuple) and len(arg1[1]) == 2:
            dtype = dtype or np.float32
            data, (row, col) = _host(arg1[0], as_dtype(dtype)), (_host(a, np.int64) for a in arg1[1])
            if shape is None:
                shape = (int(row.max()) + 1, int(col.max()) + 1)
            dense = np.zeros(_shape(shape), dtype=as_dtype(dtype))
            np.add.at(dense, (row, col), data)
            return cast_storage(_dense_source(dense, ctx, dtype), "csr")
        if len(arg1) == 2:
            _check_shape(arg1, shape)
            return zeros("csr", arg1, ctx=ctx, dtype=dtype)
        if len(arg1) != 3:
            raise ValueError(f"Unexpected length of input tuple: {len(arg1)}")
        dtype = _default_dtype(arg1[0], dtype)
        data, idx, ptr = _host(arg1[0], as_dtype(dtype)), _host(arg1[1], np.int64), _host(arg1[2], np.int64)
        if shape is None:
            if idx.size == 0:
                raise ValueError("invalid shape")
            shape = (len(ptr) - 1, int(idx.max()) + 1)
        shape = _shape(shape)
        if data.ndim != 1 or idx.ndim != 1 or ptr.ndim != 1 or ptr.size == 0 or len(shape) != 2:
            raise ValueError("invalid shape")
        if len(ptr) != shape[0] + 1 or ptr[-1] != len(data) or len(idx) != len(data) or np.any(np.diff(ptr) < 0):
            raise MXNetError(f"csr_matrix: indptr {ptr.tolist()[:8]} does not describe {len(data)} entries of "
                             f"{shape[0]} rows")
        if idx.size and (idx.min() < 0 or idx.max() >= shape[1]):
            raise MXNetError(f"csr_matrix: column indices must lie in [0, {shape[1]})")
        dense = np.zeros(shape, dtype=as_dtype(dtype))
        dense[np.repeat(np.arange(shape[0]), np.diff(ptr)), idx] = data
        return cast_storage(_dense_source(dense, ctx, dtype), "csr")
    if isinstance(arg1, CSRNDArray) or _is_scipy_csr(arg1):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, RowSparseNDArray):
        raise ValueError("Unexpected input type: RowSparseNDArray")
    dense = _dense_source(arg1, ctx, dtype)
    _check_shape(dense.shape, shape)
    return cast_storage(dense, "csr")


def retain(data: RowSparseNDArray, indices: Any) -> RowSparseNDArray:
    """The rows `indices` of a RowSparseNDArray (MXNet's `sparse.retain`): all of them stored
    (zero rows included), unless `data` stores no row at all."""
    if not isinstance(data, RowSparseNDArray):
        raise MXNetError(f"retain needs a RowSparseNDArray, got storage type {data.stype}")
    rows = np.unique(_host(indices, np.int64))
    if rows.size and (rows.min() < 0 or rows.max() >= data.shape[0]):
        raise MXNetError(f"retain: row indices must lie in [0, {data.shape[0]}), got {rows.min()}..{rows.max()}")
    keep = rows if _row_indices(data).size else rows[:0]   # MXNet: the requested rows, unless none is stored
    dense = data._ctx.xp.zeros_like(data._data)
    sel = data._ctx.xp.asarray(keep)
    dense[sel] = data._data[sel]
    return _make(RowSparseNDArray, dense, data._ctx, keep)


def _binary(name: str) -> Any:
    """`a <op> b` on a sparse array: the dense result, re-typed when MXNet keeps the storage type."""
    dense_method = getattr(NDArray, f"__{name}__")

    def method(self: BaseSparseNDArray, other: Any) -> Any:
        res = dense_method(self, other)
        if res is NotImplemented:
            return res
        scalar = isinstance(other, numbers.Number)
        if (name, scalar) in _KEEPS and (scalar or type(other) is type(self)):
            rows = _union(self._rows, None if scalar else other._rows)
            out = _make(type(self), res._data, res._ctx, rows)
            out._ag = res._ag
            return out
        return res

    method.__name__ = f"__{name}__"
    return method


def _inplace(name: str) -> Any:
    binary = _binary(name)

    def method(self: BaseSparseNDArray, other: Any) -> Any:
        res = binary(self, other)
        if res is NotImplemented:
            return res
        if isinstance(res, BaseSparseNDArray) and type(res) is not type(self):
            raise TypeError(f"copyto does not support destination NDArray stype {self.stype}")
        self._data[...] = res._data
        self._rows = res._rows if isinstance(res, BaseSparseNDArray) else None
        note_write(self._data)
        return self

    method.__name__ = f"__i{name}__"
    return method


def _union(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return a if b is None else b
    return np.union1d(a, b)


for _name in ("add", "sub", "mul", "truediv"):
    setattr(BaseSparseNDArray, f"__{_name}__", _binary(_name))
    setattr(BaseSparseNDArray, f"__i{_name}__", _inplace(_name))
BaseSparseNDArray.__div__ = BaseSparseNDArray.__truediv__
BaseSparseNDArray.__idiv__ = BaseSparseNDArray.__itruediv__
BaseSparseNDArray.__neg__ = lambda self: _make(type(self), -self._data, self._ctx, self._rows) \
    if self._ag is None else NDArray.__neg__(self)


def add(lhs: Any, rhs: Any) -> NDArray:
    """`lhs + rhs` with MXNet's result storage type."""
    return lhs + rhs


def subtract(lhs: Any, rhs: Any) -> NDArray:
    """`lhs - rhs` with MXNet's result storage type."""
    return lhs - rhs


def multiply(lhs: Any, rhs: Any) -> NDArray:
    """`lhs * rhs` with MXNet's result storage type."""
    return lhs * rhs


def divide(lhs: Any, rhs: Any) -> NDArray:
    """`lhs / rhs` with MXNet's result storage type."""
    return lhs / rhs
