"""Vision datasets (`mx.gluon.data.vision`): MNIST, FashionMNIST, CIFAR10/100 read
from MXNet's files under `root`, and image datasets over .rec files and folders.

hybridgraph never downloads: MNIST/CIFAR read the files MXNet would have downloaded,
from the same default folders (``$MXNET_HOME/datasets/<name>``, MXNET_HOME defaulting
to ~/.mxnet). A missing file raises FileNotFoundError naming the file, the folder and
the URL to fetch it from.
"""
from __future__ import annotations

import gzip
import os
import struct
import tarfile
import warnings
from typing import Any
from collections.abc import Callable

import numpy as np

from hybridgraph import base, image, nd, recordio
from hybridgraph.nd.errors import FormatError

from ..dataset import Dataset, RecordFileDataset

# MXNet 1.9.1's list (ImageListDataset is an extra, importable by name)
__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset", "ImageFolderDataset"]

_REPO = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/gluon/dataset/"


def _default_root(name: str) -> str:
    return os.path.join(base.data_dir(), "datasets", name)


def _missing(cls: str, root: str, names: list[str], namespace: str) -> FileNotFoundError:
    urls = ", ".join(_REPO + namespace + "/" + n for n in names)
    return FileNotFoundError(f"{cls}: {', '.join(names)} not found in {root!r}. hybridgraph does not download "
                             f"datasets: fetch {urls} (the files MXNet downloads) and put them in that folder, or "
                             f"pass root= the folder that holds them")


class _DownloadedDataset(Dataset):
    """A dataset of (data, label) arrays loaded once from files under `root`."""

    def __init__(self, root: str, transform: Callable | None):
        self._transform = transform
        self._data: Any = None
        self._label: Any = None
        self._root = os.path.expanduser(root)
        self._get_data()

    def _get_data(self) -> None:
        raise NotImplementedError

    def __getitem__(self, idx: int) -> Any:
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self) -> int:
        return len(self._label)


def _read_idx_file(path: str, ndim: int) -> np.ndarray:
    """An IDX file (gzipped or not) of uint8 values with `ndim` dimensions."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 + 4 * ndim:
        raise FormatError(f"{path}: too short for an IDX header")
    magic = struct.unpack(">I", raw[:4])[0]
    if magic != 0x800 + ndim:
        raise FormatError(f"{path}: expected an IDX file of {ndim}-D uint8 (magic {0x800 + ndim:#x}), "
                          f"got magic {magic:#x}")
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    body = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise FormatError(f"{path}: header declares {dims} = {int(np.prod(dims))} values, the file has {body.size}")
    return body.reshape(dims)


class MNIST(_DownloadedDataset):
    """MNIST handwritten digits: (28, 28, 1) uint8 images and int32 labels.

    Reads ``train-images-idx3-ubyte.gz``/``train-labels-idx1-ubyte.gz`` (or the t10k
    files with train=False) from `root`; uncompressed files are accepted too.
    """

    _namespace = "mnist"
    _files = {True: ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
              False: ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}

    def __init__(self, root: str = _default_root("mnist"), train: bool = True, transform: Callable | None = None):
        self._train = train
        super().__init__(root, transform)

    def _find(self, name: str) -> str | None:
        for cand in (name, name[:-3]):
            path = os.path.join(self._root, cand)
            if os.path.isfile(path):
                return path
        return None

    def _get_data(self) -> None:
        names = self._files[bool(self._train)]
        paths = [self._find(n) for n in names]
        missing = [n for n, p in zip(names, paths) if p is None]
        if missing:
            raise _missing(type(self).__name__, self._root, missing, self._namespace)
        label = _read_idx_file(paths[1], 1).astype(np.int32)
        data = _read_idx_file(paths[0], 3)
        if len(data) != len(label):
            raise FormatError(f"{type(self).__name__}: {paths[0]} has {len(data)} images but {paths[1]} has "
                              f"{len(label)} labels")
        self._data = nd.array(data.reshape(len(label), data.shape[1], data.shape[2], 1), dtype=np.uint8)
        self._label = label


class FashionMNIST(MNIST):
    """Fashion-MNIST: the MNIST file layout with clothing images."""

    _namespace = "fashion-mnist"

    def __init__(self, root: str = _default_root("fashion-mnist"), train: bool = True,
                 transform: Callable | None = None):
        super().__init__(root, train, transform)


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: (32, 32, 3) uint8 images and int32 labels, from the binary batches
    (``data_batch_1.bin`` ... ``data_batch_5.bin``, ``test_batch.bin``) under `root`, or
    from ``cifar-10-binary.tar.gz`` there (extracted into `root` first, as MXNet does)."""

    _namespace = "cifar10"
    _archive = "cifar-10-binary.tar.gz"
    _train_files = [f"data_batch_{i}.bin" for i in range(1, 6)]
    _test_files = ["test_batch.bin"]
    _label_bytes = 1

    def __init__(self, root: str = _default_root("cifar10"), train: bool = True, transform: Callable | None = None):
        self._train = train
        super().__init__(root, transform)

    def _read_batch(self, filename: str) -> tuple:
        rec = 3072 + self._label_bytes
        with open(filename, "rb") as f:
            raw = np.frombuffer(f.read(), dtype=np.uint8)
        if raw.size % rec:
            raise FormatError(f"{filename}: size {raw.size} is not a multiple of the {rec}-byte CIFAR record")
        data = raw.reshape(-1, rec)
        return (data[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1),
                data[:, self._label_column()].astype(np.int32))

    def _label_column(self) -> int:
        return 0

    def _get_data(self) -> None:
        files = self._train_files if self._train else self._test_files
        paths = [os.path.join(self._root, n) for n in files]
        if not all(os.path.isfile(p) for p in paths):
            archive = os.path.join(self._root, self._archive)
            if not os.path.isfile(archive):
                raise _missing(type(self).__name__, self._root,
                               [n for n, p in zip(files, paths) if not os.path.isfile(p)] + [f"(or {self._archive})"],
                               self._namespace)
            with tarfile.open(archive) as tar:
                tar.extractall(self._root, filter="data")
            if not all(os.path.isfile(p) for p in paths):
                raise FormatError(f"{type(self).__name__}: {archive} did not contain {files} at its top level")
        data, label = zip(*(self._read_batch(p) for p in paths))
        self._data = nd.array(np.concatenate(data), dtype=np.uint8)
        self._label = np.concatenate(label)


