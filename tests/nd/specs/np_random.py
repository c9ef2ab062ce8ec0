"""Specs for the np samplers (nd/ops/np_random.py): output shapes and dtypes with scalar or
array parameters (random values: no forward reference), the reparameterisation gradient
kernels against their formulas, constraint_check against numpy's all()."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes

_RANDOM = "random sampling"
_SIZE = shapes(min_dims=1, max_dims=3)

_PARAMS = {"normal": ("loc", "scale"), "logistic": ("loc", "scale"), "gumbel": ("loc", "scale"),
           "exponential": ("scale",), "rayleigh": ("scale",), "weibull": ("a",), "pareto": ("a",)}


def _sampler_case(names, positive=("scale", "a", "shape"), with_dtype=True, batch=False):
    def case(draw):
        shape = draw(st.sampled_from([(), (2,), (2, 3)]))
        inputs, attrs = [], {}
        for n in names:
            if draw(st.booleans()):
                inputs.append(draw(arr(shape, 0.5, 2.0) if n in positive else arr(shape)))
                attrs[n] = None
            else:
                attrs[n] = 1.5 if n in positive else 0.25
        attrs["size"] = draw(st.sampled_from([None, (2,), (3, 1)])) if batch else \
            draw(st.sampled_from([None, (3,) + shape]))
        if with_dtype:
            attrs["dtype"] = draw(st.sampled_from(["float32", "float64"]))
        return inputs, attrs
    return case


def _reparam_backward_case(dist):
    names = _PARAMS[dist]

    def case(draw):
        inputs, attrs = _sampler_case(names, with_dtype=dist == "normal")(draw)
        if not inputs:   # the kernel only exists for array parameters
            inputs, attrs[names[-1]], attrs["size"] = [draw(arr((2,), 0.5, 2.0))], None, None
        p = [inputs.pop(0) if attrs[n] is None else attrs[n] for n in names]
        inputs = [x for x, n in zip(p, names) if attrs[n] is None]
        size = attrs["size"] if attrs["size"] is not None else np.broadcast_shapes(*[x.shape for x in inputs])
        noise = draw(arr(tuple(size), 0.1, 2.0))
        sample = _sample(dist, p, noise)
        return [draw(arr(tuple(size))), *inputs, sample, noise], attrs
    return case


def _sample(dist, p, noise):
    if dist in ("normal", "logistic", "gumbel"):
        return p[0] + p[1] * noise
    if dist in ("exponential", "rayleigh"):
        return p[0] * noise
    if dist == "weibull":
        return noise ** (1.0 / p[0])
    return np.expm1(noise / p[0])


def _sum_to(g, shape):
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, d in enumerate(shape):
        if d == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


def _reparam_backward_ref(dist):
    names = _PARAMS[dist]

    def ref(g, *rest, **attrs):
        arrays, sample, noise = list(rest[:-2]), rest[-2], rest[-1]
        it = iter(arrays)
        p = [next(it) if attrs[n] is None else attrs[n] for n in names]
        if dist in ("normal", "logistic", "gumbel"):
            d = [np.ones_like(noise), noise]
        elif dist in ("exponential", "rayleigh"):
            d = [noise]
        elif dist == "weibull":
            d = [-sample * np.log(sample) / p[0]]
        else:
            d = [-(sample + 1) * np.log1p(sample) / p[0]]
        return tuple(_sum_to(g * dd, v.shape) for dd, v, n in zip(d, p, names) if attrs[n] is None)
    return ref


def _bernoulli_case(draw):
    is_logit = draw(st.booleans())
    size = draw(st.sampled_from([None, (3,), (2, 2)]))
    dtype = draw(st.sampled_from(["float32", "int32", "bool"]))
    if draw(st.booleans()):
        p = draw(arr((2, 2) if size == (2, 2) else (3,) if size == (3,) else (2,), 0.0, 1.0))
        return [p], {"prob": None, "logit": None, "is_logit": is_logit, "size": size, "dtype": dtype}
    return [], {"prob": None if is_logit else 0.3, "logit": 0.5 if is_logit else None, "is_logit": is_logit,
                "size": size or (2,), "dtype": dtype}


def _mvn_case(draw):
    n = draw(st.integers(1, 3))
    batch = draw(st.sampled_from([(), (2,)]))
    cov = np.eye(n) * 2.0 + 0.1
    return [draw(arr(batch + (n,))), np.broadcast_to(cov, batch + (n, n)).copy()], \
        {"size": draw(st.sampled_from([None, (3,), (2, 1)]))}


SPECS = (
    [OpSpec(f"_npi_{d}", case=_sampler_case(n, with_dtype=d == "normal"), nondiff=_RANDOM) for d, n in _PARAMS.items()]
    + [OpSpec(f"_backward_broadcast_{d}", case=_reparam_backward_case(d), ref=_reparam_backward_ref(d),
              nondiff="a gradient kernel (checked by tests/numpy/test_np_random.py with fixed seeds)")
       for d in _PARAMS]
    + [OpSpec("_npi_gamma", case=_sampler_case(("shape", "scale")), nondiff=_RANDOM),
       OpSpec("_npi_powerd", case=_sampler_case(("a",)), nondiff=_RANDOM),
       OpSpec("_npi_uniform_n", case=_sampler_case(("low", "high"), positive=(), batch=True), nondiff=_RANDOM),
       OpSpec("_npi_normal_n", case=_sampler_case(("loc", "scale"), batch=True), nondiff=_RANDOM),
       OpSpec("_npi_bernoulli", case=_bernoulli_case, nondiff=_RANDOM),
       OpSpec("_npi_mvn_fallback", case=_mvn_case, nondiff=_RANDOM),
       OpSpec("_npx_constraint_check", case=lambda draw: ([np.ones(draw(_SIZE), dtype=bool)], {"msg": "bad"}),
              ref=lambda x, **kw: np.asarray(bool(x.all())), nondiff="boolean output")]
)
