"""`mx.image`'s Augmenters (callables on HWC NDArrays) and `CreateAugmenter`.

Random draws use Python's `random` (and numpy's for lighting noise), as MXNet's do.
`dumps()` gives the same JSON as MXNet: ``[class name lower-cased, kwargs]``.
"""
from __future__ import annotations

import json
import random
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.nd.ndarray import NDArray

from .image import (_get_interp_method, center_crop, color_normalize, imresize, random_crop, random_size_crop,
                    resize_short)

__all__ = ["Augmenter", "SequentialAug", "ResizeAug", "ForceResizeAug", "RandomCropAug", "RandomSizedCropAug",
           "CenterCropAug", "RandomOrderAug", "BrightnessJitterAug", "ContrastJitterAug", "SaturationJitterAug",
           "HueJitterAug", "ColorJitterAug", "LightingAug", "ColorNormalizeAug", "RandomGrayAug",
           "HorizontalFlipAug", "CastAug", "CreateAugmenter"]

_GRAY_COEF = [[[0.299, 0.587, 0.114]]]


class Augmenter:
    """Image augmenter base class; keyword arguments are kept for `dumps()`."""

    def __init__(self, **kwargs: Any):
        self._kwargs = kwargs
        for k, v in self._kwargs.items():
            if isinstance(v, NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self) -> str:
        """The augmenter as a JSON string."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, src: NDArray) -> NDArray:
        raise NotImplementedError("Must override implementation.")


class SequentialAug(Augmenter):
    """Apply a list of augmenters in order."""

    def __init__(self, ts: list):
        super().__init__()
        self.ts = ts

    def dumps(self) -> list:
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]

    def __call__(self, src: NDArray) -> NDArray:
        for aug in self.ts:
            src = aug(src)
        return src


class ResizeAug(Augmenter):
    """Resize the shorter edge to `size`."""

    def __init__(self, size: int, interp: int = 2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: NDArray) -> NDArray:
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(Augmenter):
    """Resize to exactly `size` (w, h)."""

    def __init__(self, size: tuple, interp: int = 2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: NDArray) -> NDArray:
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=_get_interp_method(self.interp, sizes))


class _SizedCropAug(Augmenter):
    """A crop of `size` (w, h) chosen by a subclass's `_crop` (random_crop or center_crop)."""

    def __init__(self, size: tuple, interp: int = 2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: NDArray) -> NDArray:
        return self._crop(src, self.size, self.interp)[0]


class RandomCropAug(_SizedCropAug):
    """A random crop of `size` (w, h)."""

    _crop = staticmethod(random_crop)


class RandomSizedCropAug(Augmenter):
    """A crop of random area and aspect ratio, resized to `size` (w, h)."""

    def __init__(self, size: tuple, area: Any, ratio: tuple, interp: int = 2, **kwargs: Any):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = size
        self.area = kwargs.pop("min_area") if "min_area" in kwargs else area
        self.ratio, self.interp = ratio, interp
        if kwargs:
            raise TypeError(f"unexpected keyword arguments for `RandomSizedCropAug`: {sorted(kwargs)}")

    def __call__(self, src: NDArray) -> NDArray:
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(_SizedCropAug):
    """The centre crop of `size` (w, h)."""

    _crop = staticmethod(center_crop)


class RandomOrderAug(Augmenter):
    """Apply a list of augmenters in a random order."""

    def __init__(self, ts: list):
        super().__init__()
        self.ts = ts

    def dumps(self) -> list:
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]

    def __call__(self, src: NDArray) -> NDArray:
        random.shuffle(self.ts)
        for t in self.ts:
            src = t(src)
        return src


class BrightnessJitterAug(Augmenter):
    """Scale by 1 + U(-brightness, brightness) (in place; float images)."""

    def __init__(self, brightness: float):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src: NDArray) -> NDArray:
        src *= 1.0 + random.uniform(-self.brightness, self.brightness)
        return src


class _GrayBlendAug(Augmenter):
    """In place, ``src * alpha + (1 - alpha) * grey`` with ``alpha = 1 + U(-amount, amount)``;
    `amount` is the public attribute (and dumps() keyword) `name`, the grey term (already
    times ``1 - alpha``) a subclass's `_gray`."""

    def __init__(self, name: str, amount: float):
        super().__init__(**{name: amount})
        setattr(self, name, amount)
        self._amount_attr = name
        self.coef = nd.array(_GRAY_COEF)

    def _gray(self, src: NDArray, alpha: float) -> NDArray:
        raise NotImplementedError("Must override implementation.")

    def __call__(self, src: NDArray) -> NDArray:
        amount = getattr(self, self._amount_attr)
        alpha = 1.0 + random.uniform(-amount, amount)
        gray = self._gray(src, alpha)
        src *= alpha
        src += gray
        return src


