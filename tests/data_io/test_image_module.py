"""mx.image on Pillow: decoding (flags, channel order, errors), the crop/resize helpers,
augmenters and ImageIter's last_batch_handle modes."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.nd.errors import MXNetError

Image = pytest.importorskip("PIL.Image", reason="mx.image decodes with Pillow")


def _png(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def test_imdecode_flags_order_and_errors(tmp_path):
    rgb = np.random.RandomState(0).randint(0, 255, (5, 6, 3)).astype(np.uint8)
    data = _png(rgb)
    np.testing.assert_array_equal(mx.image.imdecode(data).asnumpy(), rgb)
    np.testing.assert_array_equal(mx.image.imdecode(bytearray(data), to_rgb=0).asnumpy(), rgb[:, :, ::-1])
    assert mx.image.imdecode(np.frombuffer(data, np.uint8), flag=0).shape == (5, 6, 1)
    with pytest.raises(MXNetError, match="empty"):
        mx.image.imdecode(b"")
    with pytest.raises(MXNetError, match="cannot decode"):
        mx.image.imdecode(b"not an image at all")
    with pytest.raises(ValueError, match="bytes"):
        mx.image.imdecode("a string")
    (tmp_path / "x.png").write_bytes(data)
    np.testing.assert_array_equal(mx.img.image.imread(str(tmp_path / "x.png")).asnumpy(), rgb)
    with pytest.raises(MXNetError, match="cannot read"):
        mx.image.imread(str(tmp_path / "missing.jpg"))


def test_crop_and_resize_helpers():
    img = mx.nd.array(np.arange(20 * 30 * 3).reshape(20, 30, 3) % 255, dtype="uint8")
    assert mx.image.resize_short(img, 10).shape == (10, 15, 3)
    out, box = mx.image.center_crop(img, (10, 8))
    assert out.shape == (8, 10, 3) and box == (10, 6, 10, 8)
    np.testing.assert_array_equal(out.asnumpy(), img.asnumpy()[6:14, 10:20])
    big, box = mx.image.center_crop(img, (60, 40))  # larger than the image: scaled down, then resized up
    assert big.shape == (40, 60, 3) and box == (0, 0, 30, 20)
    assert mx.image.scale_down((640, 480), (720, 120)) == (640, 106)
    out, (x, y, w, h) = mx.image.random_crop(img, (7, 5))
    np.testing.assert_array_equal(out.asnumpy(), img.asnumpy()[y:y + 5, x:x + 7])
    padded = mx.image.copyMakeBorder(img, 1, 2, 3, 4, type=0, values=(9, 8, 7))
    assert padded.shape == (23, 37, 3) and padded.asnumpy()[0, 0].tolist() == [9, 8, 7]
    norm = mx.image.color_normalize(img.astype("float32"), mx.nd.array([1.0, 2.0, 3.0]), mx.nd.array([2.0] * 3))
    np.testing.assert_allclose(norm.asnumpy(), (img.asnumpy() - [1, 2, 3]) / 2.0, rtol=1e-6)


def test_augmenters_dump_and_apply():
    augs = mx.image.CreateAugmenter((3, 8, 8), resize=10, rand_crop=True, rand_mirror=True, mean=True, std=True,
                                    brightness=0.1, contrast=0.1, saturation=0.1, hue=0.1, pca_noise=0.1,
                                    rand_gray=0.2)
    names = [json.loads(a.dumps())[0] if isinstance(a.dumps(), str) else a.dumps()[0] for a in augs]
    assert names[:4] == ["resizeaug", "randomcropaug", "horizontalflipaug", "castaug"]
    assert names[-1] == "colornormalizeaug"
    x = mx.nd.array(np.random.RandomState(1).randint(0, 255, (12, 16, 3)), dtype="uint8")
    for a in augs:
        x = a(x)
    assert x.shape == (8, 8, 3) and x.dtype == np.float32


def _image_list(tmp_path, n=7):
    rs = np.random.RandomState(2)
    items = []
    for i in range(n):
        (tmp_path / f"{i}.png").write_bytes(_png(rs.randint(0, 255, (9, 9, 3)).astype(np.uint8)))
        items.append([float(i), f"{i}.png"])
    return items


@pytest.mark.parametrize("mode,count,last_pad", [("pad", 3, 2), ("discard", 2, 0), ("roll_over", 2, 0)])
def test_image_iter_last_batch_modes(tmp_path, mode, count, last_pad):
    items = _image_list(tmp_path)
    it = mx.image.ImageIter(3, (3, 8, 8), imglist=items, path_root=str(tmp_path), last_batch_handle=mode)
    batches = list(it)
    assert len(batches) == count and batches[-1].pad == last_pad
    labels = [b.label[0].asnumpy().tolist() for b in batches]
    assert labels[0] == [0.0, 1.0, 2.0]
    if mode == "pad":
        assert labels[-1] == [6.0, 0.0, 1.0]
    if mode == "roll_over":  # the 1 left-over image starts the next epoch
        it.reset()
        first = it.next()
        assert first.label[0].asnumpy().tolist() == [6.0, 0.0, 1.0] and first.pad == 2
