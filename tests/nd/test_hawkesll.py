"""contrib.hawkesll against MXNet 1.9.1 (tests/data/hawkesll_ref.npz from
tests/data/gen_hawkesll_ref.py): outputs and gradients on ragged batches, float64 and float32;
then what MXNet gets wrong or leaves undefined, checked by finite differences: the head
gradient of the state output and the gradient w.r.t. the starting state."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hybridgraph as mx

REF = Path(__file__).resolve().parent.parent / "data" / "hawkesll_ref.npz"
NAMES = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")


def _cases():
    ref = np.load(REF)
    ids = sorted({k.split("_")[0] for k in ref.files})
    return ref, ids


def _args(ref, c, dtype):
    return [mx.nd.array(ref[f"{c}_in_{n}"], dtype="int32" if n == "marks" else dtype) for n in NAMES]


@pytest.mark.parametrize("case", _cases()[1])
def test_hawkesll_matches_mxnet(case):
    ref, _ = _cases()
    dtype = str(ref[f"{case}_dtype"])
    args = _args(ref, case, dtype)
    for x in args[:3]:
        x.attach_grad()
    with mx.autograd.record():
        ll, state = mx.nd.contrib.hawkesll(*args)
    ll.backward(mx.nd.array(ref[f"{case}_in_head"], dtype=dtype))
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-6, "atol": 1e-8}
    assert ll.dtype == np.dtype(dtype) and state.shape == args[0].shape
    np.testing.assert_allclose(ll.asnumpy(), ref[f"{case}_ll"], **tol)
    np.testing.assert_allclose(state.asnumpy(), ref[f"{case}_state"], **tol)
    for name, x in zip(NAMES, args[:3]):
        np.testing.assert_allclose(x.grad.asnumpy(), ref[f"{case}_grad_{name}"], **tol, err_msg=name)


def test_state_output_and_starting_state_gradients_by_finite_differences():
    ref, _ = _cases()
    base = [ref[f"1_in_{n}"] for n in NAMES]
    rng = np.random.default_rng(0)
    h_ll, h_state = rng.standard_normal(base[0].shape[0]), rng.standard_normal(base[0].shape)

    def objective(vals):
        ll, st = mx.nd.contrib.hawkesll(*[mx.nd.array(v, dtype="int32" if i == 5 else "float64")
                                          for i, v in enumerate(vals)])
        return float((ll.asnumpy() * h_ll).sum() + (st.asnumpy() * h_state).sum())

    args = [mx.nd.array(v, dtype="int32" if i == 5 else "float64") for i, v in enumerate(base)]
    for x in args[:4]:
        x.attach_grad()
    with mx.autograd.record():
        ll, st = mx.nd.contrib.hawkesll(*args)
    mx.autograd.backward([ll, st], [mx.nd.array(h_ll, dtype="float64"), mx.nd.array(h_state, dtype="float64")])
    eps = 1e-6
    for i in range(4):
        direction = rng.standard_normal(base[i].shape)
        up = [v.copy() for v in base]
        down = [v.copy() for v in base]
        up[i] = up[i] + eps * direction
        down[i] = down[i] - eps * direction
        numeric = (objective(up) - objective(down)) / (2 * eps)
        analytic = float((args[i].grad.asnumpy() * direction).sum())
        assert abs(numeric - analytic) <= 1e-5 * max(1.0, abs(numeric)), NAMES[i]


def test_hawkesll_rejects_bad_inputs():
    n, t, k = 2, 3, 2
    good = [mx.nd.ones((n, k)), mx.nd.ones((k,)) * 0.5, mx.nd.ones((k,)), mx.nd.zeros((n, k)), mx.nd.ones((n, t)),
            mx.nd.zeros((n, t), dtype="int32"), mx.nd.array([3, 3]), mx.nd.ones((n,)) * 10]
    assert mx.nd.contrib.hawkesll(*good)[0].shape == (n,)
    with pytest.raises(mx.base.MXNetError, match="'alpha' must have shape"):
        mx.nd.contrib.hawkesll(*good[:1], mx.nd.ones((k + 1,)), *good[2:])
    with pytest.raises(mx.base.MXNetError, match="'marks' must be int32"):
        mx.nd.contrib.hawkesll(*good[:5], mx.nd.zeros((n, t)), *good[6:])
    with pytest.raises(mx.base.MXNetError, match=r"marks must be in \[0, 2\)"):
        mx.nd.contrib.hawkesll(*good[:5], mx.nd.full((n, t), 2, dtype="int32"), *good[6:])
    sym = mx.sym.contrib.hawkesll(*[mx.sym.var(nm) for nm in NAMES])
    assert sym.list_outputs() == ["hawkesll0_output", "hawkesll0_out_state"]
