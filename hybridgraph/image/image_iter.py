"""`mx.image.ImageIter`: batches of augmented images from a .rec file, an image list
file or a Python list, with MXNet's `last_batch_handle` ('pad', 'discard', 'roll_over')."""
from __future__ import annotations

import random

import numpy as np
from numbers import Number
from typing import Any

from hybridgraph import nd
from hybridgraph import recordio
from hybridgraph.io import DataBatch, DataIter
from hybridgraph.nd.errors import MXNetError

from .augment import CreateAugmenter
from .image import _read_bytes, imdecode

__all__ = ["ImageIter"]


class ImageIter(DataIter):
    """Image data iterator with a large number of augmentation choices.

    Reads from `path_imgrec` (with `path_imgidx` for random access and shuffling),
    from `path_imglist` (``index<TAB>label(s)<TAB>path`` lines, files under
    `path_root`) or from `imglist` ([label(s)..., path] entries). Extra keyword
    arguments go to `CreateAugmenter` when `aug_list` is None. Batches are
    (batch_size, C, H, W) float32 data and (batch_size,) or (batch_size,
    label_width) labels.
    """

    def __init__(self, batch_size: int, data_shape: tuple, label_width: int = 1, path_imgrec: str | None = None,
                 path_imglist: str | None = None, path_root: str | None = None, path_imgidx: str | None = None,
                 shuffle: bool = False, part_index: int = 0, num_parts: int = 1, aug_list: list | None = None,
                 imglist: list | None = None, data_name: str = "data", label_name: str = "softmax_label",
                 dtype: str = "float32", last_batch_handle: str = "pad", **kwargs: Any):
        super().__init__(batch_size)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ValueError("ImageIter needs path_imgrec, path_imglist or imglist")
        if dtype not in ("int32", "float32", "int64", "float64"):
            raise ValueError(f"{dtype} label not supported")
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError(f"last_batch_handle must be 'pad', 'discard' or 'roll_over', got {last_batch_handle!r}")
        self.imgidx: list | None = None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
        else:
            self.imgrec = None
        imgkeys: list = []
        if path_imglist:
            self.imglist = {}
            with open(path_imglist) as fin:
                for line in fin:
                    fields = line.strip().split("\t")
                    key = int(fields[0])
                    self.imglist[key] = (nd.array([float(v) for v in fields[1:-1]], dtype=dtype), fields[-1])
                    imgkeys.append(key)
        elif isinstance(imglist, list):
            self.imglist = {}
            for index, img in enumerate(imglist, 1):
                key = str(index)
                if len(img) > 2:
                    label = nd.array(img[:-1], dtype=dtype)
                elif isinstance(img[0], Number):
                    label = nd.array([img[0]], dtype=dtype)
                else:
                    label = nd.array(img[0], dtype=dtype)
                self.imglist[key] = (label, img[-1])
                imgkeys.append(key)
        else:
            self.imglist = None
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.provide_data = [(data_name, (batch_size, *data_shape))]
        self.provide_label = [(label_name, (batch_size, label_width) if label_width > 1 else (batch_size,))]
        self.batch_size = batch_size
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.shuffle = shuffle
        if self.imgrec is None:
            self.seq: list | None = imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise ValueError("shuffle and num_parts > 1 need path_imgidx (random access into the .rec)")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            if not part_index < num_parts:
                raise ValueError(f"part_index {part_index} must be < num_parts {num_parts}")
            c = len(self.seq) // num_parts
            self.seq = self.seq[part_index * c:(part_index + 1) * c]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = self._cache_label = self._cache_idx = None
        self.reset()

    def reset(self) -> None:
        """Next epoch (with 'roll_over', the cached partial batch is kept)."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self) -> None:
        """Next epoch, dropping any rolled-over data."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    def next_sample(self) -> tuple:
        """(label, encoded image bytes) of the next image."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is not None:
            if self.cur >= self.num_image:
                if self.last_batch_handle != "discard":
                    self.cur = 0
                raise StopIteration
            idx = self.seq[self.cur]
            self.cur += 1
            if self.imgrec is not None:
                header, img = recordio.unpack(self.imgrec.read_idx(idx))
                return (header.label if self.imglist is None else self.imglist[idx][0]), img
            label, fname = self.imglist[idx]
            return label, self.read_image(fname)
        s = self.imgrec.read()
        if s is None:
            if self.last_batch_handle != "discard":
                self.imgrec.reset()
            raise StopIteration
        header, img = recordio.unpack(s)
        return header.label, img

    def _batchify(self, batch_data: Any, batch_label: Any, start: int = 0) -> int:
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError:
                    continue
                data = self.augmentation_transform(data)
                batch_data[i] = self.postprocess_data(data)
                batch_label[i] = np.asarray(label.asnumpy() if hasattr(label, "asnumpy") else label,
                                            dtype=np.float32).reshape(batch_label.shape[1:])
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self) -> DataBatch:
        c, h, w = self.data_shape
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data = nd.zeros((self.batch_size, c, h, w))
            batch_label = nd.empty(self.provide_label[0][1])
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return DataBatch([batch_data], [batch_label], pad=pad)

    def check_data_shape(self, data_shape: tuple) -> None:
        """data_shape must be (3, H, W)."""
        if len(data_shape) != 3:
            raise ValueError("data_shape should have length 3, with dimensions CxHxW")
        if data_shape[0] != 3:
            raise ValueError("This iterator expects inputs to have 3 channels.")

    def check_valid_image(self, data: Any) -> None:
        """Raise RuntimeError for an image to skip."""
        if len(data[0].shape) == 0:
            raise RuntimeError("Data shape is wrong")

    def imdecode(self, s: bytes) -> Any:
        """Decode one image; a broken one raises RuntimeError naming it."""
        try:
            return imdecode(s)
        except MXNetError as e:
            where = self.seq[(self.cur % self.num_image) - 1] if self.seq is not None else self.cur
            if self.imglist is not None and where in self.imglist:
                raise RuntimeError(f"Broken image filename: {self.imglist[where][1]}, {e}") from e
            raise RuntimeError(f"Broken image index: {where}, {e}") from e

    def read_image(self, fname: str) -> bytes:
        """The bytes of image file `fname` under `path_root`."""
        return _read_bytes(self.path_root, fname)

    def augmentation_transform(self, data: Any) -> Any:
        """Apply every augmenter in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum: Any) -> Any:
        """HWC -> CHW."""
        return nd.transpose(datum, axes=(2, 0, 1))
