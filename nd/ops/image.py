"""Image operators (MXNet 1.9.1's src/operator/image/): `_image_*` (also `nd.image.X`).

Images are HWC (or NHWC) arrays as decoded; `_image_to_tensor` makes CHW float32 in
[0, 1] and `_image_normalize` works on that layout. Resizing follows OpenCV's
`cv::resize` (MXNet calls it): half-pixel centres, replicated borders, cubic with
A = -0.75, area averaging when shrinking; integer images are rounded and saturated.
The colour kernels follow MXNet's C++ loops, including its saturation kernel, which
takes the grey value from the blue channel only (`gray = x * coef` in a loop that
overwrites) — kept so augmented data matches MXNet's.
"""
from __future__ import annotations

import numpy as np

from .. import rng
from ..attrs import Attr, Attrs
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import ZERO_GRAD, register

_GRAY = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def _saturate(xp, val, dtype):
    """float -> dtype as OpenCV's saturate_cast: integers rounded and clipped to their range."""
    dtype = np.dtype(dtype)
    if dtype.kind in "ui":
        info = np.iinfo(dtype)
        return xp.clip(xp.rint(val), info.min, info.max).astype(dtype)
    return val.astype(dtype, copy=False)


def _color_cast(xp, val, dtype):
    """float -> dtype as the colour kernels' saturate_cast: uint8 clipped to [0, 255] then
    truncated, every other dtype a plain C cast."""
    if np.dtype(dtype) == np.uint8:
        val = xp.clip(val, 0.0, 255.0)
    return val.astype(dtype)


# ---------------------------------------------------------------------------
# to_tensor / normalize

def _to_tensor_shape(a: Attrs, shp):
    if shp is None:
        return None
    if len(shp) not in (3, 4):
        raise ShapeError(f"operator _image_to_tensor: Input image must have shape (height, width, channels), "
                         f"or (N, height, width, channels) but got {tuple(shp)}")
    out = (shp[2], shp[0], shp[1]) if len(shp) == 3 else (shp[0], shp[3], shp[1], shp[2])
    return [tuple(shp)], [out]


@register("_image_to_tensor", aliases=("_npx__image_to_tensor",), infer_shape=_to_tensor_shape,
          infer_type=lambda a, t: ([t], [np.dtype(np.float32)]), gradient=ZERO_GRAD, hint="to_tensor")
def to_tensor(xp, a: Attrs, data):
    """(H, W, C) or (N, H, W, C) in [0, 255] -> (C, H, W) / (N, C, H, W) float32 in [0, 1]."""
    _to_tensor_shape(a, data.shape)
    axes = (2, 0, 1) if data.ndim == 3 else (0, 3, 1, 2)
    return (xp.ascontiguousarray(xp.transpose(data, axes)).astype(np.float32) / np.float32(255.0),)


NORMALIZE_ATTRS = {
    "mean": Attr("floats", (0.0, 0.0, 0.0, 0.0), "Sequence of means for each channel. Default value is 0."),
    "std": Attr("floats", (1.0, 1.0, 1.0, 1.0), "Sequence of standard deviations for each channel. "
                                               "Default value is 1."),
}


def _norm_params(a: Attrs, shp) -> tuple:
    op = "_image_normalize"
    if len(shp) not in (3, 4):
        raise ShapeError(f"operator {op}: Input tensor must have shape (channels, height, width), or "
                         f"(N, channels, height, width), but got {tuple(shp)}")
    c = shp[0] if len(shp) == 3 else shp[1]
    if c not in (1, 3):
        raise ShapeError(f"operator {op}: The {'first' if len(shp) == 3 else 'second'} dimension of input tensor "
                         f"must be the channel dimension with either 1 or 3 elements, but got input with shape "
                         f"{tuple(shp)}")
    for name in ("mean", "std"):
        v = tuple(getattr(a, name))
        if len(v) not in (1, c):
            raise AttrError(f"operator {op}: Invalid {name} for input with shape {tuple(shp)}. {name} must have "
                            f"either 1 or {c} elements, but got {v}")
    return c


