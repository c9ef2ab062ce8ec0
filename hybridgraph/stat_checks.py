"""Statistical checks of random generators (MXNet's test_utils: mean/var/chi-square checks).

`generator(n)` returns n i.i.d. samples; the checks compare them with the
distribution's mean, variance or bucket probabilities.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def gen_buckets_probs_with_ppf(ppf: Callable, nbuckets: int) -> tuple[list, list]:
    """`nbuckets` equiprobable buckets (from the quantile function `ppf`) and their probabilities."""
    assert nbuckets > 0
    probs = [1.0 / nbuckets for _ in range(nbuckets)]
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator: Callable, mu: float, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample mean lies within mu +- 3 sigma / sqrt(n)."""
    sample_mean = np.array(generator(nsamples)).mean()
    bound = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - bound < sample_mean < mu + bound)


def var_check(generator: Callable, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample variance lies within sigma^2 +- 3 sqrt(2 sigma^4 / (n-1))."""
    sample_var = np.array(generator(nsamples)).var(ddof=1)
    bound = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - bound < sample_var < sigma ** 2 + bound)


def chi_square_check(generator: Callable, buckets: list, probs: Sequence[float],
                     nsamples: int = 1000000) -> tuple[float, np.ndarray, np.ndarray]:
    """Chi-square test of `generator` against `probs` over `buckets`: (p value, observed, expected).

    Buckets are (low, high) ranges for a continuous distribution (ascending,
    disjoint) or the possible values of a discrete one. Needs scipy.
    """
    import scipy.stats as ss  # noqa: PLC0415 - optional dependency
    assert isinstance(buckets, list)
    samples = generator(nsamples)
    assert len(probs) == len(buckets)
    continuous = isinstance(buckets[0], (list, tuple))
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    obs = np.zeros(len(buckets), dtype=np.int64)
    if continuous:
        edges = np.zeros(len(buckets) * 2, dtype=np.float32)
        for i, (lo, hi) in enumerate(buckets):
            assert lo <= hi
            if i < len(buckets) - 1:
                assert hi <= buckets[i + 1][0]
            edges[2 * i], edges[2 * i + 1] = lo, hi
        ids = np.searchsorted(edges, np.asarray(samples), side="right") // 2
        for i in range(len(buckets)):
            obs[i] = (ids == i).sum()
    else:
        values = np.asarray(samples)
        for i, b in enumerate(buckets):
            obs[i] = (values == b).sum()
    _, p = ss.chisquare(f_obs=obs, f_exp=expected)
    return p, obs, expected


def verify_generator(generator: Callable, buckets: list, probs: Sequence[float], nsamples: int = 1000000,
                     nrepeat: int = 5, success_rate: float = 0.2, alpha: float = 0.05) -> list:
    """Repeat `chi_square_check`; AssertionError unless p > alpha in at least `success_rate` of the runs."""
    results = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    pvals = [r[0] for r in results]
    if (np.array(pvals) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError(f"Generator test fails, Chi-square p={pvals}, obs_freq={[r[1] for r in results]}, "
                             f"expected_freq={[r[2] for r in results]}.\nbuckets={buckets}, probs={probs}")
    return pvals
