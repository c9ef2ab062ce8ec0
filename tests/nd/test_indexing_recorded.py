"""Advanced indexing while autograd records (MXNet 1.9.1 records gather_nd): the value is
numpy's, the gradient scatters ones back to every selected position (repeats add up)."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import autograd, nd

_KEYS = [
    ([[1]], [[2]]),
    (slice(0, 2), [[1], [2]], slice(0, 2), slice(0, 5, 2)),
    ([1, 2], slice(1, 3), None, [2, 3], [3, 4]),
    ([2, 0, 1, 0], 1),
    (None, slice(None), [0, 1], None, [1, 1]),
    np.array([0, 2, 2]),
]


@pytest.mark.parametrize("key", _KEYS, ids=range(len(_KEYS)))
def test_recorded_advanced_getitem_value_and_gradient(key):
    base = np.arange(3 * 4 * 5 * 6, dtype=np.float32).reshape(3, 4, 5, 6)
    x = nd.array(base)
    x.attach_grad()
    with autograd.record():
        y = x[key]
    want = base[key]
    np.testing.assert_array_equal(y.asnumpy(), want.reshape(want.shape or (1,)))
    y.backward()
    grad = np.zeros_like(base)
    np.add.at(grad, key, 1.0)
    np.testing.assert_array_equal(x.grad.asnumpy(), grad)