def _norm_shape(a: Attrs, shp):
    if shp is None:
        return None
    _norm_params(a, shp)
    return [tuple(shp)], [tuple(shp)]


def _bcast(xp, values, c, ndim, dtype):
    v = np.broadcast_to(np.asarray(values, dtype=np.float32), (c,))
    return xp.asarray(v.reshape((c, 1, 1) if ndim == 3 else (1, c, 1, 1))).astype(dtype)


@register("_image_normalize", aliases=("_npx__image_normalize",), attrs=dict(NORMALIZE_ATTRS),
          infer_shape=_norm_shape, hint="normalize")
def normalize(xp, a: Attrs, data):
    """(x - mean) / std per channel of a (C, H, W) or (N, C, H, W) tensor."""
    c = _norm_params(a, data.shape)
    mean = _bcast(xp, a.mean, c, data.ndim, data.dtype)
    std = _bcast(xp, a.std, c, data.ndim, data.dtype)
    return ((data - mean) / std,)


@normalize.def_gradient
def _normalize_gradient(F, a, inputs, outputs, ograds):
    return [F._backward_image_normalize(ograds[0], mean=a.mean, std=a.std)]


@register("_backward_image_normalize", inputs=("ograd",), attrs=dict(NORMALIZE_ATTRS), infer_shape=_norm_shape)
def _backward_normalize(xp, a: Attrs, ograd):
    """The head gradient divided by std per channel."""
    c = _norm_params(a, ograd.shape)
    return (ograd / _bcast(xp, a.std, c, ograd.ndim, ograd.dtype),)


# ---------------------------------------------------------------------------
# resize (OpenCV's cv::resize as separable weight matrices)

def _cubic(x: np.ndarray, A: float = -0.75) -> np.ndarray:
    x = np.abs(x)
    return np.where(x <= 1, ((A + 2) * x - (A + 3)) * x * x + 1,
                    np.where(x < 2, ((A * x - 5 * A) * x + 8 * A) * x - 4 * A, 0.0))


def _lanczos(x: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) < 4, np.sinc(x) * np.sinc(x / 4), 0.0)


