"""Datasets, samplers and the DataLoader (`mx.gluon.data`)."""
from __future__ import annotations

from .dataloader import DataLoader, default_batchify_fn, default_mp_batchify_fn
from .dataset import ArrayDataset, Dataset, SimpleDataset
from .sampler import BatchSampler, FilterSampler, RandomSampler, Sampler, SequentialSampler, SplitSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "Sampler", "SequentialSampler", "RandomSampler",
           "FilterSampler", "BatchSampler", "SplitSampler", "DataLoader", "default_batchify_fn",
           "default_mp_batchify_fn"]
