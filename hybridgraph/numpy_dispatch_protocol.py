"""`mx.numpy_dispatch_protocol`: MXNet 1.9's names for NumPy's dispatch protocols on mx.np arrays.

The lists of numpy functions and ufuncs that run as mx.np functions, and the decorators
MXNet's tests use; the protocols themselves are nd/numpy/protocol.py.
"""
from __future__ import annotations

from .nd.numpy.protocol import (ARRAY_FUNCTION_DICT as _NUMPY_ARRAY_FUNCTION_DICT,  # noqa: F401
                                ARRAY_FUNCTION_LIST as _NUMPY_ARRAY_FUNCTION_LIST,
                                ARRAY_UFUNC_DICT as _NUMPY_ARRAY_UFUNC_DICT,
                                ARRAY_UFUNC_LIST as _NUMPY_ARRAY_UFUNC_LIST,
                                with_array_function_protocol, with_array_ufunc_protocol)

__all__ = ["with_array_function_protocol", "with_array_ufunc_protocol"]