def _taps(src_n: int, dst_n: int, ntaps: int, kernel) -> np.ndarray:
    """Weights (dst_n, src_n) of a kernel with `ntaps` taps on OpenCV's half-pixel grid."""
    scale = src_n / dst_n
    m = np.zeros((dst_n, src_n))
    for d in range(dst_n):
        fx = (d + 0.5) * scale - 0.5
        sx = int(np.floor(fx))
        frac = fx - sx
        offs = np.arange(ntaps) - (ntaps // 2 - 1)
        w = kernel(frac - offs)
        w = w / w.sum()
        for o, wt in zip(offs, w):
            m[d, min(max(sx + o, 0), src_n - 1)] += wt
    return m


def _linear(src_n: int, dst_n: int) -> np.ndarray:
    scale = src_n / dst_n
    m = np.zeros((dst_n, src_n))
    for d in range(dst_n):
        fx = (d + 0.5) * scale - 0.5
        sx = int(np.floor(fx))
        f = fx - sx
        if sx < 0:
            sx, f = 0, 0.0
        if sx >= src_n - 1:
            sx, f = src_n - 1, 0.0
        m[d, sx] += 1 - f
        if f:
            m[d, sx + 1] += f
    return m


def _linear_fixed(src_n: int, dst_n: int, rows: bool = False) -> tuple:
    """OpenCV's 8-bit INTER_LINEAR taps: (first index, second index, weights in 1/2048ths).

    Columns outside the image take the edge pixel with weight 1; rows keep their
    fractional weights and read the edge row twice (cv::resize treats the axes so)."""
    scale = 1.0 / (dst_n / src_n)  # as OpenCV: the reciprocal of the inverse scale
    i0 = np.zeros(dst_n, dtype=np.int64)
    w1 = np.zeros(dst_n, dtype=np.float32)
    for d in range(dst_n):
        fx = np.float32((d + 0.5) * scale - 0.5)  # OpenCV computes the position in float
        sx = int(np.floor(fx))
        f = np.float32(fx - np.float32(sx))
        if not rows and sx < 0:
            sx, f = 0, np.float32(0.0)
        if not rows and sx >= src_n - 1:
            sx, f = src_n - 1, np.float32(0.0)
        i0[d], w1[d] = sx, f
    if rows:
        return (np.clip(i0, 0, src_n - 1), np.clip(i0 + 1, 0, src_n - 1),
                np.rint((np.float32(1.0) - w1) * np.float32(2048)).astype(np.int64),
                np.rint(w1 * np.float32(2048)).astype(np.int64))
    a1 = np.rint(w1 * np.float32(2048)).astype(np.int64)
    a0 = np.rint((np.float32(1.0) - w1) * np.float32(2048)).astype(np.int64)
    return i0, np.minimum(i0 + 1, src_n - 1), a0, a1


def _resize_linear_u8(xp, img, out_h: int, out_w: int):
    """cv::resize(INTER_LINEAR) on uint8 in OpenCV's fixed point (bit-exact with MXNet's results)."""
    h, w = img.shape[-3], img.shape[-2]
    c0, c1, ca0, ca1 = (xp.asarray(v) for v in _linear_fixed(w, out_w))
    r0, r1, rb0, rb1 = (xp.asarray(v) for v in _linear_fixed(h, out_h, rows=True))
    x = img.astype(np.int64)
    horiz = x[..., c0, :] * ca0[:, None] + x[..., c1, :] * ca1[:, None]  # (..., h, ow, c), scaled by 2048
    top, bot = horiz[..., r0, :, :], horiz[..., r1, :, :]
    out = (((rb0[:, None, None] * (top >> 4)) >> 16) + ((rb1[:, None, None] * (bot >> 4)) >> 16) + 2) >> 2
    return xp.clip(out, 0, 255).astype(np.uint8)


def _area(src_n: int, dst_n: int, shrink: bool) -> np.ndarray:
    """INTER_AREA: box averaging when both axes shrink, else OpenCV's area-bilinear on both axes."""
    scale = src_n / dst_n
    m = np.zeros((dst_n, src_n))
    if not shrink:
        inv = 1.0 / scale
        for d in range(dst_n):
            sx = int(np.floor(d * scale))
            f = (d + 1) - (sx + 1) * inv
            f = 0.0 if f <= 0 else f - np.floor(f)
            if sx >= src_n - 1:
                m[d, src_n - 1] = 1.0
            else:
                m[d, sx] += 1 - f
                m[d, sx + 1] += f
        return m
    for d in range(dst_n):
        lo, hi = d * scale, (d + 1) * scale
        for s in range(int(np.floor(lo)), min(int(np.ceil(hi)), src_n)):
            m[d, s] = min(hi, s + 1) - max(lo, s)
        m[d] /= m[d].sum()
    return m


def _nearest(src_n: int, dst_n: int) -> np.ndarray:
    m = np.zeros((dst_n, src_n))
    idx = np.minimum(np.floor(np.arange(dst_n) * (src_n / dst_n)).astype(int), src_n - 1)
    m[np.arange(dst_n), idx] = 1.0
    return m


_INTERP = {0: _nearest, 1: _linear, 2: lambda s, d: _taps(s, d, 4, _cubic), 3: None,
           4: lambda s, d: _taps(s, d, 8, _lanczos)}


def resize_hwc(xp, img, out_h: int, out_w: int, interp: int):
    """Resize an (H, W, C) or (N, H, W, C) image as cv::resize does; keeps the dtype.

    Float images match OpenCV to float rounding; 8-bit bilinear (the default) runs
    OpenCV's fixed-point arithmetic and matches it bit for bit; the other 8-bit modes are
    interpolated in float and rounded, so they may differ from OpenCV's by 1."""
    h, w = img.shape[-3], img.shape[-2]
    if interp == 9:  # auto: cubic to enlarge, area to shrink, bilinear otherwise
        interp = 2 if out_h > h and out_w > w else 3 if out_h < h and out_w < w else 1
    elif interp == 10:
        interp = int(rng.generator(xp).integers(0, 5))
    elif interp not in _INTERP:
        raise AttrError(f"resize: unknown interpolation method {interp} (expected 0-4, 9 or 10)")
    dtype = np.dtype(img.dtype)
    if dtype == np.float16:
        raise DTypeError("resize: opencv image mat doesn't support fp16")
    if dtype.kind in "ui" and dtype.itemsize > 2 and dtype != np.uint8:
        raise DTypeError(f"resize: opencv resize doesn't support {dtype}")
    if interp == 1 and dtype == np.uint8:
        return _resize_linear_u8(xp, img, out_h, out_w)
    if interp == 3:
        shrink = h >= out_h and w >= out_w
        mh, mw = (xp.asarray(_area(h, out_h, shrink)), xp.asarray(_area(w, out_w, shrink)))
    else:
        mh = xp.asarray(_INTERP[interp](h, out_h))
        mw = xp.asarray(_INTERP[interp](w, out_w))
    work = img.astype(np.float64)
    rows = xp.moveaxis(xp.tensordot(mh, work, axes=([1], [-3])), 0, -3)  # (..., oh, w, c)
    out = xp.moveaxis(xp.tensordot(mw, rows, axes=([1], [-2])), 0, -2)  # (..., oh, ow, c)
    return _saturate(xp, out, dtype)


RESIZE_ATTRS = {
    "size": Attr("shape", (), "Size of new image. Could be (width, height) or (size)"),
    "keep_ratio": Attr("bool", False, "Whether to resize the short edge or both edges to `size`, if size is "
                                      "give as an integer."),
    "interp": Attr("int", 1, "Interpolation method for resizing. By default uses bilinear interpolation"),
}


def resized_hw(a: Attrs, h: int, w: int) -> tuple[int, int]:
    """The (height, width) `_image_resize` produces for an h x w image."""
    size = tuple(a.size)
    op = "_image_resize"
    if len(size) not in (1, 2):
        raise AttrError(f"operator {op}: Input size dimension must be 1 or 2, but got {len(size)}")
    if len(size) == 1:
        if size[0] <= 0:
            raise AttrError(f"operator {op}: Input size should be greater than 0, but got {size[0]}")
        if not a.keep_ratio:
            return size[0], size[0]
        if h > w:
            return int(h * size[0] / w), size[0]
        return size[0], int(w * size[0] / h)
    if size[0] <= 0 or size[1] <= 0:
        raise AttrError(f"operator {op}: Input width and height should be greater than 0, but got {size}")
    return size[1], size[0]


def _resize_shape(a: Attrs, shp):
    if shp is None:
        return None
    if len(shp) not in (3, 4):
        raise ShapeError(f"operator _image_resize: Input image dimension should be 3 or 4 but got {len(shp)}")
    oh, ow = resized_hw(a, shp[-3], shp[-2])
    return [tuple(shp)], [(*shp[:-3], oh, ow, shp[-1])]


@register("_image_resize",
          monitor_inputs="input", aliases=("_npx__image_resize",), attrs=dict(RESIZE_ATTRS), infer_shape=_resize_shape,
          gradient=ZERO_GRAD, hint="resize")
def image_resize(xp, a: Attrs, data):
    """Resize an (H, W, C) or (N, H, W, C) image to `size` with OpenCV's interpolation."""
    _, ((*_, oh, ow, _c),) = _resize_shape(a, data.shape)
    return (resize_hwc(xp, data, oh, ow, a.interp),)


# ---------------------------------------------------------------------------
# crop

CROP_ATTRS = {
    "x": Attr("int", doc="Left boundary of the cropping area."),
    "y": Attr("int", doc="Top boundary of the cropping area."),
    "width": Attr("int", doc="Width of the cropping area."),
    "height": Attr("int", doc="Height of the cropping area."),
}


def _crop_shape(a: Attrs, shp):
    if shp is None:
        return None
    op = "_image_crop"
    if len(shp) not in (3, 4):
        raise ShapeError(f"operator {op}: Image Crop expects inputs of 3D (h, w, c) or 4D (n, h, w, c). "
                         f"But got {len(shp)}")
    if shp[-1] not in (1, 3):
        raise ShapeError(f"operator {op}: Expect channel of the input image is 1 or 3, but got {shp[-1]}")
    h, w = shp[-3], shp[-2]
    if a.height <= 0 or a.width <= 0:
        raise AttrError(f"operator {op}: Input height and width must be greater than 0, got {a.height}, {a.width}")
    if not (0 <= a.x and a.x + a.width <= w and 0 <= a.y and a.y + a.height <= h):
        raise ShapeError(f"operator {op}: cropping area x={a.x}, y={a.y}, width={a.width}, height={a.height} "
                         f"exceeds the input image (height {h}, width {w})")
    return [tuple(shp)], [(*shp[:-3], a.height, a.width, shp[-1])]


@register("_image_crop",
          monitor_inputs="input", aliases=("_npx__image_crop",), attrs=dict(CROP_ATTRS), infer_shape=_crop_shape,
          hint="crop")
def image_crop(xp, a: Attrs, data):
    """The (height, width) window at (y, x) of an (H, W, C) or (N, H, W, C) image."""
    _crop_shape(a, data.shape)
    return (xp.ascontiguousarray(data[..., a.y:a.y + a.height, a.x:a.x + a.width, :]),)


@image_crop.def_gradient
def _crop_gradient(F, a, inputs, outputs, ograds):
    return [F._backward_image_crop(ograds[0], inputs[0], x=a.x, y=a.y, width=a.width, height=a.height)]


@register("_backward_image_crop", inputs=("ograd", "data"), attrs=dict(CROP_ATTRS),
          infer_shape=lambda a, g, d: None if d is None else ([_crop_shape(a, d)[1][0], tuple(d)], [tuple(d)]))
def _backward_crop(xp, a: Attrs, ograd, data):
    """The head gradient placed into the crop window of zeros."""
    dx = xp.zeros(data.shape, dtype=ograd.dtype)
    dx[..., a.y:a.y + a.height, a.x:a.x + a.width, :] = ograd
    return (dx,)


# ---------------------------------------------------------------------------
# flips and colour augmentations (single HWC images, channels 1 or 3)

def _image_shape(op: str):
    def infer(a: Attrs, shp):
        if shp is None:
            return None
        _check_hwc(op, shp)
        return [tuple(shp)], [tuple(shp)]
    return infer


def _check_hwc(op: str, shp) -> None:
    if len(shp) != 3:
        raise ShapeError(f"operator {op}: Input image must have shape (height, width, channels), but got "
                         f"{tuple(shp)}")
    if shp[-1] not in (1, 3):
        raise ShapeError(f"operator {op}: The last dimension of input image must be the channel dimension with "
                         f"either 1 or 3 elements, but got input with shape {tuple(shp)}")


def _copy_grad(F, a, inputs, outputs, ograds):
    return [F._copy(ograds[0])]


def _aug_op(name: str, attrs: dict | None = None, is_random: bool = False):
    """Declare an image augmentation: HWC in, same shape and dtype out, gradient = copy."""
    def wrap(fn):
        def kernel(xp, a: Attrs, data):
            _check_hwc(name, data.shape)
            return (fn(xp, a, data),)
        kernel.__doc__ = fn.__doc__
        return register(name,
                        monitor_inputs="input", aliases=(f"_npx_{name}",), attrs=attrs, infer_shape=_image_shape(name),
                        gradient=_copy_grad, is_random=is_random, inplace=((0, 0),),
                        hint=name.replace("_image_", ""))(kernel)
    return wrap


@_aug_op("_image_flip_left_right")
def _flip_lr(xp, a, data):
    """Mirror the image horizontally."""
    return xp.ascontiguousarray(data[:, ::-1, :])


@_aug_op("_image_flip_top_bottom")
def _flip_tb(xp, a, data):
    """Mirror the image vertically."""
    return xp.ascontiguousarray(data[::-1, :, :])


def _coin(xp) -> bool:
    return bool(rng.generator(xp).random() < 0.5)


@_aug_op("_image_random_flip_left_right", is_random=True)
def _rand_flip_lr(xp, a, data):
    """Mirror the image horizontally with probability 0.5."""
    return xp.ascontiguousarray(data[:, ::-1, :]) if _coin(xp) else data.copy()


@_aug_op("_image_random_flip_top_bottom", is_random=True)
def _rand_flip_tb(xp, a, data):
    """Mirror the image vertically with probability 0.5."""
    return xp.ascontiguousarray(data[::-1, :, :]) if _coin(xp) else data.copy()


def adjust_brightness(xp, data, alpha: float):
    return _color_cast(xp, data.astype(np.float32) * np.float32(alpha), data.dtype)


def adjust_contrast(xp, data, alpha: float):
    x = data.astype(np.float32)
    gray = (x[..., :3] * xp.asarray(_GRAY)).sum() if x.shape[-1] > 1 else x.sum()
    gray_mean = gray / np.float32(x.shape[0] * x.shape[1])
    return _color_cast(xp, x * np.float32(alpha) + np.float32(1 - alpha) * gray_mean, data.dtype)


def adjust_saturation(xp, data, alpha: float):
    if data.shape[-1] == 1:
        return data.copy()
    x = data.astype(np.float32)
    gray = x[..., 2:3] * _GRAY[2] * np.float32(1 - alpha)  # MXNet's kernel: the last channel only (see top)
    return _color_cast(xp, gray + x * np.float32(alpha), data.dtype)


def _rgb_to_hls(x):
    r, g, b = (x[..., i] / 255.0 for i in range(3))
    vmax = np.maximum(np.maximum(r, g), b)
    vmin = np.minimum(np.minimum(r, g), b)
    diff = vmax - vmin
    light = (vmax + vmin) * 0.5
    ok = diff > np.finfo(np.float32).eps
    safe = np.where(ok, diff, 1.0)
    s = np.where(light < 0.5, diff / np.where(ok, vmax + vmin, 1.0), diff / np.where(ok, 2.0 - vmax - vmin, 1.0))
    d = 60.0 / safe
    h = np.where(vmax == r, (g - b) * d, np.where(vmax == g, (b - r) * d + 120.0, (r - g) * d + 240.0))
    h = np.where(h < 0, h + 360.0, h)
    return np.where(ok, h, 0.0), light, np.where(ok, s, 0.0)


def _hls_to_rgb(h, light, s):
    p2 = np.where(light <= 0.5, light * (1 + s), light + s - light * s)
    p1 = 2 * light - p2
    h = np.mod(h / 60.0, 6.0)
    sector = np.floor(h).astype(int) % 6
    f = h - np.floor(h)
    tab = np.stack([p2, p1, p1 + (p2 - p1) * (1 - f), p1 + (p2 - p1) * f], axis=-1)
    sectors = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])  # b, g, r
    pick = sectors[sector]
    b, g, r = (np.take_along_axis(tab, pick[..., i:i + 1], -1)[..., 0] for i in range(3))
    gray = s == 0
    r, g, b = (np.where(gray, light, c) for c in (r, g, b))
    return np.stack([r, g, b], axis=-1) * 255.0


