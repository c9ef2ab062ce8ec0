"""`mx.np.random`: sampling with MXNet 1.9's signatures (`size=`, `ctx=` / `device=`, `out=`),
drawn by the registry's `_npi_uniform` / `_npi_normal` / `_npi_random_randint` from the
per-device generator that `mx.random.seed` / `np.random.seed` reseed."""
from __future__ import annotations

from typing import Any

import numpy as onp

from .. import rng
from ..backend import current_context
from ..ndarray import NDArray
from .multiarray import array_from, call, ndarray


def seed(seed: int, ctx: Any = "all") -> None:  # noqa: A002
    """Reseed every device's generator (MXNet's `mx.np.random.seed`)."""
    rng.seed(seed)


def _size(size) -> tuple | None:
    if size is None or size == ():   # MXNet: () means "the parameters' shape", as None
        return None
    return (int(size),) if isinstance(size, (int, onp.integer)) else tuple(size)


def _sample(op: str, p1: str, v1, p2: str | None = None, v2=None, size=None, dtype=None, ctx=None,
            device=None, out=None, with_dtype: bool = True):
    """Call a sampler: array parameters become inputs (input1, input2 in order), numbers attributes."""
    inputs, attrs = [], {"size": _size(size), "ctx": ctx or device or current_context()}
    if with_dtype:
        attrs["dtype"] = "float32" if dtype is None else onp.dtype(dtype).name
    for name, v in ((p1, v1), (p2, v2)):
        if name is None:
            continue
        if isinstance(v, NDArray) or getattr(v, "_is_symbolic", False):
            inputs.append(v)
        elif isinstance(v, (int, float, onp.number)):
            attrs[name] = float(v)
        else:
            raise ValueError("Distribution parameters must be either mxnet.numpy.ndarray or numbers")
    return call(op, inputs, attrs, out=out)


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, device=None, out=None) -> ndarray:
    return _sample("_npi_uniform", "low", low, "high", high, size, dtype, ctx, device, out)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, device=None, out=None) -> ndarray:
    return _sample("_npi_normal", "loc", loc, "scale", scale, size, dtype, ctx, device, out)


def rand(*size, **kwargs) -> ndarray:
    return uniform(size=size, **kwargs)


def randn(*size, **kwargs) -> ndarray:
    return normal(size=size, **kwargs)


def randint(low, high=None, size=None, dtype=None, ctx=None, device=None, out=None) -> ndarray:
    if high is None:
        low, high = 0, low
    return call("_npi_random_randint", [], {"low": int(low), "high": int(high), "shape": _size(size) or (),
                                            "ctx": ctx or device or current_context(),
                                            "dtype": "int64" if dtype is None else onp.dtype(dtype).name}, out=out)


def choice(a, size=None, replace=True, p=None, ctx=None, device=None, out=None) -> ndarray:
    """Samples from `a` (an int n: range(n)), with the per-device generator."""
    ctx = ctx or device or current_context()
    pool = a.asnumpy() if isinstance(a, NDArray) else a
    probs = p.asnumpy() if isinstance(p, NDArray) else p
    res = rng.generator(ctx).choice(pool, size=_size(size), replace=replace, p=probs)
    res = onp.asarray(res, dtype=onp.int64 if isinstance(pool, int) else None)
    if out is not None:
        out[...] = res
        return out
    return array_from(res, ctx)


def shuffle(x: ndarray) -> None:
    """Shuffle along the first axis, in place."""
    perm = rng.generator(x.ctx).permutation(x.shape[0])
    x[...] = x.asnumpy()[perm]


def multinomial(n: int, pvals, size=None) -> ndarray:
    """Counts of `n` draws over the categories `pvals` (int64; shape `size + (len(pvals),)`)."""
    probs = pvals.asnumpy() if isinstance(pvals, NDArray) else onp.asarray(pvals, dtype=onp.float64)
    ctx = current_context()
    probs = probs.astype(onp.float64).reshape(-1)
    shape = (_size(size) or ()) + (probs.size,)
    if probs.size == 0 or 0 in shape:   # no categories or no draws: an empty result (MXNet)
        return array_from(onp.zeros(shape, dtype=onp.int64), ctx)
    probs = probs / probs.sum()   # float32 probabilities may sum to 1 + eps (numpy refuses > 1)
    res = rng.generator(ctx).multinomial(int(n), probs, size=_size(size))
    return array_from(onp.asarray(res, dtype=onp.int64), ctx)


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, device=None, out=None) -> ndarray:
    """exp of normal samples (differentiable in array mean / sigma)."""
    from .functions import exp  # noqa: PLC0415 - functions imports this module's siblings
    return exp(normal(mean, sigma, size, dtype, ctx, device, out))


def logistic(loc=0.0, scale=1.0, size=None, ctx=None, device=None, out=None) -> ndarray:
    return _sample("_npi_logistic", "loc", loc, "scale", scale, size, None, ctx, device, out, with_dtype=False)


def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, device=None, out=None) -> ndarray:
    return _sample("_npi_gumbel", "loc", loc, "scale", scale, size, None, ctx, device, out, with_dtype=False)


def exponential(scale=1.0, size=None, ctx=None, device=None, out=None) -> ndarray:
    return _sample("_npi_exponential", "scale", scale, size=size, ctx=ctx, device=device, out=out, with_dtype=False)


def rayleigh(scale=1.0, size=None, ctx=None, device=None, out=None) -> ndarray:
    return _sample("_npi_rayleigh", "scale", scale, size=size, ctx=ctx, device=device, out=out, with_dtype=False)


def weibull(a, size=None, ctx=None, device=None, out=None) -> ndarray:
    return _sample("_npi_weibull", "a", a, size=size, ctx=ctx, device=device, out=out, with_dtype=False)


def pareto(a, size=None, ctx=None, device=None, out=None) -> ndarray:
    return _sample("_npi_pareto", "a", a, size=size, ctx=ctx, device=device, out=out, with_dtype=False)


def power(a, size=None, ctx=None, device=None, out=None) -> ndarray:
    return _sample("_npi_powerd", "a", a, size=size, ctx=ctx, device=device, out=out)


def gamma(shape, scale=1.0, size=None, dtype=None, ctx=None, device=None, out=None) -> ndarray:
    return _sample("_npi_gamma", "shape", shape, "scale", scale, size, dtype, ctx, device, out)


def beta(a, b, size=None, dtype=None, ctx=None, device=None) -> ndarray:
    """X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b), drawn in float64 (as MXNet)."""
    x = gamma(a, 1.0, size=size, dtype="float64", ctx=ctx, device=device)
    y = gamma(b, 1.0, size=size, dtype="float64", ctx=ctx, device=device)
    return (x / (x + y)).astype("float32" if dtype is None else dtype)


def chisquare(df, size=None, dtype=None, ctx=None, device=None) -> ndarray:
    """Chi-square samples: Gamma(df / 2, scale 2), numpy's distribution (MXNet 1.9.1 draws
    Gamma(df / 2, 1 / 2), a quarter of the mean; this follows the documented distribution)."""
    return gamma(df / 2, 2.0, size=size, dtype=dtype, ctx=ctx, device=device)


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None) -> ndarray:
    """Samples of N-D normals; shape `size + broadcast(mean, cov[..., 0])` (`_npi_mvn_fallback`)."""
    if check_valid is not None:
        raise NotImplementedError("Parameter `check_valid` is not supported")
    if tol is not None:
        raise NotImplementedError("Parameter `tol` is not supported")
    return call("_npi_mvn_fallback", [mean, cov], {"size": _size(size)})
