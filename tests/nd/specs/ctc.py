"""Spec for nd/ops/ctc.py: CTCLoss against a brute-force sum over every alignment of tiny
sequences (MXNet 1.9.1's own values, gradients included: tests/nd/test_ctc.py)."""
from __future__ import annotations

import itertools

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, ints


def _case(draw):
    t, batch, alphabet = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(2, 3))
    data = draw(arr((t, batch, alphabet))).astype(np.float32)
    blank_label = draw(st.sampled_from(["first", "last"]))
    low = 1 if blank_label == "first" else 0     # tokens; the padding value may also appear
    label = draw(ints((batch, draw(st.integers(1, t))), low - 1, low + alphabet - 2))
    label[label == low - 1] = 0 if blank_label == "first" else -1
    return [data, label.astype(np.float32)], {"blank_label": blank_label}


def _collapse(path, blank):
    out = [p for i, p in enumerate(path) if i == 0 or p != path[i - 1]]
    return [p for p in out if p != blank]


def _brute_force(data, label, blank_label="first"):
    """-log of the summed probability of every alignment that collapses to the label."""
    t, batch, alphabet = data.shape
    blank, pad = (0, 0) if blank_label == "first" else (alphabet - 1, -1)
    e = np.exp(data.astype(np.float64) - data.max(axis=2, keepdims=True))
    prob = e / e.sum(axis=2, keepdims=True)
    out = np.zeros(batch)
    for b in range(batch):
        row = label[b].astype(int).tolist()
        target = row[:row.index(pad)] if pad in row else row
        if len(target) + sum(x == y for x, y in zip(target, target[1:])) > t:
            continue    # MXNet: a label that cannot fit gives 0
        total = sum(np.prod([prob[i, b, c] for i, c in enumerate(path)])
                    for path in itertools.product(range(alphabet), repeat=t)
                    if _collapse(path, blank) == target)
        out[b] = -np.log(total)
    return out.astype(np.float32)


SPECS = [
    OpSpec("CTCLoss", case=_case, ref=_brute_force, rtol=1e-4, atol=1e-5,
           nondiff="float32-only kernel (as MXNet's): the gradient is checked against MXNet 1.9.1 "
                   "in tests/nd/test_ctc.py"),
]
