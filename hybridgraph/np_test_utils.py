"""mx.test_utils helpers of MXNet 1.9's numpy tests: `use_np`, `check_gluon_hybridize_consistency`,
statistical checks of samplers (`gen_buckets_probs_with_ppf`, `verify_generator`), matrices with
real eigenvalues, and the capability probes (`is_op_runnable`, `has_tvm_ops`)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as onp

from hybridgraph.nd.numpy.mode import use_np  # noqa: F401 - re-exported as mx.test_utils.use_np


def is_op_runnable() -> bool:
    """Whether np operators run on the default context (always: numpy/cupy kernels)."""
    return True


def has_tvm_ops() -> bool:
    """hybridgraph has no TVM-generated operators."""
    return False


def check_gluon_hybridize_consistency(net_builder: Callable, data_l: Sequence, numpy_func: Callable | None = None,
                                      test_grad: bool = True, rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """A network built by `net_builder()` gives the same outputs (and input gradients) eagerly
    and hybridized, and equals `numpy_func` on the inputs' numpy values when given."""
    from hybridgraph import autograd  # noqa: PLC0415 - the np front end imports test-free modules
    saved_out, saved_grads = None, None
    for hybridize in (False, True):
        net = net_builder()
        net.initialize()
        if hybridize:
            net.hybridize()
        ins = [x.copy() for x in data_l]
        for x in ins:
            x.attach_grad()
        with autograd.record():
            out = net(*ins)
        outs = out if isinstance(out, (list, tuple)) else [out]
        if test_grad:
            autograd.backward([o for o in outs if o.dtype.kind == "f"])
        vals = [o.asnumpy() for o in outs]
        grads = [x.grad.asnumpy() for x in ins] if test_grad else []
        if saved_out is None:
            saved_out, saved_grads = vals, grads
            if numpy_func is not None:
                want = numpy_func(*[x.asnumpy() for x in data_l])
                want = want if isinstance(want, (list, tuple)) else [want]
                for got, w in zip(vals, want):
                    onp.testing.assert_allclose(got, onp.asarray(w), rtol=rtol, atol=atol)
        else:
            for a, b in zip(vals + grads, saved_out + saved_grads):
                onp.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def gen_buckets_probs_with_ppf(ppf: Callable, nbuckets: int) -> tuple[list, list]:
    """`nbuckets` equiprobable buckets of a distribution given its inverse CDF."""
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def _bucket_counts(samples: onp.ndarray, buckets: Sequence) -> onp.ndarray:
    if isinstance(buckets[0], (list, tuple)):
        return onp.array([((samples >= lo) & (samples < hi)).sum() for lo, hi in buckets])
    return onp.array([(samples == b).sum() for b in buckets])


def verify_generator(generator: Callable, buckets: Sequence, probs: Sequence, nsamples: int = 1000000,
                     nrepeat: int = 5, success_rate: float = 0.2, alpha: float = 0.05) -> list:
    """Chi-square goodness-of-fit of `generator(n)`'s samples against bucket probabilities:
    at least `success_rate` of `nrepeat` draws must pass at level `alpha`."""
    from scipy import stats  # noqa: PLC0415 - scipy is a test-only dependency
    expected = onp.asarray(probs, dtype=onp.float64) * nsamples
    p_values = []
    for _ in range(nrepeat):
        samples = generator(nsamples)
        samples = samples.asnumpy() if hasattr(samples, "asnumpy") else onp.asarray(samples)
        counts = _bucket_counts(samples.reshape(-1), buckets)
        p_values.append(stats.chisquare(counts, expected * counts.sum() / max(expected.sum(), 1)).pvalue)
    passed = sum(p > alpha for p in p_values)
    if passed < success_rate * nrepeat:
        raise AssertionError(f"generator failed the chi-square test: p-values {p_values}")
    return p_values


def new_matrix_with_real_eigvals_nd(shape: tuple) -> onp.ndarray:
    """Square matrices (batched over leading axes) that have real eigenvalues: P D P^-1."""
    n = shape[-1]
    batch = int(onp.prod(shape[:-2])) if len(shape) > 2 else 1
    out = []
    for _ in range(batch):
        d = onp.diag(onp.random.uniform(-1.0, 1.0, n))
        p = onp.random.uniform(-1.0, 1.0, (n, n)) + n * onp.eye(n)
        out.append(p @ d @ onp.linalg.inv(p))
    return onp.asarray(out).reshape(shape)


def new_sym_matrix_with_real_eigvals_nd(shape: tuple) -> onp.ndarray:
    """Symmetric matrices (batched over leading axes)."""
    a = onp.random.uniform(-1.0, 1.0, shape)
    return (a + onp.swapaxes(a, -1, -2)) / 2

