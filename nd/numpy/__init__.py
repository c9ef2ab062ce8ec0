"""`mx.np`: MXNet 1.9's NumPy-compatible front end (`from hybridgraph import np`).

`ndarray` (multiarray.py) is an NDArray subclass with numpy semantics; the functions
(functions.py), `np.random` and `np.linalg` call the registry's `_npi_*` / `_np_*`
operators, so the same code runs eagerly, under autograd and hybridized.
"""
from __future__ import annotations

import numpy as _onp

from . import linalg, random  # noqa: F401
from .functions import *  # noqa: F401,F403
from .functions import __all__ as _functions_all
from .functions_ext import *  # noqa: F401,F403
from .functions_ext import __all__ as _ext_all
from .multiarray import array, ndarray  # noqa: F401

float16, float32, float64 = _onp.float16, _onp.float32, _onp.float64
int8, int32, int64, uint8, bool_ = _onp.int8, _onp.int32, _onp.int64, _onp.uint8, _onp.bool_
bool = _onp.bool_  # noqa: A001 - numpy's alias
dtype = _onp.dtype
pi, e, inf, nan, newaxis, PZERO, NZERO = _onp.pi, _onp.e, _onp.inf, _onp.nan, None, 0.0, -0.0
finfo, iinfo = _onp.finfo, _onp.iinfo

__all__ = ["ndarray", "array", "linalg", "random", *_functions_all, *_ext_all]  # noqa: PLE0604 - a list of str
