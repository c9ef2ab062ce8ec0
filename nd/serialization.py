"""MXNet's binary NDArray list format (`mx.nd.save` / `mx.nd.load`, `.params` files).

Layout (golden/formats.md, section 2; all little-endian, no padding)::

    uint64 0x112, uint64 0, uint64 N, N x record, uint64 K, K x (uint64 len, utf-8 bytes)

Writing produces exactly the bytes MXNet 1.9.1 writes (V2 dense records, context
cpu(0)). Reading accepts every record layout the 1.9.1 loader reads (V0, V1, V2
including row_sparse/csr, V3) and returns dense arrays.

Parsing is bounded: every count, shape and byte size declared in the file is
checked against the bytes that remain *before* anything is allocated, so a
truncated, corrupted or hostile file raises `FormatError` (with the offset,
what was expected and what was found) instead of crashing, hanging or
allocating huge buffers.
"""
from __future__ import annotations

import os
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .atomic import atomic_write
from .backend import cpu, to_numpy
from .errors import FormatError, MXNetError

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA

#: mshadow type flags that MXNet 1.9.1 writes (formats.md 2.3)
DTYPE_TO_FLAG = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2,
                 np.dtype(np.uint8): 3, np.dtype(np.int32): 4, np.dtype(np.int8): 5,
                 np.dtype(np.int64): 6, np.dtype(np.bool_): 7}
#: flags a reader accepts: the above plus mshadow's reserved integer types
FLAG_TO_DTYPE = {**{v: k for k, v in DTYPE_TO_FLAG.items()},
                 8: np.dtype(np.int16), 9: np.dtype(np.uint16), 10: np.dtype(np.uint32),
                 11: np.dtype(np.uint64)}
BFLOAT16_FLAG = 12  # read as float32 (numpy has no bfloat16)

#: MXNet's device types (cpu, gpu, cpu_pinned, cpu_shared); informational only
_DEV_TYPES = (1, 2, 3, 5)
_STYPE_NAMES = {0: "default", 1: "row_sparse", 2: "csr"}
#: the most dimensions a record may declare (far above anything MXNet computes with)
MAX_NDIM = 32
#: per-file cap on the dense bytes that sparse records expand to (their declared shape is
#: not backed by file bytes, so a 108-byte record could ask for gigabytes); set it with
#: `set_sparse_load_limit` or the environment variable HYBRIDGRAPH_MAX_SPARSE_BYTES
MAX_SPARSE_DENSE_BYTES = int(os.environ.get("HYBRIDGRAPH_MAX_SPARSE_BYTES", str(256 << 20)))

_NONE = object()  # a "none" (uninitialised) array record


def set_sparse_load_limit(nbytes: int) -> int:
    """Set the per-file cap on dense bytes expanded from sparse records; returns the old cap."""
    global MAX_SPARSE_DENSE_BYTES
    if not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"set_sparse_load_limit: expected a non-negative int, got {nbytes!r}")
    old, MAX_SPARSE_DENSE_BYTES = MAX_SPARSE_DENSE_BYTES, nbytes
    return old


class _Reader:
    """A bounded cursor over the file's bytes."""

    def __init__(self, buf: bytes | bytearray | memoryview):
        self.buf = memoryview(buf).cast("B")
        self.pos = 0
        self.sparse_bytes = 0  # dense bytes expanded from sparse records so far

    @property
    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def fail(self, what: str, got: str, at: int | None = None) -> FormatError:
        at = self.pos if at is None else at
        return FormatError(f"malformed NDArray file at byte offset {at}: expected {what}, got {got}")

    def need(self, nbytes: int, what: str) -> None:
        if nbytes > self.remaining:
            raise self.fail(what + f" ({nbytes} bytes)", f"only {self.remaining} bytes left in the file")

    def take(self, nbytes: int, what: str) -> memoryview:
        self.need(nbytes, what)
        out = self.buf[self.pos:self.pos + nbytes]
        self.pos += nbytes
        return out

    def unpack(self, fmt: str, what: str) -> Any:
        size = struct.calcsize(fmt)
        vals = struct.unpack_from(fmt, self.take(size, what))
        return vals[0] if len(vals) == 1 else vals

    def u32(self, what: str) -> int:
        return self.unpack("<I", what)

    def i32(self, what: str) -> int:
        return self.unpack("<i", what)

    def u64(self, what: str) -> int:
        return self.unpack("<Q", what)

    def peek(self, fmt: str) -> tuple | None:
        size = struct.calcsize(fmt)
        if size > self.remaining:
            return None
        return struct.unpack_from(fmt, self.buf, self.pos)


