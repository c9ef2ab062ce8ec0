"""Specs for nd/ops/random.py. Samples cannot be compared with a numpy reference,
so these specs check shapes (and infer_shape); tests/nd/test_random.py checks
moments, seeding and errors."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, ints, shapes

_RANDOM = "random sampling: no gradient to check (MXNet's is zero)"

# distribution -> attribute values that are valid for it
_PARAMS = {
    "uniform": {"low": -1.0, "high": 2.0}, "normal": {"loc": 1.0, "scale": 2.0},
    "gamma": {"alpha": 2.0, "beta": 0.5}, "exponential": {"lam": 2.0}, "poisson": {"lam": 3.0},
    "negative_binomial": {"k": 3, "p": 0.5}, "generalized_negative_binomial": {"mu": 2.0, "alpha": 0.5},
}
# array-parameter ranges of the _sample_ forms (low/high must be ordered: high = low + positive)
_SAMPLE_INPUTS = {
    "uniform": [(-2, 0), (0.5, 2)], "normal": [(-2, 2), (0.5, 2)], "gamma": [(0.5, 2), (0.5, 2)],
    "exponential": [(0.5, 2)], "poisson": [(0.1, 4)], "negative_binomial": [(1, 4), (0.2, 1)],
    "generalized_negative_binomial": [(0.1, 4), (0, 2)],
}


def _random_case(dist):
    def case(draw):
        attrs = dict(_PARAMS[dist], shape=draw(shapes(max_dims=3)),
                     dtype=draw(st.sampled_from(["float16", "float32", "float64"])))
        return [], attrs
    return case


def _like_case(dist):
    def case(draw):
        return [draw(arr(shapes(max_dims=3)))], dict(_PARAMS[dist])
    return case


def _sample_case(dist):
    def case(draw):
        shape = draw(shapes(max_dims=2, max_side=3))
        xs = [draw(arr(shape, lo, hi)) for lo, hi in _SAMPLE_INPUTS[dist]]
        if dist == "negative_binomial":
            xs[0] = np.round(xs[0])
        return xs, {"shape": draw(shapes(min_dims=0, max_dims=2, max_side=3))}
    return case


def _multinomial_case(draw):
    shape = draw(shapes(max_dims=3, max_side=4))
    p = draw(arr(shape, 0.05, 1.0))
    p = p / p.sum(axis=-1, keepdims=True)
    return [p], {"shape": draw(shapes(min_dims=0, max_dims=2, max_side=3)), "get_prob": draw(st.booleans())}


def _backward_multinomial_case(draw):
    lead = draw(shapes(min_dims=0, max_dims=2, max_side=3))
    k = draw(st.integers(1, 4))
    data = draw(arr(lead + (k,), 0.1, 1.0))
    sample_shape = lead + draw(shapes(min_dims=0, max_dims=1, max_side=3))
    sample_shape = sample_shape or (1,)
    sample = draw(ints(sample_shape, 0, k - 1, dtype=np.int32))
    return [draw(arr(sample_shape)), data, sample], {}


def ref_backward_multinomial(ograd, data, sample, **_):
    k = data.shape[-1]
    rows = data.reshape(-1, k)
    idx = sample.reshape(rows.shape[0], -1)
    grad = np.zeros_like(rows)
    g = ograd.reshape(idx.shape)
    for r in range(rows.shape[0]):
        for j in range(idx.shape[1]):
            grad[r, idx[r, j]] += g[r, j] / rows[r, idx[r, j]]
    return grad.reshape(data.shape)


SPECS = [
    *[OpSpec(f"_random_{d}", case=_random_case(d), nondiff=_RANDOM) for d in _PARAMS],
    *[OpSpec(f"_random_{d}_like", case=_like_case(d), nondiff=_RANDOM) for d in _PARAMS],
    *[OpSpec(f"_sample_{d}", case=_sample_case(d), nondiff=_RANDOM) for d in _PARAMS],
    OpSpec("_random_randint", case=lambda draw: ([], {"low": -3, "high": 5, "shape": draw(shapes(max_dims=3)),
                                                      "dtype": draw(st.sampled_from(["int32", "int64"]))}),
           nondiff=_RANDOM),
    OpSpec("_sample_multinomial", case=_multinomial_case,
           nondiff="random samples; the log-probability gradient is checked in tests/nd/test_random.py"),
    OpSpec("_backward_sample_multinomial", case=_backward_multinomial_case, ref=ref_backward_multinomial,
           nondiff="backward operator"),
    OpSpec("_shuffle", case=lambda draw: ([draw(arr(shapes(max_dims=3)))], {}), nondiff="random permutation"),
]
