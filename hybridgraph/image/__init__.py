"""`mx.image` (alias `mx.img`): image decoding, resizing, cropping, augmenters and ImageIter.

Decoding and encoding use Pillow (`pip install 'hybridgraph[image]'`), imported on
first use. The detection iterators and augmenters (`mx.image.ImageDetIter`,
`CreateDetAugmenter`, `Det*Aug`) are not provided.
"""
from __future__ import annotations

from . import image  # noqa: F401  (mx.img.image.imread, as in MXNet)
from .augment import *  # noqa: F403
from .augment import __all__ as _aug_all
from .image import *  # noqa: F403
from .image import __all__ as _img_all
from .image_iter import ImageIter

__all__ = [*_img_all, *_aug_all, "ImageIter"]  # noqa: PLE0604

_DETECTION = {"ImageDetIter", "CreateDetAugmenter", "CreateMultiRandCropAugmenter", "DetAugmenter",
              "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug", "DetRandomCropAug", "DetRandomPadAug",
              "detection", "det"}


def __getattr__(name: str):
    if name in _DETECTION:
        raise NotImplementedError(f"mx.image.{name} (object-detection iterators and augmenters) is not provided by "
                                  "hybridgraph; use mx.image.ImageIter with label_width > 1 and your own box "
                                  "transforms in a gluon Dataset instead")
    raise AttributeError(f"module 'hybridgraph.image' has no attribute {name!r}")
