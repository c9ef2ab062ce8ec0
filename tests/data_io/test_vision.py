"""gluon.data.vision: transforms (hybridizable ones hybridize, errors, shapes) and the
datasets reading MXNet's file formats from local folders (no downloads)."""
from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.gluon.data.vision import CIFAR10, CIFAR100, MNIST, FashionMNIST, ImageFolderDataset
from hybridgraph.gluon.data.vision import ImageRecordDataset, transforms
from hybridgraph.nd.errors import FormatError, MXNetError


def test_compose_groups_hybrid_runs_and_matches_eager():
    img = mx.nd.array(np.random.RandomState(0).randint(0, 255, (20, 30, 3)), dtype="uint8")
    steps = [transforms.Resize((16, 12)), transforms.CropResize(2, 1, 10, 8), transforms.Cast("float32"),
             transforms.ToTensor(), transforms.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))]
    comp = transforms.Compose(list(steps))
    assert len(comp) == 1 and isinstance(comp[0], mx.gluon.nn.HybridSequential)
    out = comp(img)
    eager = img
    for s in steps:
        eager = s(eager)
    assert out.shape == (3, 8, 10)
    np.testing.assert_allclose(out.asnumpy(), eager.asnumpy(), rtol=1e-6)


def test_cropresize_errors_and_batch():
    x = mx.nd.arange(180).reshape((2, 6, 5, 3))
    assert transforms.CropResize(1, 2, 3, 4)(x).shape == (2, 4, 3, 3)
    with pytest.raises(MXNetError):
        transforms.CropResize(0, 0, 100, 50)(x)
    with pytest.raises(MXNetError):
        transforms.CropResize(0, 0, -1, 2)(x)


def test_resize_keep_ratio_and_invalid_size():
    x = mx.nd.zeros((300, 200, 3))
    assert transforms.Resize(150, keep_ratio=True)(x).shape == (225, 150, 3)
    with pytest.raises(MXNetError):
        transforms.Resize((1, 2, 3))(x)


def test_rotate_quarter_turns_and_dtype_check():
    img = mx.nd.array([[[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]])
    assert transforms.Rotate(90.0)(img).asnumpy()[0, 0, 1] == pytest.approx(1.0)
    assert transforms.Rotate(180.0)(img).asnumpy()[0, 1, 0] == pytest.approx(1.0)
    with pytest.raises(TypeError):
        transforms.Rotate(10.0)(mx.nd.ones((3, 4, 4), dtype="uint8"))
    with pytest.raises(ValueError):
        transforms.RandomRotation([10, -10])


def test_random_flips_are_seeded_and_valued():
    x = mx.nd.array(np.arange(24).reshape(2, 4, 3), dtype="uint8")
    mx.random.seed(3)
    a = [transforms.RandomFlipLeftRight()(x).asnumpy() for _ in range(8)]
    mx.random.seed(3)
    b = [transforms.RandomFlipLeftRight()(x).asnumpy() for _ in range(8)]
    assert all((p == q).all() for p, q in zip(a, b))
    flipped = [(o == x.asnumpy()[:, ::-1]).all() for o in a]
    same = [(o == x.asnumpy()).all() for o in a]
    assert all(f or s for f, s in zip(flipped, same)) and any(flipped) and any(same)


def _idx(path, arr):
    arr = np.asarray(arr, dtype=np.uint8)
    head = struct.pack(">I", 0x800 + arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    with gzip.open(path, "wb") as f:
        f.write(head + arr.tobytes())


def test_mnist_reads_idx_files_and_names_missing_ones(tmp_path):
    imgs = np.random.RandomState(0).randint(0, 255, (5, 28, 28))
    _idx(tmp_path / "t10k-images-idx3-ubyte.gz", imgs)
    _idx(tmp_path / "t10k-labels-idx1-ubyte.gz", [3, 1, 4, 1, 5])
    ds = MNIST(root=str(tmp_path), train=False, transform=lambda d, lab: (d.astype("float32") / 255, lab))
    assert len(ds) == 5
    d, lab = ds[2]
    assert d.shape == (28, 28, 1) and lab == 4
    np.testing.assert_allclose(d.asnumpy()[..., 0], imgs[2] / 255, rtol=1e-6)
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte.gz.*not found.*does not download"):
        MNIST(root=str(tmp_path), train=True)
    with pytest.raises(FileNotFoundError, match="fashion-mnist"):
        FashionMNIST(root=str(tmp_path / "none"))
    _idx(tmp_path / "train-images-idx3-ubyte.gz", imgs)
    _idx(tmp_path / "train-labels-idx1-ubyte.gz", [1, 2])
    with pytest.raises(FormatError, match="5 images but"):
        MNIST(root=str(tmp_path))


def test_cifar_binary_batches(tmp_path):
    rs = np.random.RandomState(1)
    img = rs.randint(0, 255, (4, 3, 32, 32)).astype(np.uint8)
    (tmp_path / "test_batch.bin").write_bytes(b"".join(bytes([i]) + img[i].tobytes() for i in range(4)))
    ds = CIFAR10(root=str(tmp_path), train=False)
    assert len(ds) == 4 and ds[3][1] == 3
    np.testing.assert_array_equal(ds[1][0].asnumpy(), img[1].transpose(1, 2, 0))
    (tmp_path / "test.bin").write_bytes(b"".join(bytes([i, 10 + i]) + img[i].tobytes() for i in range(4)))
    assert CIFAR100(root=str(tmp_path), train=False, fine_label=True)[2][1] == 12
    assert CIFAR100(root=str(tmp_path), train=False)[2][1] == 2
    with pytest.raises(FileNotFoundError, match="data_batch_1.bin"):
        CIFAR10(root=str(tmp_path), train=True)


def test_record_and_folder_datasets(tmp_path):
    pil = pytest.importorskip("PIL.Image", reason="image datasets decode with Pillow")
    rs = np.random.RandomState(2)
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "d.idx"), str(tmp_path / "d.rec"), "w")
    imgs = [rs.randint(0, 255, (6, 7, 3)).astype(np.uint8) for _ in range(3)]
    for i, im in enumerate(imgs):
        rec.write_idx(i, mx.recordio.pack_img((0, float(i), i, 0), im[:, :, ::-1], img_fmt=".png"))
    rec.close()
    ds = ImageRecordDataset(str(tmp_path / "d.rec"))
    assert len(ds) == 3
    img, label = ds[1]
    assert label == 1.0
    np.testing.assert_array_equal(img.asnumpy(), imgs[1])  # RGB out
    for cls, im in (("cat", imgs[0]), ("dog", imgs[1])):
        (tmp_path / "f" / cls).mkdir(parents=True)
        pil.fromarray(im).save(tmp_path / "f" / cls / "a.png")
    (tmp_path / "f" / "dog" / "notes.txt").write_text("x")
    with pytest.warns(UserWarning, match="Ignoring"):
        folder = ImageFolderDataset(str(tmp_path / "f"))
    assert folder.synsets == ["cat", "dog"] and len(folder) == 2
    np.testing.assert_array_equal(folder[1][0].asnumpy(), imgs[1])
    assert folder[1][1] == 1
    (tmp_path / "f" / "dog" / "notes.txt").unlink()
    gray, _ = ImageFolderDataset(str(tmp_path / "f"), flag=0)[0]
    assert gray.shape == (6, 7, 1)
