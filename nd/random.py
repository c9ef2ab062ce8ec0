"""`mx.nd.random` / `mx.random`: random sampling with MXNet 1.9.1's signatures.

Scalar distribution parameters call the `_random_<dist>` operators (output shape
from `shape`, default one sample); NDArray parameters call `_sample_<dist>`, which
draws `shape` samples per parameter entry. Every draw comes from the per-device
generators of `nd.rng`, reseeded by `seed`.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from . import rng
from .backend import Context, current_context
from .dispatch import invoke
from .ndarray import NDArray
from .registry import get_op

__all__ = ["seed", "uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint",
           "uniform_like", "normal_like", "gamma_like", "exponential_like", "poisson_like",
           "negative_binomial_like", "generalized_negative_binomial_like"]


class _NullType:
    """MXNet's `_Null`: "argument not given" (distinct from None)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "_Null"

    def __bool__(self) -> bool:
        return False


_Null = _NullType()
_NUMBERS = (numbers.Number, np.number)


def seed(seed_state: int, ctx: Any = "all") -> None:
    """Seed the random number generators (`mx.random.seed`).

    With ctx="all" (the default) every device is seeded, each mixing in its device
    id, so different devices draw different numbers. With a Context only that
    device is seeded, from the seed alone: devices of one kind seeded this way
    draw the same sequence. Dropout and every random operator use these generators.
    """
    if isinstance(seed_state, bool) or not isinstance(seed_state, (int, np.integer)):
        raise ValueError(f"seed_state must be int, got {type(seed_state).__name__}")
    if not (isinstance(ctx, str) and ctx == "all"):
        ctx = _as_context(ctx)
    rng.seed(int(seed_state), ctx)


def _as_context(ctx: Context | str) -> Context:
    """A Context from a Context or a string such as "cpu(0)" / "gpu(1)"."""
    if isinstance(ctx, Context):
        return ctx
    if not isinstance(ctx, str):
        raise TypeError(f"seed: ctx must be 'all', a Context or a string like 'gpu(0)', got {ctx!r}")
    dev, _, rest = str(ctx).strip().partition("(")
    return Context(dev, int(rest.rstrip(")") or 0))


def _given(v: Any) -> bool:
    return v is not _Null and v is not None


def _random_helper(dist: str, params: list, shape, dtype, ctx, out, kwargs) -> NDArray:
    """Dispatch on the parameter types as MXNet's `_random_helper` does."""
    if isinstance(params[0], NDArray):
        for p in params[1:]:
            if not isinstance(p, NDArray):
                raise ValueError("Distribution parameters must all have the same type, but got "
                                 f"both {type(params[0])} and {type(p)}.")
        attrs = dict(kwargs)
        if _given(shape):
            attrs["shape"] = shape
        if _given(dtype):
            attrs["dtype"] = dtype
        return invoke(get_op(f"_sample_{dist}"), list(params), attrs, out=out)
    if isinstance(params[0], _NUMBERS):
        for p in params[1:]:
            if not isinstance(p, _NUMBERS):
                raise ValueError("Distribution parameters must all have the same type, but got "
                                 f"both {type(params[0])} and {type(p)}.")
        op = get_op(f"_random_{dist}")
        names = [n for n in op.schema.attrs if n not in ("shape", "ctx", "dtype")]
        attrs = dict(zip(names, params), **kwargs)
        if not _given(shape):
            shape = out.shape if out is not None else 1
        attrs["shape"] = shape
        if _given(dtype):
            attrs["dtype"] = dtype
        elif out is not None:
            attrs["dtype"] = out.dtype
        attrs["ctx"] = out.context if out is not None and ctx is None else (ctx or current_context())
        return invoke(op, [], attrs, out=out)
    raise ValueError(f"Distribution parameters must be either NDArray or numbers, but got {type(params[0])}.")


