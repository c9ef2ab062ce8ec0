"""Vision datasets and image transforms (`mx.gluon.data.vision`)."""
from __future__ import annotations

from . import transforms
from .datasets import CIFAR10, CIFAR100, MNIST, FashionMNIST, ImageFolderDataset, ImageListDataset, ImageRecordDataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset", "ImageFolderDataset",
           "ImageListDataset", "transforms"]
