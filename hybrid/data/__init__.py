"""Datasets, samplers and the DataLoader (`mx.gluon.data`)."""
from __future__ import annotations

from .dataloader import DataLoader, default_batchify_fn, default_mp_batchify_fn
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import BatchSampler, FilterSampler, RandomSampler, Sampler, SequentialSampler, SplitSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "vision", "Sampler",
           "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler", "SplitSampler", "DataLoader",
           "default_batchify_fn", "default_mp_batchify_fn"]


def __getattr__(name: str):
    """`gluon.data.vision` is imported on first use (it needs gluon.nn, which imports this package)."""
    if name == "vision":
        import importlib
        module = importlib.import_module(f"{__name__}.vision")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
