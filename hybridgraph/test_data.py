"""`mx.test_utils`' dataset helpers (get_mnist, get_mnist_ubyte, get_mnist_iterator,
get_cifar10, get_mnist_pkl), reading the files MXNet's helpers would download, from the
same places (the current directory, or ./data). hybridgraph never downloads: a missing
file raises FileNotFoundError naming it, where it goes and the URL it comes from."""
from __future__ import annotations

import gzip
import os
import struct
import zipfile

import numpy as np

__all__ = ["get_mnist", "get_mnist_pkl", "get_mnist_ubyte", "get_cifar10", "get_mnist_iterator"]


def _need(paths: list[str], url: str, what: str) -> None:
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise FileNotFoundError(f"{what}: {', '.join(missing)} not found (relative to {os.getcwd()!r}). hybridgraph "
                                f"does not download: fetch {url} and put it there")


def get_mnist() -> dict:
    """MNIST from the four .gz idx files in the current directory (where MXNet's helper
    downloads them): dict of train/test data (N, 1, 28, 28) float32 in [0, 1] and int8 labels."""
    base = "http://data.mxnet.io/data/mnist/"

    def read(label_name: str, image_name: str) -> tuple:
        _need([label_name, image_name], base + label_name + " and " + base + image_name, "get_mnist")
        with gzip.open(label_name) as flbl:
            struct.unpack(">II", flbl.read(8))
            label = np.frombuffer(flbl.read(), dtype=np.int8)
        with gzip.open(image_name, "rb") as fimg:
            _, _, rows, cols = struct.unpack(">IIII", fimg.read(16))
            image = np.frombuffer(fimg.read(), dtype=np.uint8).reshape(len(label), rows, cols)
        return label, image.reshape(image.shape[0], 1, 28, 28).astype(np.float32) / 255

    train_lbl, train_img = read("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz")
    test_lbl, test_img = read("t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")
    return {"train_data": train_img, "train_label": train_lbl, "test_data": test_img, "test_label": test_lbl}


def get_mnist_pkl() -> None:
    """Checks for data/mnist.pkl.gz (MXNet's helper downloads it there)."""
    _need(["data/mnist.pkl.gz"], "http://deeplearning.net/data/mnist/mnist.pkl.gz", "get_mnist_pkl")


_UBYTE = ["data/train-images-idx3-ubyte", "data/train-labels-idx1-ubyte", "data/t10k-images-idx3-ubyte",
          "data/t10k-labels-idx1-ubyte"]


def get_mnist_ubyte() -> None:
    """Makes sure the four uncompressed MNIST idx files are in ./data, extracting
    data/mnist.zip when they are not."""
    if all(os.path.exists(p) for p in _UBYTE):
        return
    _need(["data/mnist.zip"], "http://data.mxnet.io/mxnet/data/mnist.zip (or the four idx files)", "get_mnist_ubyte")
    with zipfile.ZipFile("data/mnist.zip") as zf:
        zf.extractall("data")


def get_cifar10() -> None:
    """Makes sure data/cifar/{train,test}.{rec,lst} exist, extracting data/cifar10.zip when not."""
    files = ["data/cifar/train.rec", "data/cifar/test.rec", "data/cifar/train.lst", "data/cifar/test.lst"]
    if all(os.path.exists(p) for p in files):
        return
    _need(["data/cifar10.zip"], "http://data.mxnet.io/mxnet/data/cifar10.zip", "get_cifar10")
    with zipfile.ZipFile("data/cifar10.zip") as zf:
        zf.extractall("data")


def get_mnist_iterator(batch_size: int, input_shape: tuple, num_parts: int = 1, part_index: int = 0) -> tuple:
    """(train, val) MNISTIter over ./data's idx files; flat batches unless input_shape is 3-D."""
    from .io_iters import MNISTIter
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    train = MNISTIter(image="data/train-images-idx3-ubyte", label="data/train-labels-idx1-ubyte",
                      batch_size=batch_size, shuffle=True, flat=flat, num_parts=num_parts, part_index=part_index)
    val = MNISTIter(image="data/t10k-images-idx3-ubyte", label="data/t10k-labels-idx1-ubyte",
                    batch_size=batch_size, flat=flat, num_parts=num_parts, part_index=part_index)
    return train, val
