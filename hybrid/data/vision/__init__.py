"""Vision datasets and image transforms (`mx.gluon.data.vision`)."""
from __future__ import annotations

from . import transforms
from .datasets import CIFAR10, CIFAR100, MNIST, FashionMNIST, ImageFolderDataset, ImageRecordDataset
from .datasets import ImageListDataset  # noqa: F401  (an extra beyond MXNet 1.9.1)

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset", "ImageFolderDataset",
           "transforms"]
