"""MXNet's file-reading data iterators (`mx.io.CSVIter`, `MNISTIter`, `ImageRecordIter`),
written in Python on numpy, with the batch semantics of MXNet's C++ BatchLoader.

round_batch=True (the default): a last partial batch is completed with samples from
the start of the data and `pad` says how many; the next epoch then continues after
those samples instead of rewinding (as MXNet's loader does). round_batch=False: the
partial batch is returned with `pad` = the missing count (the padding rows hold the
previous batch's values). MNISTIter, as MXNet's, only yields full batches.
`LibSVMIter` yields CSR batches in MXNet; hybridgraph has no sparse storage, so it
raises NotImplementedError.
"""
from __future__ import annotations

import struct
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.nd.errors import FormatError, MXNetError

from .io import DataBatch, DataDesc, DataIter

__all__ = ["CSVIter", "MNISTIter", "LibSVMIter", "ImageRecordIter", "ImageRecordUInt8Iter", "ImageRecordInt8Iter"]


class _BatchLoader(DataIter):
    """Batches from `_num_samples()` samples fetched by `_sample(i)` -> (data, label) numpy arrays."""

    #: round_batch=False: zero the padding rows (ImageRecordIter) instead of keeping stale ones
    _zero_padding = False

    def __init__(self, batch_size: int, data_shape: tuple, label_shape: tuple, round_batch: bool,
                 dtype: Any = np.float32, data_name: str = "data", label_name: str = "softmax_label",
                 label_dtype: Any = np.float32):
        super().__init__(batch_size)
        if batch_size < 1:
            raise MXNetError(f"batch_size must be >= 1, got {batch_size}")
        self.round_batch = bool(round_batch)
        self._dshape, self._lshape = tuple(data_shape), tuple(label_shape)
        self._dtype = np.dtype(dtype)
        self._names = (data_name, label_name)
        self._data = np.zeros((batch_size, *self._dshape), dtype=self._dtype)
        self._ldtype = np.dtype(label_dtype)
        self._label = np.zeros((batch_size, *self._lshape), dtype=self._ldtype)
        self._pos = 0
        self._overflow = 0
        self._batch: DataBatch | None = None

    @property
    def provide_data(self) -> list:
        return [DataDesc(self._names[0], (self.batch_size, *self._dshape), self._dtype)]

    @property
    def provide_label(self) -> list:
        return [DataDesc(self._names[1], (self.batch_size, *self._lshape), self._ldtype)]

    def _num_samples(self) -> int:
        raise NotImplementedError

    def _sample(self, i: int) -> tuple:
        raise NotImplementedError

    def _epoch_start(self) -> None:
        """Hook: a new pass over the data begins (reshuffle)."""

    def reset(self) -> None:
        if not self.round_batch or self._overflow == 0:
            self._pos = 0
            self._epoch_start()
        else:
            self._pos = self._overflow
        self._overflow = 0

    def _fill(self, top: int) -> None:
        d, lab = self._sample(self._pos)
        self._data[top] = d
        self._label[top] = lab
        self._pos += 1

    def iter_next(self) -> bool:
        if self._overflow:
            return False
        n = self._num_samples()
        top = 0
        while top < self.batch_size and self._pos < n:
            self._fill(top)
            top += 1
        if top == 0:
            return False
        pad = 0
        if top < self.batch_size:
            if self.round_batch:
                if n < self.batch_size - top:
                    raise MXNetError("number of input must be bigger than batch size")
                self._pos = 0
                self._epoch_start()
                while top < self.batch_size:
                    self._fill(top)
                    top += 1
                    self._overflow += 1
                pad = self._overflow
            else:
                pad = self.batch_size - top
                if self._zero_padding:
                    self._data[top:] = 0
                    self._label[top:] = 0
        self._batch = DataBatch([nd.array(self._data, dtype=self._dtype)],
                                [nd.array(self._label, dtype=self._ldtype)], pad=pad,
                                provide_data=self.provide_data, provide_label=self.provide_label)
        return True

    def next(self) -> DataBatch:
        if self.iter_next():
            return self._batch
        raise StopIteration

    def getdata(self) -> list:
        return self._batch.data[0]

    def getlabel(self) -> list:
        return self._batch.label[0]

    def getpad(self) -> int:
        return self._batch.pad

    def getindex(self) -> Any:
        return None


def _read_csv(path: str, shape: tuple, dtype: np.dtype, what: str) -> np.ndarray:
    try:
        rows = np.loadtxt(path, delimiter=",", dtype=np.float64 if dtype.kind == "f" else np.int64, ndmin=2)
    except OSError as e:
        raise MXNetError(f"CSVIter: cannot read {what} {path!r}: {e}") from e
    except ValueError as e:
        raise FormatError(f"CSVIter: {what} {path!r} is not comma-separated numbers: {e}") from e
    size = int(np.prod(shape))
    if rows.shape[1] != size:
        raise FormatError(f"CSVIter: each row of {what} {path!r} must have prod({tuple(shape)}) = {size} values, "
                          f"got {rows.shape[1]}")
    return rows.astype(dtype).reshape((len(rows), *shape))


