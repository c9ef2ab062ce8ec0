"""`mx.image`'s functions: read, decode, resize, crop and normalize HWC images (NDArrays).

Decoding uses Pillow (see codec.py); resizing is the `_image_resize` operator, which
follows OpenCV's `cv::resize` as MXNet's `imresize` does. Random choices (crop
positions, interpolation 10) use Python's `random` module, as MXNet's do.
"""
from __future__ import annotations

import os
import random
import warnings
from numbers import Number
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.ndarray import NDArray

from . import codec

__all__ = ["imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short", "fixed_crop",
           "random_crop", "center_crop", "color_normalize", "random_size_crop", "imrotate", "random_rotate"]


def imread(filename: str, flag: int = 1, to_rgb: bool = True, out: NDArray | None = None) -> NDArray:
    """Read and decode an image file to an (H, W, 3) uint8 NDArray ((H, W, 1) with flag=0)."""
    try:
        with open(filename, "rb") as f:
            buf = f.read()
    except OSError as e:
        raise MXNetError(f"imread: cannot read image file {filename!r}: {e.strerror}") from e
    return _result(codec.decode(buf, flag, to_rgb, where=f" of {filename!r}"), out)


def imdecode(buf: Any, flag: int = 1, to_rgb: bool = True, out: NDArray | None = None) -> NDArray:
    """Decode an encoded image (bytes, bytearray, numpy or NDArray of uint8) to an HWC uint8 NDArray."""
    if isinstance(buf, NDArray):
        buf = buf.asnumpy().astype(np.uint8)
    elif not isinstance(buf, (bytes, bytearray, np.ndarray)):
        raise ValueError("buf must be of type bytes, bytearray or numpy.ndarray,"
                         "if you would like to input type str, please convert to bytes")
    return _result(codec.decode(buf, flag, to_rgb), out)


def _result(arr: np.ndarray, out: NDArray | None) -> NDArray:
    res = nd.array(arr, dtype=np.uint8)
    if out is None:
        return res
    out[:] = res
    return out


def imresize(src: NDArray, w: int, h: int, interp: int = 1, out: NDArray | None = None) -> NDArray:
    """Resize an HWC image to width `w` and height `h` (OpenCV interpolation codes 0-4, 9, 10)."""
    res = nd.image.resize(src, size=(int(w), int(h)), interp=interp)
    if out is None:
        return res
    out[:] = res
    return out


def scale_down(src_size: tuple, size: tuple) -> tuple:
    """Scale the crop `size` (w, h) down to fit `src_size` (w, h), keeping its aspect ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


_BORDER_MODES = {0: "constant", 1: "symmetric", 2: "reflect", 3: "edge", 4: "wrap"}


def copyMakeBorder(src: NDArray, top: int, bot: int, left: int, right: int, type: int = 0,
                   value: float = 0.0, values: tuple = (), out: NDArray | None = None) -> NDArray:
    """Pad an HWC image's border (OpenCV border types 0 constant, 1 reflect, 2 reflect-101,
    3 replicate, 4 wrap); constant fills with `values` per channel, else `value`."""
    if type not in _BORDER_MODES:
        raise MXNetError(f"copyMakeBorder: unknown border type {type} (expected 0-4)")
    x = src.asnumpy()
    pad = ((top, bot), (left, right), (0, 0))
    if type == 0:
        fill = np.broadcast_to(np.asarray(values if values else [value], dtype=np.float64)[:x.shape[2]],
                               (x.shape[2],)) if len(values) in (0, 1, x.shape[2]) else None
        if fill is None:
            raise MXNetError(f"copyMakeBorder: values needs 1 or {x.shape[2]} entries, got {values}")
        res = np.empty((x.shape[0] + top + bot, x.shape[1] + left + right, x.shape[2]), dtype=x.dtype)
        res[...] = fill.astype(x.dtype)
        res[top:top + x.shape[0], left:left + x.shape[1]] = x
    else:
        res = np.pad(x, pad, mode=_BORDER_MODES[type])
    return _into(nd.array(res, dtype=x.dtype), out)


def _into(res: NDArray, out: NDArray | None) -> NDArray:
    if out is None:
        return res
    out[:] = res
    return out


def _get_interp_method(interp: int, sizes: tuple = ()) -> int:
    """Resolve interpolation 9 (auto by sizes (oh, ow, nh, nw)) and 10 (random) to 0-4."""
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f"Unknown interp method {interp}")
    return interp


def resize_short(src: NDArray, size: int, interp: int = 2) -> NDArray:
    """Resize so the shorter edge is `size`, keeping the aspect ratio."""
    h, w, _ = src.shape
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src: NDArray, x0: int, y0: int, w: int, h: int, size: tuple | None = None,
               interp: int = 2) -> NDArray:
    """Crop the (w, h) window at (x0, y0), then resize it to `size` (w, h) when given."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        out = imresize(out, *size, interp=_get_interp_method(interp, (h, w, size[1], size[0])))
    return out