def adjust_hue(xp, data, alpha: float):
    if data.shape[-1] == 1:
        return data.copy()
    x = np.asarray(data.get() if hasattr(data, "get") else data).astype(np.float32)
    h, light, s = _rgb_to_hls(x)
    out = _hls_to_rgb(h + alpha * 360.0, light, s).astype(np.float32)
    return _color_cast(xp, xp.asarray(out), data.dtype)


ENHANCE_ATTRS = {
    "min_factor": Attr("float", doc="Minimum factor."),
    "max_factor": Attr("float", doc="Maximum factor."),
}


def _uniform(xp, a: Attrs, op: str) -> float:
    if a.min_factor < 0 or a.max_factor < 0:
        raise AttrError(f"operator {op}: min_factor and max_factor must be >= 0, got {a.min_factor}, "
                        f"{a.max_factor}")
    return float(rng.generator(xp).uniform(a.min_factor, a.max_factor))


@_aug_op("_image_random_brightness", attrs=dict(ENHANCE_ATTRS), is_random=True)
def _rand_brightness(xp, a, data):
    """Scale the image by a factor drawn from [min_factor, max_factor]."""
    return adjust_brightness(xp, data, _uniform(xp, a, "_image_random_brightness"))


@_aug_op("_image_random_contrast", attrs=dict(ENHANCE_ATTRS), is_random=True)
def _rand_contrast(xp, a, data):
    """Blend the image with its mean grey level by a factor drawn from [min_factor, max_factor]."""
    return adjust_contrast(xp, data, _uniform(xp, a, "_image_random_contrast"))


