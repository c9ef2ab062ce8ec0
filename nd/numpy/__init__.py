"""`mx.np`: MXNet 1.9's NumPy-compatible front end (`from hybridgraph import np`).

`ndarray` (multiarray.py) is an NDArray subclass with numpy semantics; the functions
(functions.py), `np.random` and `np.linalg` call the registry's `_npi_*` / `_np_*`
operators, so the same code runs eagerly, under autograd and hybridized.
"""
from __future__ import annotations

import sys as _sys

import numpy as _onp

from . import fallback, fallback_linalg, linalg, random  # noqa: F401
from .functions import *  # noqa: F401,F403
from .functions import __all__ as _functions_all
from .functions_ext import *  # noqa: F401,F403
from .functions_ext import __all__ as _ext_all
from .functions_extra1 import *  # noqa: F401,F403
from .functions_extra1 import __all__ as _extra1_all
from .functions_extra2 import *  # noqa: F401,F403
from .functions_extra2 import __all__ as _extra2_all
from .index_tricks import unravel_index  # noqa: F401
from .multiarray import array, ndarray  # noqa: F401
from .protocol import register as _register_protocols

float16, float32, float64 = _onp.float16, _onp.float32, _onp.float64
int8, int32, int64, uint8, bool_ = _onp.int8, _onp.int32, _onp.int64, _onp.uint8, _onp.bool_
bool = _onp.bool_  # noqa: A001 - numpy's alias
dtype = _onp.dtype
pi, e, inf, nan, newaxis, PZERO, NZERO = _onp.pi, _onp.e, _onp.inf, _onp.nan, None, 0.0, -0.0
finfo, iinfo = _onp.finfo, _onp.iinfo

# MXNet's mx.np also offers NumPy's own functions for what it does not implement (fallback.py)
_fallback_names = [n for n in fallback.__all__ if n not in globals()]
globals().update({n: getattr(fallback, n) for n in _fallback_names})
for _n in fallback_linalg.__all__:
    if not hasattr(linalg, _n):
        setattr(linalg, _n, getattr(fallback_linalg, _n))

__all__ = ["ndarray", "array", "linalg", "random", "unravel_index", *_functions_all, *_ext_all,  # noqa: PLE0604
           *_extra1_all, *_extra2_all, *_fallback_names]

_register_protocols(_sys.modules[__name__])
