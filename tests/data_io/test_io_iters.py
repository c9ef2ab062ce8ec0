"""mx.io file iterators: ImageRecordIter against MXNet 1.9.1's batches
(tests/data/gen_image_record_ref.py), CSVIter's round_batch semantics (as measured on
MXNet: a wrapped last batch, and the next epoch continuing after the wrapped rows),
MNISTIter on idx files, LibSVMIter's clear refusal."""
from __future__ import annotations

import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.nd.errors import FormatError, MXNetError

REF = Path(__file__).resolve().parents[1] / "data" / "data_io_ref"
pytest.importorskip("PIL", reason="ImageRecordIter decodes with Pillow")


def test_image_record_iter_matches_mxnet(tmp_path):
    want = np.load(REF / "imgrec_expected.npz")
    rec = str(REF / "imgrec.rec")
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 9), batch_size=3, mean_r=10, mean_g=20,
                               mean_b=30, std_r=2, std_g=3, std_b=4, scale=0.5)
    got = list(it)
    assert len(got) == 3
    for k, b in enumerate(got):
        np.testing.assert_allclose(b.data[0].asnumpy(), want[f"b{k}"], atol=1e-4)
        np.testing.assert_array_equal(b.label[0].asnumpy(), want[f"l{k}"])
        assert b.pad == int(want[f"p{k}"])
    assert got[-1].pad == 2  # 7 images, batches of 3: two wrapped from the start
    it.reset()
    np.testing.assert_array_equal(it.next().label[0].asnumpy(), want["again"])
    mean = tmp_path / "mean.bin"
    shutil.copy(REF / "imgrec_mean.bin", mean)  # MXNet wrote it
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 9), batch_size=4, mean_img=str(mean),
                               round_batch=False)
    batches = list(it)
    for k, b in enumerate(batches):
        np.testing.assert_allclose(b.data[0].asnumpy(), want[f"m{k}"], atol=1e-4)
    assert batches[-1].pad == 1  # MXNet reports 0 for this zero-filled row; the row is padding
    resized = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 9), batch_size=7, resize=11).next()
    np.testing.assert_array_equal(resized.data[0].asnumpy(), want["resized"])  # OpenCV-exact bilinear
    fresh = tmp_path / "computed.bin"
    mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 9), batch_size=4, mean_img=str(fresh))
    np.testing.assert_allclose(mx.nd.load(str(fresh))["mean_img"].asnumpy(),
                               mx.nd.load(str(mean))["mean_img"].asnumpy(), atol=1e-3)


def test_image_iter_over_rec_matches_mxnet():
    want = np.load(REF / "imgrec_expected.npz")
    it = mx.image.ImageIter(3, (3, 8, 9), path_imgrec=str(REF / "imgrec.rec"), path_imgidx=str(REF / "imgrec.idx"),
                            mean=True, std=True, last_batch_handle="pad")
    batches = list(it)
    assert len(batches) == 3 and batches[-1].pad == 2
    for k, b in enumerate(batches):
        np.testing.assert_allclose(b.data[0].asnumpy(), want[f"imageiter{k}"], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(b.label[0].asnumpy(), want[f"imageiter_label{k}"])


def test_image_record_iter_refuses_affine_augmentation_clearly():
    with pytest.raises(NotImplementedError, match="max_rotate_angle.*ImageIter"):
        mx.io.ImageRecordIter(path_imgrec=str(REF / "imgrec.rec"), data_shape=(3, 8, 9), batch_size=2,
                              max_rotate_angle=10)
    with pytest.raises(MXNetError, match="does not exist"):
        mx.io.ImageRecordIter(path_imgrec="/nonexistent.rec", data_shape=(3, 8, 9), batch_size=2)


def _csv(tmp_path, rows, label=True):
    d, lab = tmp_path / "d.csv", tmp_path / "l.csv"
    d.write_text("".join(",".join(["2"] * 4) + "\n" for _ in range(rows)))
    lab.write_text("".join(f"{i}\n" for i in range(rows)))
    return str(d), str(lab) if label else "NULL"


def test_csv_iter_round_batch_continues_next_epoch(tmp_path):
    d, lab = _csv(tmp_path, 25)
    it = mx.io.CSVIter(data_csv=d, data_shape=(2, 2), label_csv=lab, batch_size=10, dtype="int32")
    first = [(b.pad, b.label[0].asnumpy()[[0, -1]].tolist()) for b in it]
    assert first == [(0, [0, 9]), (0, [10, 19]), (5, [20, 4])]
    assert it.provide_label[0].dtype == np.int32 and it.getdata().dtype == np.int32
    it.reset()
    assert [b.label[0].asnumpy()[[0, -1]].tolist() for b in it] == [[5, 14], [15, 24]]
    it = mx.io.CSVIter(data_csv=d, data_shape=(2, 2), label_csv=lab, batch_size=10, round_batch=False)
    last = list(it)[-1]
    assert last.pad == 5 and last.label[0].asnumpy()[4] == 24


def test_csv_iter_errors(tmp_path):
    d, _ = _csv(tmp_path, 5, label=False)
    with pytest.raises(FormatError, match="prod"):
        mx.io.CSVIter(data_csv=d, data_shape=(3,), batch_size=2)
    assert mx.io.CSVIter(data_csv=d, data_shape=(4,), batch_size=2).next().label[0].shape == (2,)


def test_mnist_iter(tmp_path):
    rs = np.random.RandomState(0)
    imgs = rs.randint(0, 255, (10, 28, 28)).astype(np.uint8)
    (tmp_path / "img").write_bytes(struct.pack(">IIII", 0x803, 10, 28, 28) + imgs.tobytes())
    (tmp_path / "lab").write_bytes(struct.pack(">II", 0x801, 10) + bytes(range(10)))
    it = mx.io.MNISTIter(image=str(tmp_path / "img"), label=str(tmp_path / "lab"), batch_size=4, shuffle=False)
    batches = list(it)
    assert len(batches) == 2  # full batches only
    np.testing.assert_allclose(batches[0].data[0].asnumpy()[1, 0], imgs[1] / 256.0, rtol=1e-6)
    flat = mx.io.MNISTIter(image=str(tmp_path / "img"), label=str(tmp_path / "lab"), batch_size=5, flat=True)
    b = flat.next()
    assert b.data[0].shape == (5, 784) and sorted(flat.next().label[0].asnumpy().tolist() +
                                                  b.label[0].asnumpy().tolist()) == list(range(10))
    with pytest.raises(MXNetError, match="does not download"):
        mx.io.MNISTIter(image=str(tmp_path / "none"), label=str(tmp_path / "lab"))


def test_libsvm_iter_says_why_and_what_to_use():
    with pytest.raises(NotImplementedError, match="sparse.*NDArrayIter"):
        mx.io.LibSVMIter(data_libsvm="x.t", data_shape=(3,), batch_size=2)
