"""`mx.rnn` data helpers: `encode_sentences` (words -> ids) and `BucketSentenceIter`, which groups
sentences into length buckets and yields batches with a `bucket_key` for BucketingModule."""
from __future__ import annotations

import bisect
import random
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(sentences: list, vocab: dict | None = None, invalid_label: int = -1, invalid_key: str = "\n",
                     start_label: int = 0, unknown_token: str | None = None) -> tuple[list, dict]:
    """Each sentence as a list of ids; new words get the next id (skipping `invalid_label`) when
    building a vocabulary, or `unknown_token`'s id with a given one."""
    idx = start_label
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise AssertionError(f"Unknown token {word}")
                if idx == invalid_label:
                    idx += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = idx
                idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Batches of equal-length (padded with `invalid_label`) sentences; the label is the data
    shifted one step left. Layout 'NT' (batch major) or 'TN' (time major)."""

    def __init__(self, sentences: list, batch_size: int, buckets: list | None = None, invalid_label: int = -1,
                 data_name: str = "data", label_name: str = "softmax_label", dtype: Any = "float32",
                 layout: str = "NT"):
        super().__init__()
        if not buckets:
            counts = np.bincount([len(s) for s in sentences])
            buckets = [i for i, n in enumerate(counts) if n >= batch_size]
        buckets = sorted(buckets)
        per_bucket: list[list] = [[] for _ in buckets]
        used = [False] * len(buckets)
        ndiscard = 0
        for sent in sentences:
            b = bisect.bisect_left(buckets, len(sent))
            if b == len(buckets):
                ndiscard += 1
                continue
            used[b] = True
            buff = np.full((buckets[b],), invalid_label, dtype=dtype)
            buff[:len(sent)] = sent
            per_bucket[b].append(buff)
        self.buckets = [length for length, u in zip(buckets, used) if u]
        self.data = [np.asarray(rows, dtype=dtype) for rows in per_bucket if rows]
        print(f"WARNING: discarded {ndiscard} sentences longer than the largest bucket.")
        self.batch_size = batch_size
        self.data_name, self.label_name = data_name, label_name
        self.dtype, self.invalid_label = dtype, invalid_label
        self.nddata: list = []
        self.ndlabel: list = []
        self.major_axis = layout.find("N")
        self.layout = layout
        self.default_bucket_key = max(self.buckets)
        if self.major_axis == 0:
            shape = (batch_size, self.default_bucket_key)
        elif self.major_axis == 1:
            shape = (self.default_bucket_key, batch_size)
        else:
            raise ValueError(f"Invalid layout {layout}: Must by NT (batch major) or TN (time major)")
        self.provide_data = [DataDesc(name=data_name, shape=shape, layout=layout)]
        self.provide_label = [DataDesc(name=label_name, shape=shape, layout=layout)]
        self.idx = [(i, j) for i, rows in enumerate(self.data) for j in range(0, len(rows) - batch_size + 1,
                                                                               batch_size)]
        self.curr_idx = 0
        self.reset()

    def reset(self) -> None:
        self.curr_idx = 0
        random.shuffle(self.idx)
        for rows in self.data:
            np.random.shuffle(rows)
        self.nddata, self.ndlabel = [], []
        for rows in self.data:
            label = np.empty_like(rows)
            label[:, :-1] = rows[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(nd.array(rows, dtype=self.dtype))
            self.ndlabel.append(nd.array(label, dtype=self.dtype))

    def next(self) -> DataBatch:
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape, layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape, layout=self.layout)])