def random_crop(src: NDArray, size: tuple, interp: int = 2) -> tuple:
    """A random `size` (w, h) crop (upsampled when the image is smaller); returns (image, (x, y, w, h))."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src: NDArray, size: tuple, interp: int = 2) -> tuple:
    """The centred `size` (w, h) crop (upsampled when the image is smaller); returns (image, (x, y, w, h))."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src: NDArray, mean: Any, std: Any = None) -> NDArray:
    """(src - mean) / std, in place on `src` (as MXNet's)."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src: NDArray, size: tuple, area: Any, ratio: tuple, interp: int = 2, **kwargs: Any) -> tuple:
    """A crop of random area fraction in `area` and aspect ratio in `ratio`, resized to `size`
    (a centre crop after 10 failed tries); returns (image, (x, y, w, h))."""
    h, w, _ = src.shape
    src_area = h * w
    if "min_area" in kwargs:
        warnings.warn("`min_area` is deprecated. Please use `area` instead.", DeprecationWarning, stacklevel=2)
        area = kwargs.pop("min_area")
    if kwargs:
        raise TypeError(f"unexpected keyword arguments for `random_size_crop`: {sorted(kwargs)}")
    if isinstance(area, Number):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * src_area
        new_ratio = np.exp(random.uniform(np.log(ratio[0]), np.log(ratio[1])))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def _bilinear_sample(img: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """Sample NCHW `img` at normalised coordinates in [-1, 1] (zeros outside), as BilinearSampler."""
    n, c, h, w = img.shape
    x = (gx + 1) * (w - 1) / 2
    y = (gy + 1) * (h - 1) / 2
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    out = np.zeros((n, c) + gx.shape[1:], dtype=np.float64)
    for dy in (0, 1):
        for dx in (0, 1):
            xi, yi = x0 + dx, y0 + dy
            wt = (1 - np.abs(x - xi)) * (1 - np.abs(y - yi))
            ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            for b in range(n):
                vals = img[b][:, np.clip(yi[b], 0, h - 1), np.clip(xi[b], 0, w - 1)]
                out[b] += vals * (wt[b] * ok[b])
    return out.astype(img.dtype)


def imrotate(src: NDArray, rotation_degrees: Any, zoom_in: bool = False, zoom_out: bool = False) -> NDArray:
    """Rotate float32 CHW image(s) (or NCHW with one angle per image) by degrees, bilinear,
    zero fill; zoom_in crops to no padding, zoom_out keeps the whole image."""
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if src.dtype != np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    expanded = src.ndim == 3
    if expanded:
        if not isinstance(rotation_degrees, Number):
            raise TypeError("When a single image is passed the rotation angle is required to be a scalar.")
        src = src.expand_dims(axis=0)
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    n, _, h, w = src.shape
    deg = np.full(n, float(rotation_degrees)) if isinstance(rotation_degrees, Number) else \
        np.asarray(rotation_degrees.asnumpy() if isinstance(rotation_degrees, NDArray) else rotation_degrees,
                   dtype=np.float64).reshape(-1)
    if len(deg) != n:
        raise ValueError("The number of images must be equal to the number of rotation angles")
    rad = (np.pi * deg / 180.0)[:, None, None]
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    hm = np.repeat(np.arange(h, dtype=np.float64).reshape(h, 1), w, axis=1)[None] - hs
    wm = np.repeat(np.arange(w, dtype=np.float64).reshape(1, w), h, axis=0)[None] - ws
    c, s = np.cos(rad), np.sin(rad)
    gx = (wm * c - hm * s) / ws
    gy = (wm * s + hm * c) / hs
    if zoom_in or zoom_out:
        rho = np.sqrt(h * h + w * w)
        ang = np.arctan(h / w)
        a = np.abs(rad)
        max_x = np.maximum(np.abs(rho * np.cos(ang + a)), np.abs(rho * np.cos(ang - a)))
        max_y = np.maximum(np.abs(rho * np.sin(ang + a)), np.abs(rho * np.sin(ang - a)))
        scale = np.maximum(max_x / w, max_y / h) if zoom_out else np.minimum(w / max_x, h / max_y)
        gx, gy = gx * scale, gy * scale
    out = nd.array(_bilinear_sample(src.asnumpy(), gx, gy), dtype=np.float32)
    return out[0] if expanded else out


def random_rotate(src: NDArray, angle_limits: tuple, zoom_in: bool = False, zoom_out: bool = False) -> NDArray:
    """Rotate by an angle drawn uniformly from `angle_limits` (one per image for NCHW)."""
    if src.ndim == 3:
        deg = np.random.uniform(*angle_limits)
    else:
        deg = nd.array(np.random.uniform(*angle_limits, size=src.shape[0]))
    return imrotate(src, deg, zoom_in=zoom_in, zoom_out=zoom_out)


def _read_bytes(path_root: str | None, fname: str) -> bytes:
    path = os.path.join(path_root, fname) if path_root else fname
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise MXNetError(f"cannot read image file {path!r}: {e.strerror}") from e


def resized_array(img: np.ndarray, short: int | None = None, size: tuple | None = None, interp: int = 1) -> np.ndarray:
    """Resize an HWC numpy image: its shorter edge to `short`, or to `size` (w, h)."""
    if short is not None:
        h, w = img.shape[:2]
        size = (short, short * h // w) if h > w else (short * w // h, short)
    return nd.image.resize(nd.array(img, dtype=img.dtype), size=tuple(size), interp=interp).asnumpy()