def uniform(low=0, high=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from a uniform distribution on [low, high). With NDArray `low`/`high`
    of shape (x, y) the result has shape (x, y) + shape."""
    return _random_helper("uniform", [low, high], shape, dtype, ctx, out, kwargs)


def normal(loc=0, scale=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from a normal distribution with mean `loc` and standard deviation `scale`."""
    return _random_helper("normal", [loc, scale], shape, dtype, ctx, out, kwargs)


def randn(*shape, **kwargs) -> NDArray:
    """Normal samples of the given shape: `randn(2, 3, loc=0, scale=1)`."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    dtype = kwargs.pop("dtype", _Null)
    ctx = kwargs.pop("ctx", None)
    out = kwargs.pop("out", None)
    if not isinstance(loc, (int, float, NDArray)) or not isinstance(scale, (int, float, NDArray)):
        raise ValueError(f"randn: loc and scale must be numbers or NDArrays, got {loc!r}, {scale!r}")
    return _random_helper("normal", [loc, scale], shape or _Null, dtype, ctx, out, kwargs)


def poisson(lam=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from a Poisson distribution with rate `lam` (returned as floats)."""
    return _random_helper("poisson", [lam], shape, dtype, ctx, out, kwargs)


def exponential(scale=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from an exponential distribution with scale `scale` (rate 1/scale)."""
    lam = 1.0 / scale
    return _random_helper("exponential", [lam], shape, dtype, ctx, out, kwargs)


def gamma(alpha=1, beta=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from a gamma distribution with shape `alpha` and scale `beta`."""
    return _random_helper("gamma", [alpha, beta], shape, dtype, ctx, out, kwargs)


def negative_binomial(k=1, p=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from a negative binomial distribution: failures before `k` successes
    with success probability `p` (returned as floats)."""
    return _random_helper("negative_binomial", [k, p], shape, dtype, ctx, out, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=_Null, dtype=_Null, ctx=None, out=None,
                                  **kwargs) -> NDArray:
    """Samples from a generalized negative binomial distribution with mean `mu` and
    dispersion `alpha` (returned as floats)."""
    return _random_helper("generalized_negative_binomial", [mu, alpha], shape, dtype, ctx, out, kwargs)


def randint(low, high, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs) -> NDArray:
    """Random integers from [low, high) (int32 unless dtype='int64')."""
    if isinstance(low, NDArray) or isinstance(high, NDArray):
        raise ValueError("randint: low and high must be integers; NDArray bounds are not supported by MXNet's "
                         "randint either")
    return _random_helper("randint", [low, high], shape, dtype, ctx, out, kwargs)


def multinomial(data: NDArray, shape=_Null, get_prob=False, out=None, dtype="int32", **kwargs):
    """Sample class indices from the distributions on the last axis of `data`;
    with get_prob=True also return the log-likelihood of each sample."""
    attrs = dict(kwargs, get_prob=get_prob, dtype=dtype)
    if _given(shape):
        attrs["shape"] = shape
    return invoke(get_op("_sample_multinomial"), [data], attrs, out=out)


def shuffle(data: NDArray, **kwargs) -> NDArray:
    """A copy of `data` with its first axis randomly permuted."""
    out = kwargs.pop("out", None)
    return invoke(get_op("_shuffle"), [data], kwargs, out=out)


def _like(dist: str):
    def fn(data: NDArray = None, out: NDArray | None = None, name: str | None = None, **kwargs) -> NDArray:
        return invoke(get_op(f"_random_{dist}_like"), [data], kwargs, out=out, name=name)
    fn.__name__ = fn.__qualname__ = f"{dist}_like"
    fn.__doc__ = (f"Samples of the {dist.replace('_', ' ')} distribution with the shape and dtype of `data` "
                  f"(`_random_{dist}_like`); parameters as in `{dist}`.")
    return fn


uniform_like = _like("uniform")
normal_like = _like("normal")
gamma_like = _like("gamma")
exponential_like = _like("exponential")
poisson_like = _like("poisson")
negative_binomial_like = _like("negative_binomial")
generalized_negative_binomial_like = _like("generalized_negative_binomial")