# -- reading --------------------------------------------------------------------

def _dims(r: _Reader, ndim: int, code: str, what: str, allow_unknown: bool = False) -> tuple:
    """`ndim` dimensions of struct type `code`, checked non-negative (-1 = unknown if allowed)."""
    start = r.pos
    if ndim < 0 or ndim > MAX_NDIM:
        raise r.fail(f"{what}: ndim in [0, {MAX_NDIM}]", str(ndim), at=start - 4)
    dims = r.unpack(f"<{ndim}{code}", f"{what}: {ndim} dims") if ndim else ()
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    for d in dims:
        if d < 0 and not (allow_unknown and d == -1):
            raise r.fail(f"{what}: non-negative dims", str(dims), at=start)
    return dims


def _tshape(r: _Reader, what: str, allow_unknown: bool = False) -> tuple | None:
    """A TShape: int32 ndim then ndim x int64. None for an unknown shape (V3 semantics)."""
    ndim = r.i32(f"{what}: ndim")
    if allow_unknown and ndim == -1:
        return None
    dims = _dims(r, ndim, "q", what, allow_unknown)
    return None if -1 in dims else dims


def _nbytes(r: _Reader, shape: tuple, dtype: np.dtype, what: str) -> int:
    """Byte size of a shape, checked against the bytes left before anything is allocated."""
    size = 1
    for d in shape:
        size *= d
    nbytes = size * (2 if dtype is None else dtype.itemsize)
    r.need(nbytes, f"{what}: data of shape {shape}")
    return nbytes


def _dtype(r: _Reader, what: str) -> np.dtype | None:
    """A type flag; None stands for bfloat16 (2-byte storage, read as float32)."""
    at = r.pos
    flag = r.i32(what)
    if flag == BFLOAT16_FLAG:
        return None
    if flag not in FLAG_TO_DTYPE:
        raise r.fail(f"{what}: a type flag in {sorted(FLAG_TO_DTYPE) + [BFLOAT16_FLAG]}", str(flag), at=at)
    return FLAG_TO_DTYPE[flag]


def _context(r: _Reader) -> None:
    at = r.pos
    dev_type, dev_id = r.unpack("<ii", "context (dev_type, dev_id)")
    if dev_type not in _DEV_TYPES or dev_id < 0:
        raise r.fail(f"a context with dev_type in {list(_DEV_TYPES)} and dev_id >= 0",
                     f"dev_type={dev_type}, dev_id={dev_id}", at=at)


def _data(r: _Reader, shape: tuple, dtype: np.dtype | None, what: str) -> np.ndarray:
    """Read C-order data of a checked size into a fresh, aligned, writable array."""
    nbytes = _nbytes(r, shape, dtype, what)
    raw = r.take(nbytes, what)
    if dtype is None:  # bfloat16: the high half of a float32
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).reshape(shape)
    out = np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype, copy=True)
    if dtype == np.bool_:
        out = out.view(np.uint8).astype(np.bool_)  # normalise bytes other than 0/1
    try:
        return out.reshape(shape)
    except ValueError as exc:  # e.g. (0, 2**62): no bytes, but too big for numpy
        raise r.fail(f"{what}: a representable shape", f"{shape} ({exc})") from None


def _plausible_0d(r: _Reader) -> bool:
    """After a V2 record with ndim 0: does a 0-d payload (ctx, type, one element) follow?

    MXNet 1.9.1 writes 0-d arrays this way (and cannot read them back); older
    writers ended a "none" array right after the shape. The two are told apart
    by whether the next bytes form a valid context and type flag with data.
    """
    head = r.peek("<iii")
    if head is None:
        return False
    dev_type, dev_id, flag = head
    if dev_type not in _DEV_TYPES or not 0 <= dev_id < 1024:
        return False
    if flag == BFLOAT16_FLAG:
        size = 2
    elif flag in FLAG_TO_DTYPE:
        size = FLAG_TO_DTYPE[flag].itemsize
    else:
        return False
    return r.remaining >= 12 + size


def _dense_tail(r: _Reader, shape: tuple, what: str) -> np.ndarray:
    _context(r)
    dtype = _dtype(r, f"{what}: type flag")
    return _data(r, shape, dtype, what)


