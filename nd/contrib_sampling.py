"""`contrib.rand_zipfian` (nd and sym) and the `sym.random` front ends MXNet 1.9.1 writes in
Python (`multinomial`, `shuffle`, `randn`); each is composed of registry operators."""
from __future__ import annotations

import math
from typing import Any

_NULL = object()


def _zipfian(F: Any, true_classes: Any, num_sampled: int, range_max: int, **ctx: Any) -> tuple:  # noqa: N803
    """Candidates drawn log-uniformly from [0, range_max) with P(c) = log((c + 2) / (c + 1)) / log(range_max + 1),
    and the expected counts of `true_classes` and of the candidates in `num_sampled` draws."""
    log_range = math.log(range_max + 1)
    rand = F.random.uniform(0, log_range, shape=(num_sampled,), dtype="float64", **ctx)
    sampled = (rand.exp() - 1).astype("int64") % range_max      # in [0, range_max)
    true_f = true_classes.astype("float64")
    count_true = ((true_f + 2.0) / (true_f + 1.0)).log() / log_range * num_sampled
    sampled_f = sampled.astype("float64")
    count_sampled = ((sampled_f + 2.0) / (sampled_f + 1.0)).log() / log_range * num_sampled
    return sampled, count_true, count_sampled


def nd_rand_zipfian(true_classes: Any, num_sampled: int, range_max: int, ctx: Any = None) -> tuple:
    """`nd.contrib.rand_zipfian`: (sampled classes int64, expected count of each true class, expected count of
    each sampled class), drawn on `ctx` (default: the current context)."""
    from hybridgraph import nd  # noqa: PLC0415 - the generated op functions
    ctx = nd.current_context() if ctx is None else ctx
    return _zipfian(nd, true_classes.as_in_context(ctx), num_sampled, range_max, ctx=ctx)


def sym_rand_zipfian(true_classes: Any, num_sampled: int, range_max: int) -> tuple:
    """`sym.contrib.rand_zipfian`: the three outputs of `nd.contrib.rand_zipfian` as Symbols."""
    from hybridgraph import symbol  # noqa: PLC0415
    if not isinstance(true_classes, symbol.Symbol):
        raise TypeError(f"sym.contrib.rand_zipfian: true_classes must be a Symbol, got {type(true_classes).__name__}")
    return _zipfian(symbol, true_classes, num_sampled, range_max)


def sym_multinomial(data: Any, shape: Any = _NULL, get_prob: bool = True, dtype: str = "int32", **kwargs: Any):
    """`sym.random.multinomial`: class indices drawn from the distributions on the last axis of `data`
    (with `get_prob`, MXNet's symbolic default, also their log-likelihoods)."""
    from hybridgraph import symbol  # noqa: PLC0415
    if shape is not _NULL:
        kwargs["shape"] = shape
    return symbol._internal._sample_multinomial(data, get_prob=get_prob, dtype=dtype, **kwargs)


def sym_shuffle(data: Any, **kwargs: Any):
    """`sym.random.shuffle`: `data` with its first axis randomly permuted."""
    from hybridgraph import symbol  # noqa: PLC0415
    return symbol._internal._shuffle(data, **kwargs)


def sym_randn(*shape: int, loc: float = 0, scale: float = 1, dtype: Any = _NULL, **kwargs: Any):
    """`sym.random.randn(*shape)`: normal samples of the given shape."""
    from hybridgraph import symbol  # noqa: PLC0415
    if dtype is not _NULL:
        kwargs["dtype"] = dtype
    return symbol.random.normal(loc=loc, scale=scale, shape=shape, **kwargs)


def install_nd(contrib: Any) -> None:
    contrib.rand_zipfian = nd_rand_zipfian
    nd_rand_zipfian.__name__ = "rand_zipfian"


def install_sym(contrib: Any, random: Any) -> None:
    contrib.rand_zipfian = sym_rand_zipfian
    for name, fn in (("rand_zipfian", sym_rand_zipfian), ("multinomial", sym_multinomial),
                     ("shuffle", sym_shuffle), ("randn", sym_randn)):
        fn.__name__ = fn.__qualname__ = name
    random.multinomial, random.shuffle, random.randn = sym_multinomial, sym_shuffle, sym_randn