class CIFAR100(CIFAR10):
    """CIFAR-100 (``train.bin``/``test.bin``, or ``cifar-100-binary.tar.gz``); coarse labels
    unless fine_label=True."""

    _namespace = "cifar100"
    _archive = "cifar-100-binary.tar.gz"
    _train_files = ["train.bin"]
    _test_files = ["test.bin"]
    _label_bytes = 2

    def __init__(self, root: str = _default_root("cifar100"), fine_label: bool = False, train: bool = True,
                 transform: Callable | None = None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_column(self) -> int:
        return int(bool(self._fine_label))


class ImageRecordDataset(RecordFileDataset):
    """Images packed in a .rec file (with its .idx beside it): samples are (HWC uint8 image, label)."""

    def __init__(self, filename: str, flag: int = 1, transform: Callable | None = None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx: int) -> Any:
        header, img = recordio.unpack(super().__getitem__(idx))
        decoded = image.imdecode(img, self._flag)
        if self._transform is not None:
            return self._transform(decoded, header.label)
        return decoded, header.label


_EXTS = (".jpg", ".jpeg", ".png")


class ImageFolderDataset(Dataset):
    """Images in ``root/<class name>/<file>``: labels are the sorted class folders' indices
    (`synsets`); .jpg/.jpeg/.png files only."""

    def __init__(self, root: str, flag: int = 1, transform: Callable | None = None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = list(_EXTS)
        self.synsets: list[str] = []
        self.items: list[tuple[str, int]] = []
        if not os.path.isdir(self._root):
            raise FileNotFoundError(f"ImageFolderDataset: {self._root!r} is not a directory")
        for folder in sorted(os.listdir(self._root)):
            path = os.path.join(self._root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=2)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename} of type {ext}. Only support {', '.join(self._exts)}",
                                  stacklevel=2)
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx: int) -> Any:
        img = image.imread(self.items[idx][0], self._flag)
        label = self.items[idx][1]
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self) -> int:
        return len(self.items)


class ImageListDataset(Dataset):
    """Images listed in a .lst file (``index<TAB>label(s)<TAB>path``) or a Python list of
    (label, path) / [label..., path] entries, paths relative to `root`."""

    def __init__(self, root: str = ".", imglist: Any = None, flag: int = 1):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self.items: list[tuple[Any, str]] = []
        if isinstance(imglist, str):
            with open(imglist) as f:
                for line in f:
                    fields = line.strip().split("\t")
                    if len(fields) < 3:
                        continue
                    labels = [float(v) for v in fields[1:-1]]
                    self.items.append((labels[0] if len(labels) == 1 else np.array(labels, np.float32), fields[-1]))
        elif imglist is not None:
            for entry in imglist:
                label = entry[0] if len(entry) == 2 else np.array(entry[:-1], np.float32)
                self.items.append((label, entry[-1]))
        else:
            raise ValueError("ImageListDataset needs imglist: a .lst file path or a list of (label, path)")

    def __getitem__(self, idx: int) -> Any:
        label, path = self.items[idx]
        return image.imread(os.path.join(self._root, path), self._flag), label

    def __len__(self) -> int:
        return len(self.items)
