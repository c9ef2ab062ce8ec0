"""The AdamW update operators against MXNet 1.9.1 (tests/data/adamw_ref.npz from
tests/data/gen_adamw_ref.py): weights, moments and float32 master weights after one step of
each front end, float32 and float16, with clipping, and a skipped step (rescale_grad = inf)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hybridgraph as mx
from tests.data.gen_adamw_ref import run

REF = Path(__file__).resolve().parent.parent / "data" / "adamw_ref.npz"


def test_adamw_front_ends_match_mxnet():
    want = np.load(REF)
    got = run(mx)
    assert sorted(got) == sorted(want.files)
    for key in want.files:
        tol = 2e-3 if "mp" in key else 1e-6    # float16 weights: one rounding step
        np.testing.assert_allclose(got[key], want[key], rtol=tol, atol=tol, err_msg=key)


def test_adamw_checks_its_inputs():
    w, g, m, v = (mx.nd.ones((2, 2)) for _ in range(4))
    with pytest.raises(mx.base.MXNetError, match="rescale_grad"):
        mx.nd._internal._adamw_update(w, g, m, v, mx.nd.ones((2,)), lr=0.1, eta=1.0)
    with pytest.raises(mx.base.MXNetError, match="must be float32"):
        mx.nd.contrib.mp_adamw_update(w.astype("float16"), g.astype("float16"), m.astype("float16"), v, w, 1.0,
                                      lr=0.1, eta=1.0)
    with pytest.raises(mx.base.MXNetError, match="lrs, wds and etas"):
        mx.nd.contrib.multi_adamw_update([w], [g], [m], [v], 1.0, lrs=[0.1, 0.2], wds=[0.0], etas=[1.0])
    new = mx.nd.contrib.adamw_update(w, g, m, v, 0.0, lr=0.1, eta=1.0)   # skipped: a copy of the weight
    assert new.asnumpy().tolist() == w.asnumpy().tolist() and m.asnumpy().tolist() == [[1, 1], [1, 1]]
