"""Special functions (erf, erfinv, gamma, gammaln, digamma) for any `xp`.

numpy has none of them; scipy is used when installed, cupy brings its own
(cupyx.scipy.special), and otherwise exact scalar math functions are
vectorised. Only this file knows where they come from.
"""
from __future__ import annotations

import math

import numpy as np


def _scipy():
    try:
        import scipy.special as sp  # noqa: PLC0415 - optional accelerator
    except ImportError:
        return None
    return sp


def _special(xp):
    if xp is np:
        return _scipy()
    import cupyx.scipy.special as csp  # noqa: PLC0415 - GPU only
    return csp


def _vectorize(fn, x):
    out = np.vectorize(fn, otypes=[np.float64])(np.asarray(x, dtype=np.float64))
    return out.astype(x.dtype if x.dtype.kind == "f" else np.float32, copy=False)


def _digamma_scalar(x: float) -> float:
    if x <= 0 and x == math.floor(x):
        return math.nan
    res = 0.0
    if x < 0:  # reflection
        return _digamma_scalar(1 - x) - math.pi / math.tan(math.pi * x)
    while x < 6:
        res -= 1 / x
        x += 1
    f = 1 / (x * x)
    return res + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


def _erfinv_scalar(y: float) -> float:
    if y <= -1:
        return -math.inf if y == -1 else math.nan
    if y >= 1:
        return math.inf if y == 1 else math.nan
    # Giles' single-precision approximation, then Newton steps on math.erf
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5:
        w -= 2.5
        p = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3
        p = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682):
            p = c + p * w
    x = p * y
    for _ in range(3):
        err = math.erf(x) - y
        x -= err / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def erf(xp, x):
    sp = _special(xp)
    return sp.erf(x) if sp is not None else _vectorize(math.erf, x)


def erfinv(xp, x):
    sp = _special(xp)
    return sp.erfinv(x) if sp is not None else _vectorize(_erfinv_scalar, x)


def _gamma_scalar(v: float) -> float:
    try:
        return math.gamma(v)
    except (ValueError, OverflowError):
        return math.nan if v <= 0 and v == math.floor(v) else math.inf


def gamma(xp, x):
    sp = _special(xp)
    return sp.gamma(x) if sp is not None else _vectorize(_gamma_scalar, x)


def gammaln(xp, x):
    sp = _special(xp)
    if sp is not None:
        return sp.gammaln(x)
    return _vectorize(lambda v: math.inf if v <= 0 and v == math.floor(v) else math.lgamma(v), x)


def digamma(xp, x):
    sp = _special(xp)
    return sp.digamma(x) if sp is not None else _vectorize(_digamma_scalar, x)
