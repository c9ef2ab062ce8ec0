"""`mx.io.ImageRecordIter`: batches of images from a .rec file (MXNet's C++ iterator,
here in Python on Pillow + the `_image_*` operators).

Per image: decode (RGB), resize the shorter edge to `resize` (when > 0), crop
`data_shape` (random position with rand_crop, else centred; an image smaller than
the crop is first resized up to cover it), colour jitter (brightness, contrast,
saturation, pca_noise), then ``(pixel - mean) * scale / std`` per channel (mean from
mean_r/g/b or the `mean_img` file, which is computed over the data and saved when
absent, as MXNet does), mirrored with rand_mirror/mirror. The affine augmentations of
MXNet's default augmenter (max_rotate_angle, max_aspect_ratio, max_shear_ratio,
random scales, random_h/s/l) raise NotImplementedError when set.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from hybridgraph import nd, recordio
from hybridgraph.nd.errors import MXNetError

from .image import codec
from .image.image import resized_array
from .io_iters import _BatchLoader

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter", "ImageRecordInt8Iter"]

_UNSUPPORTED = ("max_rotate_angle", "max_aspect_ratio", "max_shear_ratio", "max_random_scale", "min_random_scale",
                "random_h", "random_s", "random_l", "rotate", "max_crop_size", "min_crop_size", "random_resized_crop",
                "max_random_area", "min_random_area", "max_img_size", "min_img_size", "pad",
                "max_random_illumination", "max_random_contrast", "path_imglist")
_NEUTRAL = {"max_random_scale": 1.0, "min_random_scale": 1.0, "rotate": -1, "max_crop_size": -1,
            "min_crop_size": -1, "random_resized_crop": False, "max_random_area": 1.0, "min_random_area": 1.0,
            "max_img_size": 1e10, "min_img_size": 0.0, "path_imglist": ""}
# performance knobs and parameters with no effect on 3-channel output
_IGNORED = ("preprocess_threads", "prefetch_buffer", "ctx", "verbose", "shuffle_chunk_size", "shuffle_chunk_seed",
            "seed_aug", "device_id", "fill_value", "mean_a", "std_a")


class ImageRecordIter(_BatchLoader):
    """Images and labels from `path_imgrec` (MXNet's image .rec files, written by im2rec or
    `recordio.pack_img`), as (batch, C, H, W) float32 and (batch,) / (batch, label_width) labels."""

    _out_dtype: Any = np.float32
    # MXNet zeroes the padding rows of a round_batch=False last batch; it also reports pad=0
    # there, which is wrong (the rows are not data): hybridgraph reports the real count
    _zero_padding = True

    def __init__(self, path_imgrec: str, data_shape: tuple, batch_size: int, label_width: int = 1,
                 path_imgidx: str = "", shuffle: bool = False, seed: int = 0, round_batch: bool = True,
                 resize: int = -1, rand_crop: bool = False, rand_mirror: bool = False, mirror: bool = False,
                 mean_img: str = "", mean_r: float = 0.0, mean_g: float = 0.0, mean_b: float = 0.0,
                 std_r: float = 1.0, std_g: float = 1.0, std_b: float = 1.0, scale: float = 1.0,
                 brightness: float = 0.0, contrast: float = 0.0, saturation: float = 0.0, pca_noise: float = 0.0,
                 num_parts: int = 1, part_index: int = 0, inter_method: int = 1, data_name: str = "data",
                 label_name: str = "softmax_label", dtype: str | None = None, **kwargs: Any):
        for k in list(kwargs):
            if k in _UNSUPPORTED:
                v = kwargs.pop(k)
                if v not in (0, 0.0, None, _NEUTRAL.get(k, 0)):
                    raise NotImplementedError(
                        f"ImageRecordIter({k}={v!r}): MXNet's affine/HSL augmentations, border padding and "
                        f"labels from an image list are not supported by "
                        f"hybridgraph; use mx.image.ImageIter(path_imgrec=...) or gluon's ImageRecordDataset with "
                        f"mx.gluon.data.vision.transforms (RandomResizedCrop, RandomRotation, RandomHue)")
            elif k in _IGNORED:
                kwargs.pop(k)
        if kwargs:
            raise TypeError(f"ImageRecordIter got unknown parameters {sorted(kwargs)}")
        if len(data_shape) != 3 or data_shape[0] not in (1, 3):
            raise MXNetError(f"ImageRecordIter: data_shape must be (channels 1 or 3, height, width), got {data_shape}")
        if not os.path.isfile(path_imgrec):
            raise MXNetError(f"ImageRecordIter: path_imgrec {path_imgrec!r} does not exist")
        self._rec = recordio.MXRecordIO(path_imgrec, "r")
        self._records = []
        while (r := self._rec.read()) is not None:
            self._records.append(r)
        self._rec.close()
        if not 0 <= part_index < num_parts:
            raise MXNetError(f"ImageRecordIter: need 0 <= part_index < num_parts, got {part_index}, {num_parts}")
        n = len(self._records)
        self._records = self._records[n * part_index // num_parts: n * (part_index + 1) // num_parts]
        self._shape = tuple(int(d) for d in data_shape)
        self._label_width = label_width
        self._shuffle = shuffle
        self._rng = np.random.default_rng(seed)
        self._order = np.arange(len(self._records))
        self._aug = dict(resize=resize, inter=inter_method, rand_crop=rand_crop, rand_mirror=rand_mirror, mirror=mirror,
                         brightness=brightness, contrast=contrast, saturation=saturation, pca_noise=pca_noise)
        self._mean = np.array([mean_r, mean_g, mean_b], np.float32)[:self._shape[0]].reshape(-1, 1, 1)
        self._std = np.array([std_r, std_g, std_b], np.float32)[:self._shape[0]].reshape(-1, 1, 1)
        self._scale = np.float32(scale)
        lshape = (label_width,) if label_width > 1 else ()
        out = np.dtype(dtype) if dtype else np.dtype(self._out_dtype)
        super().__init__(batch_size, self._shape, lshape, round_batch, out, data_name, label_name)
        self._mean_img = self._load_mean(mean_img) if mean_img else None
        self._epoch_start()

    def _epoch_start(self) -> None:
        if self._shuffle:
            self._order = self._rng.permutation(len(self._records))

    def _num_samples(self) -> int:
        return len(self._records)

    def _decode(self, i: int) -> tuple:
        header, buf = recordio.unpack(self._records[self._order[i]])
        img = codec.decode(buf, flag=0 if self._shape[0] == 1 else 1, where=f" of record {self._order[i]}")
        label = np.asarray(header.label, np.float32).reshape(-1)
        if self._label_width > 1 and label.size < self._label_width:
            raise MXNetError(f"ImageRecordIter: record {self._order[i]} has {label.size} labels, label_width is "
                             f"{self._label_width}")
        return img, label[:self._label_width] if self._label_width > 1 else label[0]

    def _crop(self, img: np.ndarray, random_pos: bool) -> np.ndarray:
        _, h, w = self._shape
        a = self._aug
        if a["resize"] > 0:
            img = resized_array(img, short=a["resize"], interp=a["inter"])
        ih, iw = img.shape[:2]
        if ih < h or iw < w:  # cover the crop, keeping the aspect ratio
            f = max(h / ih, w / iw)
            img = resized_array(img, size=(max(w, round(iw * f)), max(h, round(ih * f))), interp=a["inter"])
            ih, iw = img.shape[:2]
        if random_pos:
            y, x = int(self._rng.integers(0, ih - h + 1)), int(self._rng.integers(0, iw - w + 1))
        else:
            y, x = (ih - h) // 2, (iw - w) // 2
        return img[y:y + h, x:x + w]

    def _augment(self, img: np.ndarray) -> np.ndarray:
        a = self._aug
        img = self._crop(img, a["rand_crop"])
        x = nd.array(img, dtype=np.uint8)
        if a["brightness"] or a["contrast"] or a["saturation"]:
            x = nd.image.random_color_jitter(x, brightness=a["brightness"], contrast=a["contrast"],
                                             saturation=a["saturation"], hue=0.0)
        if a["pca_noise"] > 0:
            x = nd.image.random_lighting(x, alpha_std=a["pca_noise"])
        return x.asnumpy().astype(np.float32).transpose(2, 0, 1)

    def _sample(self, i: int) -> tuple:
        img, label = self._decode(i)
        chw = self._augment(img)
        mean = self._mean_img if self._mean_img is not None else self._mean
        out = (chw - mean) * self._scale / self._std
        if self._aug["mirror"] or (self._aug["rand_mirror"] and self._rng.random() < 0.5):
            out = out[:, :, ::-1]
        return out, label

    def _load_mean(self, path: str) -> np.ndarray:
        """The mean image from `path` (nd.save format, key 'mean_img'), computed and saved when absent."""
        if os.path.isfile(path):
            saved = nd.load(path)
            arr = saved["mean_img"] if isinstance(saved, dict) else saved[0]
            if tuple(arr.shape) != self._shape:
                raise MXNetError(f"ImageRecordIter: mean_img {path!r} has shape {arr.shape}, data_shape is "
                                 f"{self._shape}")
            return arr.asnumpy()
        total = np.zeros(self._shape, np.float64)
        for i in range(len(self._records)):
            img, _ = self._decode(i)
            total += self._crop(img, False).astype(np.float64).transpose(2, 0, 1)
        mean = (total / max(len(self._records), 1)).astype(np.float32)
        nd.save(path, {"mean_img": nd.array(mean)})
        return mean


class ImageRecordUInt8Iter(ImageRecordIter):
    """ImageRecordIter returning uint8 pixels (no mean/std normalisation expected)."""

    _out_dtype = np.uint8


class ImageRecordInt8Iter(ImageRecordIter):
    """ImageRecordIter returning int8 pixels."""

    _out_dtype = np.int8
