"""`mx.contrib.io.DataLoaderIter`: a Gluon DataLoader as a Module-style DataIter."""
from __future__ import annotations

from typing import Any

from hybridgraph import nd

from ..io import DataDesc, DataIter

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """Wraps a `gluon.data.DataLoader` of (data, label) batches as a DataIter.

    The batch size is the first batch's; a smaller last batch (last_batch='keep') is
    padded up to it and `getpad()` says by how much.
    """

    def __init__(self, loader: Any, data_name: str = "data", label_name: str = "softmax_label",
                 dtype: str = "float32"):
        super().__init__()
        self._loader = loader
        self._iter = iter(self._loader)
        data, label = next(self._iter)
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current_batch: Any = None
        self.reset()

    def reset(self) -> None:
        self._iter = iter(self._loader)

    def iter_next(self) -> bool:
        self._current_batch = next(self._iter, None)
        return self._current_batch is not None

    def _padded(self, arr: Any) -> list:
        arr = arr.astype(self.dtype)
        if not self.getpad():
            return [arr]
        ret = nd.zeros((self.batch_size, *arr.shape[1:]), dtype=self.dtype)
        ret[:arr.shape[0]] = arr
        return [ret]

    def getdata(self) -> list:
        return self._padded(self._current_batch[0])

    def getlabel(self) -> list:
        return self._padded(self._current_batch[1])

    def getpad(self) -> int:
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self) -> None:
        return None