@_aug_op("_image_random_saturation", attrs=dict(ENHANCE_ATTRS), is_random=True)
def _rand_saturation(xp, a, data):
    """Blend the image with its grey version by a factor drawn from [min_factor, max_factor]."""
    return adjust_saturation(xp, data, _uniform(xp, a, "_image_random_saturation"))


@_aug_op("_image_random_hue", attrs=dict(ENHANCE_ATTRS), is_random=True)
def _rand_hue(xp, a, data):
    """Rotate the hue by a fraction of the circle drawn from [min_factor, max_factor]."""
    return adjust_hue(xp, data, _uniform(xp, a, "_image_random_hue"))


JITTER_ATTRS = {
    "brightness": Attr("float", doc="How much to jitter brightness."),
    "contrast": Attr("float", doc="How much to jitter contrast."),
    "saturation": Attr("float", doc="How much to jitter saturation."),
    "hue": Attr("float", doc="How much to jitter hue."),
}


@_aug_op("_image_random_color_jitter", attrs=dict(JITTER_ATTRS), is_random=True)
def _color_jitter(xp, a, data):
    """Brightness, contrast, saturation and hue jitters (those > 0) in a random order."""
    gen = rng.generator(xp)
    out = data
    for step in gen.permutation(4):
        amount = (a.brightness, a.contrast, a.saturation, a.hue)[step]
        if amount <= 0:
            continue
        f = float(gen.uniform(-amount, amount))
        fn = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)[step]
        out = fn(xp, out, f if step == 3 else 1.0 + f)
    return out.copy() if out is data else out


_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], dtype=np.float32)


def adjust_lighting(xp, data, alpha):
    if data.shape[-1] == 1:
        return data.copy()
    pca = xp.asarray(_EIG @ np.asarray(alpha, dtype=np.float32)[:3])
    return _color_cast(xp, data.astype(np.float32) + pca, data.dtype)


@_aug_op("_image_adjust_lighting", attrs={"alpha": Attr("floats", doc="The lighting alphas for the R, G, B "
                                                                        "channels.")})
def _adjust_lighting(xp, a, data):
    """Add AlexNet-style PCA lighting noise with the given alphas."""
    if len(a.alpha) < 3:
        raise AttrError(f"operator _image_adjust_lighting: alpha needs 3 values (R, G, B), got {tuple(a.alpha)}")
    return adjust_lighting(xp, data, a.alpha)


@_aug_op("_image_random_lighting", attrs={"alpha_std": Attr("float", 0.05, "Level of the lighting noise.")},
         is_random=True)
def _rand_lighting(xp, a, data):
    """AlexNet-style PCA lighting noise with alphas drawn from N(0, alpha_std)."""
    alpha = rng.generator(xp).normal(0.0, a.alpha_std, 3)
    return adjust_lighting(xp, data, alpha)
