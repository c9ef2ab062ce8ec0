"""Data helpers of MXNet's test_utils: download, MNIST/CIFAR-10 files, DummyIter, im2rec's path.

They work on local files first, with MXNet's file names and folders (``data/``
under the working directory, or the URL's file name): a file already there is
used as is. Otherwise they download it; without network access that fails
with an OSError naming the URL and the path to put the file at.
"""
from __future__ import annotations

import bz2
import gzip
import os
import struct
import zipfile
from typing import Any

import numpy as np

from hybridgraph.io import DataIter
from hybridgraph.nd.atomic import atomic_write

_MNIST_URL = "http://data.mxnet.io/data/mnist/"


def download(url: str, fname: str | None = None, dirname: str | None = None, overwrite: bool = False,
             retries: int = 5) -> str:
    """Download `url` to `dirname`/`fname` (default: the URL's last part); return the path.

    An existing file is kept unless `overwrite`.
    """
    from hybridgraph.gluon.utils import download as _download  # noqa: PLC0415
    if fname is None:
        fname = url.rsplit("/", maxsplit=1)[-1]
    if dirname is not None:
        os.makedirs(dirname, exist_ok=True)
        fname = os.path.join(dirname, fname)
    return _download(url, path=fname, overwrite=overwrite, retries=max(retries, 1))


def download_model(model_name: str, dst_dir: str = "./", meta_info: dict | None = None) -> tuple:
    """Fetch `model_name`-symbol.json and -0000.params as listed in `meta_info` {name: {symbol, params}}.

    Returns (path prefix, 0), or (None, 0) for a name `meta_info` does not list.
    Without `meta_info` no model is known (MXNet's data.mxnet.io list is not kept).
    """
    meta_info = dict(meta_info or {})
    if model_name not in meta_info:
        return (None, 0)
    os.makedirs(dst_dir, exist_ok=True)
    meta = dict(meta_info[model_name])
    assert "symbol" in meta, "missing symbol url"
    assert "params" in meta, "missing parameter file url"
    prefix = os.path.join(dst_dir, model_name)
    download(meta["symbol"], prefix + "-symbol.json")
    download(meta["params"], prefix + "-0000.params")
    return (prefix, 0)


def read_mnist(label_file: str, image_file: str) -> tuple[np.ndarray, np.ndarray]:
    """(labels int8, images float32 N x 1 x 28 x 28 in [0, 1]) from gzipped idx files."""
    with gzip.open(label_file) as flbl:
        struct.unpack(">II", flbl.read(8))
        label = np.frombuffer(flbl.read(), dtype=np.int8)
    with gzip.open(image_file, "rb") as fimg:
        _, _, rows, cols = struct.unpack(">IIII", fimg.read(16))
        image = np.frombuffer(fimg.read(), dtype=np.uint8).reshape(len(label), rows, cols)
    return label, image.reshape(image.shape[0], 1, 28, 28).astype(np.float32) / 255


def get_mnist() -> dict:
    """MNIST as numpy arrays {train_data, train_label, test_data, test_label} from the .gz idx files."""
    def read(prefix: str):
        return read_mnist(download(_MNIST_URL + prefix + "-labels-idx1-ubyte.gz"),
                          download(_MNIST_URL + prefix + "-images-idx3-ubyte.gz"))
    train_lbl, train_img = read("train")
    test_lbl, test_img = read("t10k")
    return {"train_data": train_img, "train_label": train_lbl, "test_data": test_img, "test_label": test_lbl}


def get_mnist_pkl() -> None:
    """Make sure data/mnist.pkl.gz exists."""
    if not os.path.exists("data/mnist.pkl.gz"):
        download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def _ensure_zip(files: list[str], url: str) -> None:
    if all(os.path.exists(f) for f in files):
        return
    with zipfile.ZipFile(download(url, dirname="data")) as zf:
        zf.extractall("data")


def get_mnist_ubyte() -> None:
    """Make sure the four raw MNIST idx files exist under data/."""
    _ensure_zip([f"data/{n}" for n in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                       "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")],
                "http://data.mxnet.io/mxnet/data/mnist.zip")


def get_cifar10() -> None:
    """Make sure data/cifar/{train,test}.{rec,lst} exist."""
    _ensure_zip([f"data/cifar/{n}" for n in ("train.rec", "test.rec", "train.lst", "test.lst")],
                "http://data.mxnet.io/mxnet/data/cifar10.zip")


def get_mnist_iterator(batch_size: int, input_shape: tuple, num_parts: int = 1, part_index: int = 0) -> tuple:
    """(train, val) `mx.io.MNISTIter`s over data/*-ubyte (flat unless `input_shape` is 3-D)."""
    from hybridgraph import io  # noqa: PLC0415
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    common = dict(input_shape=input_shape, batch_size=batch_size, flat=flat, num_parts=num_parts,
                  part_index=part_index)
    train = io.MNISTIter(image="data/train-images-idx3-ubyte", label="data/train-labels-idx1-ubyte",
                         shuffle=True, **common)
    val = io.MNISTIter(image="data/t10k-images-idx3-ubyte", label="data/t10k-labels-idx1-ubyte", **common)
    return train, val


def get_zip_data(data_dir: str, url: str, data_origin_name: str) -> None:
    """Download `url` as `data_dir`/`data_origin_name` and extract it there (unless present)."""
    origin = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(origin):
        download(url, dirname=data_dir, overwrite=False)
        with zipfile.ZipFile(origin) as zf:
            zf.extractall(path=data_dir)


def get_bz2_data(data_dir: str, data_name: str, url: str, data_origin_name: str) -> None:
    """Download a .bz2 file and decompress it to `data_dir`/`data_name` (unless present)."""
    target = os.path.join(data_dir, data_name)
    origin = os.path.join(data_dir, data_origin_name)
    if os.path.exists(target):
        return
    download(url, fname=origin)
    with bz2.BZ2File(origin, "rb") as src:
        atomic_write(target, src.read())
    os.remove(origin)


def get_im2rec_path(home_env: str = "MXNET_HOME") -> str:
    """The path of tools/im2rec.py under $`home_env` or beside this package; OSError when absent."""
    base = os.environ.get(home_env) or os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(base, "tools", "im2rec.py"), os.path.join(base, "..", "..", "tools", "im2rec.py")):
        if os.path.isfile(cand):
            return cand
    raise OSError("Could not find path to tools/im2rec.py")


class DummyIter(DataIter):
    """Repeats the first batch of `real_iter` forever (for speed tests)."""

    def __init__(self, real_iter: Any):
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        return self.the_batch