class ContrastJitterAug(_GrayBlendAug):
    """Blend with the mean grey level by 1 + U(-contrast, contrast)."""

    def __init__(self, contrast: float):
        super().__init__("contrast", contrast)

    def _gray(self, src: NDArray, alpha: float) -> NDArray:
        gray = src * self.coef
        return (3.0 * (1.0 - alpha) / gray.size) * nd.sum(gray)


class SaturationJitterAug(_GrayBlendAug):
    """Blend with the per-pixel grey value by 1 + U(-saturation, saturation)."""

    def __init__(self, saturation: float):
        super().__init__("saturation", saturation)

    def _gray(self, src: NDArray, alpha: float) -> NDArray:
        gray = nd.sum(src * self.coef, axis=2, keepdims=True)
        gray *= 1.0 - alpha
        return gray


class HueJitterAug(Augmenter):
    """Rotate the hue in YIQ space by U(-hue, hue) * pi."""

    def __init__(self, hue: float):
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
        self.ityiq = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])

    def __call__(self, src: NDArray) -> NDArray:
        alpha = random.uniform(-self.hue, self.hue)
        u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        bt = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = np.dot(np.dot(self.ityiq, bt), self.tyiq).T
        return nd.dot(src, nd.array(t))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitters (those > 0) in a random order."""

    def __init__(self, brightness: float, contrast: float, saturation: float):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet-style PCA lighting noise: alphas ~ N(0, alphastd)."""

    def __init__(self, alphastd: float, eigval: Any, eigvec: Any):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd, self.eigval, self.eigvec = alphastd, eigval, eigvec

    def __call__(self, src: NDArray) -> NDArray:
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        src += nd.array(np.dot(self.eigvec * alpha, self.eigval))
        return src


class ColorNormalizeAug(Augmenter):
    """(src - mean) / std."""

    def __init__(self, mean: Any, std: Any):
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, NDArray) else nd.array(mean)
        self.std = std if std is None or isinstance(std, NDArray) else nd.array(std)

    def __call__(self, src: NDArray) -> NDArray:
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """Convert to grey (3 equal channels) with probability p."""

    def __init__(self, p: float):
        super().__init__(p=p)
        self.p = p
        self.mat = nd.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]])

    def __call__(self, src: NDArray) -> NDArray:
        if random.random() < self.p:
            src = nd.dot(src, self.mat)
        return src


class HorizontalFlipAug(Augmenter):
    """Mirror horizontally with probability p."""

    def __init__(self, p: float):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src: NDArray) -> NDArray:
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """Cast to `typ`."""

    def __init__(self, typ: str = "float32"):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src: NDArray) -> NDArray:
        return src.astype(self.typ)


def CreateAugmenter(data_shape: tuple, resize: int = 0, rand_crop: bool = False, rand_resize: bool = False,
                    rand_mirror: bool = False, mean: Any = None, std: Any = None, brightness: float = 0,
                    contrast: float = 0, saturation: float = 0, hue: float = 0, pca_noise: float = 0,
                    rand_gray: float = 0, inter_method: int = 2) -> list:
    """MXNet's standard augmenter list for `data_shape` (C, H, W); mean/std True use ImageNet's."""
    auglist: list = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise AssertionError("rand_resize requires rand_crop")
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        eigval = np.array([55.46, 4.794, 1.148])
        eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])
        auglist.append(LightingAug(pca_noise, eigval, eigvec))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    if mean is True:
        mean = nd.array([123.68, 116.28, 103.53])
    elif mean is not None and not (isinstance(mean, (np.ndarray, NDArray)) and mean.shape[0] in (1, 3)):
        raise AssertionError(f"mean must be True or an array of 1 or 3 values, got {mean!r}")
    if std is True:
        std = nd.array([58.395, 57.12, 57.375])
    elif std is not None and not (isinstance(std, (np.ndarray, NDArray)) and std.shape[0] in (1, 3)):
        raise AssertionError(f"std must be True or an array of 1 or 3 values, got {std!r}")
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist
