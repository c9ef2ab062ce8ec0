"""Image transforms (`mx.gluon.data.vision.transforms`), as MXNet 1.9.1 defines them.

The transforms MXNet makes HybridBlocks (ToTensor, Normalize, Resize, CropResize, the
random flips and colour jitters, Cast) call the `_image_*` operators, so a `Compose`
of them hybridizes into one graph; the crops with random geometry and the rotations
are plain Blocks on `mx.image`'s functions, as in MXNet.
"""
from __future__ import annotations

import random
from numbers import Number
from typing import Any

import numpy as np

from hybridgraph import image

from ...block import Block
from ...hybrid_block import HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Rotate", "RandomRotation", "RandomResizedCrop",
           "CropResize", "CenterCrop", "Resize", "RandomFlipLeftRight", "RandomFlipTopBottom", "RandomBrightness",
           "RandomContrast", "RandomSaturation", "RandomHue", "RandomColorJitter", "RandomLighting", "RandomApply"]


class Compose(Sequential):
    """Sequentially composes transforms; runs of HybridBlocks are grouped into a
    hybridized HybridSequential."""

    def __init__(self, transforms: list):
        super().__init__()
        hybrid: list = []
        for t in [*transforms, None]:
            if isinstance(t, HybridBlock):
                hybrid.append(t)
                continue
            if len(hybrid) == 1:
                self.add(hybrid[0])
            elif len(hybrid) > 1:
                block = HybridSequential()
                for h in hybrid:
                    block.add(h)
                block.hybridize()
                self.add(block)
            hybrid = []
            if t is not None:
                self.add(t)


class Cast(HybridBlock):
    """Cast input to a specific data type."""

    def __init__(self, dtype: str = "float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """(H, W, C) / (N, H, W, C) uint8 in [0, 255] -> (C, H, W) / (N, C, H, W) float32 in [0, 1)."""

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """(x - mean) / std per channel of a (C, H, W) / (N, C, H, W) tensor."""

    def __init__(self, mean: Any = 0.0, std: Any = 1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, self._mean, self._std)


class Rotate(Block):
    """Rotate float32 (C, H, W) / (N, C, H, W) input by `rotation_degrees`."""

    def __init__(self, rotation_degrees: float, zoom_in: bool = False, zoom_out: bool = False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        if x.dtype != np.float32:
            raise TypeError("This transformation only supports float32. Consider calling it after ToTensor")
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """Rotate by a random angle in `angle_limits`, with probability `rotate_with_proba`."""

    def __init__(self, angle_limits: tuple, zoom_in: bool = False, zoom_out: bool = False,
                 rotate_with_proba: float = 1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        if np.random.random() > self._rotate_with_proba:
            return x
        if x.dtype != np.float32:
            raise TypeError("This transformation only supports float32. Consider calling it after ToTensor")
        return image.random_rotate(x, *self._args)


class RandomResizedCrop(Block):
    """Crop a random area fraction (`scale`) and aspect ratio (`ratio`), resized to `size`."""

    def __init__(self, size: Any, scale: tuple = (0.08, 1.0), ratio: tuple = (3.0 / 4.0, 4.0 / 3.0),
                 interpolation: int = 1):
        super().__init__()
        if isinstance(size, Number):
            size = (size, size)
        self._args = (size, scale, ratio, interpolation)

    def forward(self, x):
        return image.random_size_crop(x, *self._args)[0]


class CropResize(HybridBlock):
    """Crop the (width, height) window at (x, y), then optionally resize it to `size`."""

    def __init__(self, x: int, y: int, width: int, height: int, size: Any = None, interpolation: int | None = None):
        super().__init__()
        self._x, self._y, self._width, self._height = x, y, width, height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            out = F.image.resize(out, self._size, False, self._interpolation)
        return out


class CenterCrop(Block):
    """Crop the centre `size` (w, h) (upsampled if the image is smaller)."""

    def __init__(self, size: Any, interpolation: int = 1):
        super().__init__()
        if isinstance(size, Number):
            size = (size, size)
        self._args = (size, interpolation)

    def forward(self, x):
        return image.center_crop(x, *self._args)[0]


class Resize(HybridBlock):
    """Resize to `size` (an int: square, or the short edge with keep_ratio; or (w, h))."""

    def __init__(self, size: Any, keep_ratio: bool = False, interpolation: int = 1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, self._size, self._keep, self._interpolation)


class RandomFlipLeftRight(HybridBlock):
    """Mirror horizontally with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Mirror vertically with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_top_bottom(x)


class _RandomEnhance(HybridBlock):
    _op = ""

    def __init__(self, amount: float):
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, *self._args)


class RandomBrightness(_RandomEnhance):
    """Scale brightness by a factor in [max(0, 1 - brightness), 1 + brightness]."""

    _op = "random_brightness"


class RandomContrast(_RandomEnhance):
    """Scale contrast by a factor in [max(0, 1 - contrast), 1 + contrast]."""

    _op = "random_contrast"


class RandomSaturation(_RandomEnhance):
    """Scale saturation by a factor in [max(0, 1 - saturation), 1 + saturation]."""

    _op = "random_saturation"


class RandomHue(_RandomEnhance):
    """Shift hue by a factor in [max(0, 1 - hue), 1 + hue] (MXNet's range, applied as a hue rotation)."""

    _op = "random_hue"


class RandomColorJitter(HybridBlock):
    """Random brightness, contrast, saturation and hue jitters in a random order."""

    def __init__(self, brightness: float = 0, contrast: float = 0, saturation: float = 0, hue: float = 0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """AlexNet-style PCA lighting noise with standard deviation `alpha`."""

    def __init__(self, alpha: float):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, self._alpha)


class RandomApply(Sequential):
    """Apply `transforms` with probability `p`."""

    def __init__(self, transforms: Block, p: float = 0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)