def _sparse_tail(r: _Reader, stype: int, sshape: tuple, shape: tuple, what: str) -> np.ndarray:
    """The rest of a row_sparse or csr record, expanded to a dense array."""
    _context(r)
    dtype = _dtype(r, f"{what}: type flag")
    naux = 1 if stype == 1 else 2
    aux = []
    for i in range(naux):
        at = r.pos
        adt = _dtype(r, f"{what}: aux {i} type flag")
        if adt is None or adt.kind not in "iu":
            raise r.fail(f"{what}: an integer aux type flag", str(adt or "bfloat16"), at=at)
        aux.append((adt, _tshape(r, f"{what}: aux {i} shape")))
    dense_bytes = 1
    for d in shape:  # checked before the values are read, so nothing big is touched
        dense_bytes *= d
    dense_bytes *= 4 if dtype is None else dtype.itemsize
    r.sparse_bytes += dense_bytes
    if r.sparse_bytes > MAX_SPARSE_DENSE_BYTES:
        raise r.fail(f"{what}: sparse arrays expanding to at most {MAX_SPARSE_DENSE_BYTES} dense bytes "
                     "per file (raise the cap with hybridgraph.nd.serialization.set_sparse_load_limit "
                     "or HYBRIDGRAPH_MAX_SPARSE_BYTES if the file is trusted)",
                     f"shape {shape} ({dense_bytes} bytes; {r.sparse_bytes} in this file so far)")
    values = _data(r, sshape, dtype, f"{what} values")
    idx = [_data(r, ashape, adt, f"{what} aux {i}").astype(np.int64) for i, (adt, ashape) in enumerate(aux)]
    if stype == 1:
        return _rsp_to_dense(r, values, idx[0], shape, what)
    return _csr_to_dense(r, values, idx, shape, what)


def _rsp_to_dense(r: _Reader, values: np.ndarray, rows: np.ndarray, shape: tuple, what: str) -> np.ndarray:
    if len(shape) < 1 or values.shape[1:] != shape[1:] or rows.shape != values.shape[:1]:
        raise r.fail(f"{what}: row_sparse storage (nnz, {shape[1:]}) with nnz row indices",
                     f"values {values.shape}, indices {rows.shape}")
    if rows.size and (rows.min() < 0 or rows.max() >= shape[0]):
        raise r.fail(f"{what}: row indices in [0, {shape[0]})", f"[{rows.min()}, {rows.max()}]")
    dense = np.zeros(shape, dtype=values.dtype)
    dense[rows] = values
    return dense


def _csr_to_dense(r: _Reader, values: np.ndarray, aux: list, shape: tuple, what: str) -> np.ndarray:
    indptr, cols = aux
    if len(shape) != 2 or indptr.shape != (shape[0] + 1,) or cols.shape != values.shape \
            or values.ndim != 1:
        raise r.fail(f"{what}: csr of 2-d shape with indptr ({shape[0] + 1 if shape else '?'},) "
                     "and equal-length values/indices",
                     f"shape {shape}, indptr {indptr.shape}, indices {cols.shape}, values {values.shape}")
    if indptr[0] != 0 or indptr[-1] != values.size or np.any(np.diff(indptr) < 0):
        raise r.fail(f"{what}: non-decreasing indptr from 0 to {values.size}", str(indptr.tolist()[:8]))
    if cols.size and (cols.min() < 0 or cols.max() >= shape[1]):
        raise r.fail(f"{what}: column indices in [0, {shape[1]})", f"[{cols.min()}, {cols.max()}]")
    dense = np.zeros(shape, dtype=values.dtype)
    row_of = np.repeat(np.arange(shape[0]), np.diff(indptr))
    dense[row_of, cols] = values
    return dense


def _check_shape_semantics(np_shape: bool, what: str) -> None:
    """MXNet 1.9.1 loads a V3 record (written under np-shape semantics, where a 0 is a real
    size) only under np-shape semantics, and any other record only outside them."""
    from hybridgraph.util import is_np_shape  # noqa: PLC0415 - mx.util imports nd
    if np_shape and not is_np_shape():
        raise MXNetError(f"{what}: ndarray was saved in np shape semantics, must be loaded in the same "
                         "semantics. Please turn on np shape semantics in Python using `with "
                         "np_shape(True)` or decorator `use_np_shape` to scope the code of loading the ndarray.")
    if not np_shape and is_np_shape():
        raise MXNetError(f"{what}: ndarray was not saved in np shape semantics, but being loaded in np "
                         "shape semantics. Please turn off np shape semantics in Python using `with "
                         "np_shape(False)` to scope the code of loading the ndarray.")


