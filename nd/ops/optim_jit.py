"""Compiled momentum-SGD and Adam updates, used with the optional `[jit]` extra (jit.py).

numpy runs `mom = momentum*mom - lr*wd*w - lr*rescale_grad*grad; w += mom` as four passes
over the weight-sized arrays, one of them writing a scratch array: for the Gluon MLP's
training step that was a fifth of the step (the arrays do not stay in the L2 cache between
passes); Adam's update is eleven passes. Compiled, each is one pass with the same float
operations in the same order, so the same bits, a NaN's sign and payload aside (LLVM may
commute an addition; tests/nd/test_optim_jit.py compares them with numpy's paths, the
reference).

Without numba, or with HYBRIDGRAPH_JIT=0, `kernels()` is None and optim.py / optim_multi.py
keep their numpy paths. Gradient clipping keeps numpy's path too.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from . import jit

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class Kernels(NamedTuple):
    """1-D arrays of one length and dtype, scalars of that dtype:
    sgd_mom(w, g, mom, out, momentum, lr_wd, lr_rescale, decay) and its in-place form
    sgd_mom_inplace(w, g, mom, momentum, lr_wd, lr_rescale, decay) (out is w: LLVM's
    vectorised loop only runs on arrays that do not overlap, 3x faster);
    adam_inplace(w, g, mean, var, rescale, wd, beta1, one_minus_beta1, beta2, one_minus_beta2,
    epsilon, lr, rescaled, decay): see `adam`."""

    sgd_mom: Callable
    sgd_mom_inplace: Callable
    adam_inplace: Callable


def kernels() -> Kernels | None:
    """The compiled kernels, or None without numba or with the switch off."""
    return jit.kernels("optim", _compile)


def applies(w, g, mom, out) -> bool:
    """Whether the compiled update takes these numpy arrays: one shape, float32 or float64,
    C-contiguous (so that their 1-D views are views)."""
    dt, shape = w.dtype, w.shape
    return (type(w) is np.ndarray and dt in _FLOATS and type(g) is np.ndarray and type(mom) is np.ndarray
            and type(out) is np.ndarray and g.dtype == dt and mom.dtype == dt and out.dtype == dt
            and g.shape == shape and mom.shape == shape and out.shape == shape and w.flags.c_contiguous
            and g.flags.c_contiguous and mom.flags.c_contiguous and out.flags.c_contiguous)


def sgd_mom(k: Kernels, w, g, mom, out, momentum, lr_wd, lr_rescale, decay: bool) -> None:  # noqa: PLR0917
    """With `k = kernels()`: mom = momentum*mom [- lr_wd*w when `decay`] - lr_rescale*g;
    out = w + mom, in one compiled pass over arrays `applies` accepted; the scalars are of the
    arrays' dtype."""
    if out is w:
        k.sgd_mom_inplace(w.reshape(-1), g.reshape(-1), mom.reshape(-1), momentum, lr_wd, lr_rescale, decay)
    else:
        k.sgd_mom(w.reshape(-1), g.reshape(-1), mom.reshape(-1), out.reshape(-1),
                  momentum, lr_wd, lr_rescale, decay)


def adam(k: Kernels, w, g, mean, var, a) -> None:
    """With `k = kernels()`, Adam's update in place on `w` (adam_update's numpy passes, `a` its
    float32-rounded attributes, no clipping): r = rescale_grad*g [+ wd*w];
    mean = beta1*mean + (1-beta1)*r; var = beta2*var + ((1-beta2)*r)*r;
    w -= (lr*mean) / (sqrt(var) + epsilon)."""
    dt = w.dtype.type
    k.adam_inplace(w.reshape(-1), g.reshape(-1), mean.reshape(-1), var.reshape(-1), dt(a.rescale_grad), dt(a.wd),
                   dt(a.beta1), dt(1.0 - a.beta1), dt(a.beta2), dt(1.0 - a.beta2), dt(a.epsilon), dt(a.lr),
                   a.rescale_grad != 1.0, bool(a.wd))


def _compile() -> Kernels:
    def sgd_mom_kernel(w, g, mom, out, momentum, lr_wd, lr_rescale, decay):  # noqa: PLR0917
        """numpy's passes (mom *= momentum; mom -= w * lr_wd; mom -= g * lr_rescale;
        out = w + mom) per element: each product rounded, then each difference."""
        if decay:
            for i in range(w.shape[0]):
                wi = w[i]
                m = mom[i] * momentum - wi * lr_wd - g[i] * lr_rescale
                mom[i] = m
                out[i] = wi + m
        else:
            for i in range(w.shape[0]):
                m = mom[i] * momentum - g[i] * lr_rescale
                mom[i] = m
                out[i] = w[i] + m

    def sgd_mom_inplace(w, g, mom, momentum, lr_wd, lr_rescale, decay):  # noqa: PLR0917
        """sgd_mom_kernel with out = w."""
        if decay:
            for i in range(w.shape[0]):
                m = mom[i] * momentum - w[i] * lr_wd - g[i] * lr_rescale
                mom[i] = m
                w[i] += m
        else:
            for i in range(w.shape[0]):
                m = mom[i] * momentum - g[i] * lr_rescale
                mom[i] = m
                w[i] += m

    def adam_inplace(w, g, mean, var, rescale, wd, beta1, one_minus_beta1, beta2, one_minus_beta2,  # noqa: PLR0913
                     epsilon, lr, rescaled, decay):
        """adam_update's passes per element: each product, sum, root and quotient rounded
        as numpy rounds them."""
        for i in range(w.shape[0]):
            wi = w[i]
            r = g[i] * rescale if rescaled else g[i]
            if decay:
                r = r + wd * wi
            m = mean[i] * beta1 + r * one_minus_beta1
            mean[i] = m
            v = var[i] * beta2 + r * one_minus_beta2 * r
            var[i] = v
            w[i] = wi - m * lr / (np.sqrt(v) + epsilon)

    return Kernels(jit.njit(sgd_mom_kernel), jit.njit(sgd_mom_inplace), jit.njit(adam_inplace))
