"""`npx.random`: MXNet 1.9's numpy-extension samplers (`seed`, `bernoulli`, `uniform_n`,
`normal_n`) over the registry's `_npi_bernoulli` / `_npi_uniform_n` / `_npi_normal_n`."""
from __future__ import annotations

import numpy as onp

from ..backend import current_context
from ..numpy.multiarray import ndarray
from ..numpy.random import _sample, _size


def seed(seed: int, ctx="all") -> None:  # noqa: A002 - MXNet's name
    """Reseed the random generators (`npx.random.seed(seed)`)."""
    from ..rng import seed as _seed  # noqa: PLC0415
    _seed(seed, ctx)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None) -> ndarray:
    """0/1 samples, 1 with probability `prob` (or sigmoid(`logit`)); give exactly one of them."""
    if (prob is None) == (logit is None):
        raise ValueError(f"Either `prob` or `logit` must be specified, but not both. Received prob={prob}, "
                         f"logit={logit}")
    attrs = {"prob": None, "logit": None, "is_logit": logit is not None, "size": _size(size),
             "ctx": ctx or current_context(), "dtype": "float32" if dtype is None else onp.dtype(dtype).name}
    value = logit if logit is not None else prob
    from ..numpy.multiarray import call  # noqa: PLC0415
    if isinstance(value, (int, float, onp.number)):
        attrs["logit" if logit is not None else "prob"] = float(value)
        return call("_npi_bernoulli", [], attrs, out=out)
    return call("_npi_bernoulli", [value], attrs, out=out)


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None) -> ndarray:
    """Uniform samples of shape `batch_shape + broadcast(low, high)`."""
    return _sample("_npi_uniform_n", "low", low, "high", high, batch_shape, dtype, ctx)


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None) -> ndarray:
    """Normal samples of shape `batch_shape + broadcast(loc, scale)`."""
    return _sample("_npi_normal_n", "loc", loc, "scale", scale, batch_shape, dtype, ctx)