def _read_record(r: _Reader, index: int, semantics: bool = False) -> Any:
    """One NDArray record; returns a numpy array, or _NONE for a none array."""
    what = f"array {index}"
    at = r.pos
    magic = r.u32(f"{what}: record magic or legacy ndim")
    if semantics:
        _check_shape_semantics(magic == V3_MAGIC, what)
    if magic in (V2_MAGIC, V3_MAGIC):
        np_shape = magic == V3_MAGIC
        stype_at = r.pos
        stype = r.i32(f"{what}: storage type")
        if stype not in _STYPE_NAMES or (np_shape and stype != 0):
            raise r.fail(f"{what}: storage type 0 (default), 1 (row_sparse) or 2 (csr)"
                         + (" (V3 records are dense)" if np_shape else ""), str(stype), at=stype_at)
        sshape = _tshape(r, f"{what}: storage shape") if stype else None
        shape = _tshape(r, f"{what}: shape", allow_unknown=np_shape)
        if shape is None or (not np_shape and shape == () and not _plausible_0d(r)):
            return _NONE
        if stype:
            return _sparse_tail(r, stype, sshape, shape, what)
        return _dense_tail(r, shape, what)
    if magic == V1_MAGIC:
        shape = _tshape(r, f"{what}: shape")
    elif magic <= MAX_NDIM:  # V0: the magic is the ndim of a uint32 shape
        shape = _dims(r, magic, "I", f"{what}: legacy shape")
    else:
        raise r.fail(f"{what}: a record magic (V1 0x{V1_MAGIC:X}, V2 0x{V2_MAGIC:X}, V3 0x{V3_MAGIC:X}) "
                     f"or a legacy ndim <= {MAX_NDIM}", f"0x{magic:X}", at=at)
    # MXNet 1.9.1 reads a 0-d V0/V1 record with its payload; older writers left none there
    if shape == () and not _plausible_0d(r):
        return _NONE
    return _dense_tail(r, shape, what)


def _read_name(r: _Reader, index: int) -> str:
    at = r.pos
    n = r.u64(f"name {index}: length")
    raw = r.take(n, f"name {index}")
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise r.fail(f"name {index}: UTF-8 text", f"undecodable bytes ({exc.reason})", at=at) from None


def load_arrays(buf: bytes | bytearray | memoryview, semantics: bool = False) -> tuple[list, list[str]]:
    """Parse a whole NDArray list file into (numpy arrays, names).

    Names is empty when the file was saved from a list. A "none" (uninitialised)
    array record gives None. With `semantics` (MXNet's `nd.load`), a record written under
    np-shape semantics loads only under them, and any other only outside them.
    """
    r = _Reader(buf)
    magic = r.u64("file magic 0x112")
    if magic != LIST_MAGIC:
        raise r.fail(f"file magic 0x{LIST_MAGIC:X} (an MXNet NDArray file)", f"0x{magic:X}", at=0)
    r.u64("reserved header field")
    count_at = r.pos
    n = r.u64("number of arrays")
    if n * 4 > r.remaining:  # every record holds at least a 4-byte magic
        raise r.fail("an array count that fits the file", f"{n} arrays in {r.remaining} bytes", at=count_at)
    arrays = []
    for i in range(n):
        a = _read_record(r, i, semantics)
        arrays.append(None if a is _NONE else a)
    names_at = r.pos
    k = r.u64("number of names")
    if k not in (0, n):
        raise r.fail(f"0 or {n} names (one per array)", str(k), at=names_at)
    names = [_read_name(r, i) for i in range(k)]
    if r.remaining:
        raise r.fail("end of file", f"{r.remaining} trailing bytes")
    return arrays, names


def load_record(buf: bytes | bytearray | memoryview) -> np.ndarray | None:
    """One raw NDArray record (MXNet's pickled `{'handle': bytes}` state); None for a none array."""
    r = _Reader(buf)
    arr = _read_record(r, 0)
    if r.remaining:
        raise r.fail("end of the record", f"{r.remaining} trailing bytes")
    return None if arr is _NONE else arr