class CSVIter(_BatchLoader):
    """Batches from CSV files: `data_csv` rows reshaped to `data_shape`, labels from
    `label_csv` (zeros when absent) shaped `label_shape`.

    Parameters follow MXNet: data_csv, data_shape, label_csv='NULL', label_shape=(1,),
    batch_size, round_batch=True, dtype ('float32', 'int32', 'int64'); prefetch_buffer and
    ctx are accepted and ignored (reading is synchronous, on the CPU).
    """

    def __init__(self, data_csv: str, data_shape: tuple, batch_size: int, label_csv: str | None = "NULL",
                 label_shape: tuple = (1,), round_batch: bool = True, dtype: str = "float32",
                 prefetch_buffer: int = 4, ctx: str = "cpu", data_name: str = "data",
                 label_name: str = "softmax_label"):
        dtype = np.dtype(dtype or "float32")
        if dtype.name not in ("float32", "int32", "int64"):
            raise MXNetError(f"CSVIter: dtype must be float32, int32 or int64, got {dtype.name}")
        self._x = _read_csv(data_csv, tuple(data_shape), dtype, "data_csv")
        if label_csv in (None, "NULL"):
            self._y = np.zeros((len(self._x), *label_shape), np.float32)
        else:
            self._y = _read_csv(label_csv, tuple(label_shape), np.dtype(np.float32), "label_csv")
            if len(self._y) != len(self._x):
                raise FormatError(f"CSVIter: {data_csv!r} has {len(self._x)} rows but {label_csv!r} has "
                                  f"{len(self._y)}")
        lshape = tuple(label_shape) if tuple(label_shape) != (1,) else ()
        super().__init__(batch_size, tuple(data_shape), lshape, round_batch, dtype, data_name, label_name,
                         label_dtype=dtype)  # MXNet's CSVIter gives labels the data's dtype
        self._y = self._y.reshape((len(self._y), *lshape))

    def _num_samples(self) -> int:
        return len(self._x)

    def _sample(self, i: int) -> tuple:
        return self._x[i], self._y[i]


def _read_idx(path: str, ndim: int) -> np.ndarray:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise MXNetError(f"MNISTIter: cannot read {path!r}: {e.strerror}. hybridgraph does not download: put the "
                         f"(gunzipped) MNIST idx files there or pass image=/label= their paths") from e
    if raw[:2] == b"\x1f\x8b":
        raise FormatError(f"MNISTIter: {path!r} is gzipped; MXNet's MNISTIter reads the uncompressed idx file "
                          f"(gunzip it first)")
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    body = np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise FormatError(f"MNISTIter: {path!r} declares {dims}, holds {body.size} values")
    return body.reshape(dims)


class MNISTIter(_BatchLoader):
    """MNIST idx files as (batch, 1, 28, 28) (flat: (batch, 784)) float32 in [0, 1)
    (pixel / 256, as MXNet) and float labels; only full batches are returned.

    Shuffling uses numpy's generator seeded with `seed`, so the order differs from
    MXNet's (which uses C++'s mt19937)."""

    def __init__(self, image: str = "./train-images-idx3-ubyte", label: str = "./train-labels-idx1-ubyte",
                 batch_size: int = 128, shuffle: bool = True, flat: bool = False, seed: int = 0,
                 silent: bool = False, num_parts: int = 1, part_index: int = 0, prefetch_buffer: int = 4,
                 ctx: str = "cpu", dtype: Any = None, data_name: str = "data", label_name: str = "softmax_label",
                 **kwargs: Any):
        # MXNet's MNISTIter ignores unknown parameters (get_mnist_iterator passes input_shape)
        img = _read_idx(image, 3)
        lab = _read_idx(label, 1)
        if not 0 <= part_index < num_parts:
            raise MXNetError(f"MNISTIter: need 0 <= part_index < num_parts, got {part_index}, {num_parts}")
        lo = int(len(img) / num_parts * part_index)
        hi = int(len(img) / num_parts * (part_index + 1))
        img, lab = img[lo:hi], lab[lo:hi]
        if shuffle:
            order = np.random.default_rng(seed).permutation(len(img))
            img, lab = img[order], lab[order]
        self._x = img.astype(np.float32) / np.float32(256.0)
        self._y = lab.astype(np.float32)
        shape = (img.shape[1] * img.shape[2],) if flat else (1, img.shape[1], img.shape[2])
        self._x = self._x.reshape((len(self._x), *shape))
        super().__init__(batch_size, shape, (), False, np.float32, data_name, label_name)

    def _num_samples(self) -> int:
        return len(self._x) - len(self._x) % self.batch_size

    def _sample(self, i: int) -> tuple:
        return self._x[i], self._y[i]


def LibSVMIter(*args: Any, **kwargs: Any) -> None:
    """Not provided: MXNet's LibSVMIter yields CSR (sparse) batches."""
    raise NotImplementedError("mx.io.LibSVMIter is not supported by hybridgraph: it produces CSR sparse batches and "
                              "hybridgraph has no sparse storage. Load the file densely (e.g. "
                              "sklearn.datasets.load_svmlight_file(path)[0].toarray()) and use mx.io.NDArrayIter")


from .image_record_iter import ImageRecordInt8Iter, ImageRecordIter, ImageRecordUInt8Iter  # noqa: E402

