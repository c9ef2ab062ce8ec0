"""`mx.np.fallback`: the NumPy functions MXNet 1.9.1's `mx.np` offers by running NumPy itself.

They are NumPy's own functions: called with mx.np arrays, NumPy hands them to
`ndarray.__array_function__` (protocol.py), which copies the arrays to NumPy, runs the function
and returns mx.np arrays on the inputs' context (not under `autograd.record()`). The names are
MXNet's list, less those the installed NumPy no longer has (NumPy 2 dropped `alltrue`, `msort`,
`trapz` and the financial functions `npv`, `pv`, `mirr`, `ppmt`, `rate`, `pmt`, which NumPy 1.20-1.x
keep only as stubs that raise, as they do in MXNet 1.9.1 with those versions).
"""
from __future__ import annotations

import warnings

import numpy as onp

# MXNet 1.9.1's python/mxnet/numpy/fallback.py __all__ (plus the four it binds without listing)
_MXNET_FALLBACK = (
    "allclose alltrue apply_along_axis apply_over_axes argpartition argwhere array_equal array_equiv "
    "choose compress corrcoef correlate count_nonzero cov digitize divmod extract flatnonzero float_power "
    "frexp heaviside histogram2d histogram_bin_edges histogramdd i0 in1d interp intersect1d isclose isin "
    "ix_ lexsort min_scalar_type mirr modf msort nanargmax nanargmin nancumprod nancumsum nanmax nanmedian "
    "nanmin nanpercentile nanprod nanquantile ndim npv partition piecewise packbits poly polyadd polydiv "
    "polyfit polyint polymul polysub positive ppmt promote_types ptp pv rate real result_type rollaxis "
    "roots searchsorted select setdiff1d setxor1d signbit size spacing take_along_axis trapz "
    "tril_indices_from trim_zeros triu_indices_from union1d unpackbits unwrap vander").split()
_UNLISTED = ("nanstd", "nansum", "nanvar", "pmt")


def _numpy_function(name: str):
    with warnings.catch_warnings():   # NumPy 1.25+ warns when a deprecated alias is looked up
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return getattr(onp, name, None)
        except RuntimeError:   # NumPy 1.x raises on some removed names
            return None


__all__ = [n for n in _MXNET_FALLBACK if _numpy_function(n) is not None]
globals().update({n: _numpy_function(n) for n in (*__all__, *_UNLISTED) if _numpy_function(n) is not None})