def _wrap(arrays: list, names: list[str]) -> list | dict:
    from .ndarray import NDArray  # noqa: PLC0415 - ndarray imports the op registry
    ctx = cpu()
    out = [None if a is None else NDArray._wrap(a, ctx) for a in arrays]
    if names:
        return dict(zip(names, out))
    return out


def load_frombuffer(buf: bytes | bytearray | memoryview) -> list | dict:
    """Load NDArrays from bytes in MXNet's format (`mx.nd.load_frombuffer`).

    Returns a dict name -> NDArray when the data was saved from a dict, else a list.
    """
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"load_frombuffer expects bytes, got {type(buf).__name__}")
    return _wrap(*load_arrays(buf, semantics=True))


def load(fname: str | os.PathLike) -> list | dict:
    """Load NDArrays saved by `save` or by MXNet (`mx.nd.load`): a dict or a list."""
    path = Path(fname)
    try:
        buf = path.read_bytes()
    except IsADirectoryError:
        raise FormatError(f"cannot load NDArrays from {str(path)!r}: it is a directory") from None
    try:
        return _wrap(*load_arrays(buf, semantics=True))
    except FormatError as exc:
        raise FormatError(f"{path}: {exc}") from None


# -- writing --------------------------------------------------------------------

def _as_numpy(x: Any, what: str) -> np.ndarray:
    from .ndarray import NDArray  # noqa: PLC0415
    if not isinstance(x, NDArray):
        raise TypeError(f"save: {what} must be an NDArray, got {type(x).__name__}")
    arr = to_numpy(x._data)
    if arr.dtype not in DTYPE_TO_FLAG:
        raise TypeError(f"save: {what} has dtype {arr.dtype}, which MXNet's format cannot store; "
                        f"expected one of {[d.name for d in DTYPE_TO_FLAG]}")
    return arr


def _split(data: Any) -> tuple[list[np.ndarray], list[str]]:
    """(arrays, names) from an NDArray, a list/tuple of NDArrays or a dict str -> NDArray."""
    from .ndarray import NDArray  # noqa: PLC0415
    if isinstance(data, NDArray):
        return [_as_numpy(data, "data")], []
    if isinstance(data, Mapping):
        names, arrays = [], []
        for k, v in data.items():
            if not isinstance(k, str):
                raise TypeError(f"save: dict keys must be str, got {type(k).__name__} ({k!r})")
            names.append(k)
            arrays.append(_as_numpy(v, f"value of key {k!r}"))
        return arrays, names
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return [_as_numpy(v, f"element {i}") for i, v in enumerate(data)], []
    raise TypeError("save: data needs to either be a NDArray, dict of str, NDArray pairs "
                    f"or a list of NDArrays; got {type(data).__name__}")


def _record(arr: np.ndarray) -> bytes:
    """One V2 dense record, exactly as MXNet 1.9.1 writes it (context cpu(0)); V3 (the same
    layout) while numpy shape semantics are on (`npx.set_np()`), as MXNet marks them."""
    from hybridgraph.util import is_np_shape  # noqa: PLC0415 - mx.util imports nd
    head = struct.pack(f"<Iii{arr.ndim}q", V3_MAGIC if is_np_shape() else V2_MAGIC, 0, arr.ndim, *arr.shape)
    head += struct.pack("<iii", 1, 0, DTYPE_TO_FLAG[arr.dtype])
    return head + np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()


def dump_arrays(arrays: Sequence[np.ndarray], names: Sequence[str] = ()) -> bytes:
    """Serialise numpy arrays (and optional names, one per array) to MXNet's bytes."""
    if names and len(names) != len(arrays):
        raise ValueError(f"save: {len(names)} names for {len(arrays)} arrays")
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))]
    parts += [_record(np.asarray(a)) for a in arrays]
    parts.append(struct.pack("<Q", len(names)))
    for name in names:
        raw = name.encode("utf-8")
        parts.append(struct.pack("<Q", len(raw)) + raw)
    return b"".join(parts)


def save_tobuffer(data: Any) -> bytes:
    """The bytes `save` would write (an NDArray, a list of them, or a dict str -> NDArray)."""
    return dump_arrays(*_split(data))


def save(fname: str | os.PathLike, data: Any) -> None:
    """Save an NDArray, a list of NDArrays or a dict str -> NDArray in MXNet's format
    (`mx.nd.save`); the file is byte-identical to what MXNet 1.9.1 writes."""
    atomic_write(fname, save_tobuffer(data))
