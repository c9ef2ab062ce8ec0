"""`gluon.contrib.data`: IntervalSampler. (MXNet's WikiText datasets, which download their
files, are not provided: read the text yourself into a gluon.data.SimpleDataset.)"""
from __future__ import annotations

from . import sampler
from .sampler import IntervalSampler

__all__ = ["IntervalSampler", "sampler"]
