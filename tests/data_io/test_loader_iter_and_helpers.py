"""mx.contrib.io.DataLoaderIter (padding of a kept last batch, reset) and the
test_utils dataset helpers reading local files (clear errors when absent)."""
from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import test_utils


def test_dataloader_iter_pads_and_resets():
    ds = mx.gluon.data.ArrayDataset(np.arange(20.0).reshape(10, 2), np.arange(10.0))
    it = mx.contrib.io.DataLoaderIter(mx.gluon.data.DataLoader(ds, batch_size=4, last_batch="keep"))
    assert it.provide_data[0].shape == (4, 2) and it.provide_label[0].name == "softmax_label"
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 2]
    assert batches[-1].data[0].shape == (4, 2)
    np.testing.assert_array_equal(batches[-1].label[0].asnumpy()[:2], [8.0, 9.0])
    it.reset()
    assert len(list(it)) == 3
    discard = mx.contrib.io.DataLoaderIter(mx.gluon.data.DataLoader(ds, batch_size=3, last_batch="discard"))
    assert len(list(discard)) == 3


def _gz_idx(path, arr):
    arr = np.asarray(arr, np.uint8)
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I", 0x800 + arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape) + arr.tobytes())


def test_get_mnist_reads_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def offline(url, verify_ssl):  # the tests never reach the network
        raise OSError("no network in tests")
    monkeypatch.setattr("hybridgraph.gluon.utils._fetch", offline)
    with pytest.raises(OSError, match="data.mxnet.io.*place it at"):
        test_utils.get_mnist()
    imgs = np.random.RandomState(0).randint(0, 255, (3, 28, 28))
    for split in ("train", "t10k"):
        _gz_idx(f"{split}-images-idx3-ubyte.gz", imgs)
        _gz_idx(f"{split}-labels-idx1-ubyte.gz", [7, 8, 9])
    got = test_utils.get_mnist()
    assert got["train_data"].shape == (3, 1, 28, 28) and got["test_label"].tolist() == [7, 8, 9]
    np.testing.assert_allclose(got["train_data"][1, 0], imgs[1] / 255, rtol=1e-6)
    with pytest.raises(OSError, match="cifar10.zip"):
        test_utils.get_cifar10()


def test_get_mnist_iterator_from_data_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    imgs = np.random.RandomState(1).randint(0, 255, (8, 28, 28)).astype(np.uint8)
    for split in ("train", "t10k"):
        (tmp_path / "data" / f"{split}-images-idx3-ubyte").write_bytes(
            struct.pack(">IIII", 0x803, 8, 28, 28) + imgs.tobytes())
        (tmp_path / "data" / f"{split}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 0x801, 8) + bytes(8))
    train, val = test_utils.get_mnist_iterator(4, (784,))
    assert train.next().data[0].shape == (4, 784)
    assert val.next().data[0].shape == (4, 784)
    train3, _ = test_utils.get_mnist_iterator(4, (1, 28, 28))
    assert train3.next().data[0].shape == (4, 1, 28, 28)
