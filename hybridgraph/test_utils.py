"""`mx.test_utils`: the helpers MXNet's own tests, and users' operator tests, are written with.

Comparisons (`assert_almost_equal`, `almost_equal`, `same`) use MXNet's
per-dtype default tolerances; the symbolic checks (`check_numeric_gradient`,
`check_symbolic_forward`, `check_symbolic_backward`, `check_consistency`)
bind a Symbol with the executor and compare against numpy values or finite
differences, exactly as MXNet 1.9.1's versions do.

This module is the `mx.test_utils` namespace and holds the small environment
and structure helpers; the rest lives in compare.py (contexts, dtypes,
tolerances, comparisons), random_data.py and gradient_check.py (running
Symbols, numeric gradients, forward/backward/consistency checks).
"""
from __future__ import annotations

# MXNet's test_utils has no __all__: `from mxnet.test_utils import *` hands out every public name,
# the standard modules it imports included (tests rely on `np`, `mx`, `os`, `json` ... arriving that
# way). __all__ below lists exactly those names that hybridgraph provides, plus set_env_var.
import bz2  # noqa: F401
import contextlib
import errno  # noqa: F401
import gzip  # noqa: F401
import json
import logging  # noqa: F401
import numbers  # noqa: F401
import os
import platform
import struct  # noqa: F401
import sys
import time  # noqa: F401
import traceback  # noqa: F401
import zipfile  # noqa: F401
from collections import OrderedDict  # noqa: F401
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.random as rnd  # noqa: F401
import numpy.testing as npt  # noqa: F401

import hybridgraph as mx
from hybridgraph.nd import backend as _backend
from hybridgraph.nd import array  # noqa: F401
from hybridgraph.nd.backend import Context, current_context  # noqa: F401
from hybridgraph.symbol import Symbol

from .compare import (almost_equal, assert_allclose, assert_almost_equal, assert_almost_equal_ignore_nan,
                      assert_almost_equal_with_err, assert_exception, default_atols, default_context, default_dtype,
                      default_numeric_eps, default_rtols, effective_dtype, get_atol, get_etol, get_rtol,
                      get_tolerance, get_tols, retry, same, same_array, set_default_context)
from .random_data import (np_reduce, rand_coord_2d, rand_ndarray, rand_shape_2d, rand_shape_3d, rand_shape_nd,
                          random_arrays, random_sample, random_uniform_arrays)
from .gradient_check import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                             check_symbolic_forward, numeric_grad, simple_forward)
from .runtime import Features
from .stat_checks import chi_square_check, gen_buckets_probs_with_ppf, mean_check, var_check, verify_generator
from .testing_data import (DummyIter, download, download_model, get_bz2_data, get_cifar10, get_im2rec_path,
                           get_mnist, get_mnist_iterator, get_mnist_pkl, get_mnist_ubyte, get_zip_data)
from .util import get_cuda_compute_capability, getenv, setenv, use_np

try:
    import scipy.stats as ss
except ImportError:  # scipy is optional; chi_square_check needs it
    ss = None
try:
    import requests  # noqa: F401 - exported as MXNet's module does, when installed
    _HAVE_REQUESTS = True
except ImportError:
    _HAVE_REQUESTS = False

__all__ = ["Context", "DummyIter", "Features", "OrderedDict", "Symbol", "almost_equal", "array", "assert_allclose",
           "assert_almost_equal", "assert_almost_equal_ignore_nan", "assert_almost_equal_with_err",
           "assert_exception", "assign_each", "assign_each2", "bz2", "checkShapes", "check_consistency",
           "check_gluon_hybridize_consistency", "check_numeric_gradient", "check_speed", "check_symbolic_backward",
           "check_symbolic_forward", "chi_square_check", "collapse_sum_like", "compare_ndarray_tuple",
           "compare_optimizer", "contextmanager", "create_2d_tensor", "create_sparse_array",
           "create_sparse_array_zd", "create_vector", "current_context", "default_atols", "default_context",
           "default_dtype", "default_numeric_eps", "default_rtols", "discard_stderr", "download", "download_model",
           "effective_dtype", "environment", "errno", "gen_buckets_probs_with_ppf", "get_atol", "get_bz2_data",
           "get_cifar10", "get_cuda_compute_capability", "get_etol", "get_identity_mat", "get_identity_mat_batch",
           "get_im2rec_path", "get_mnist", "get_mnist_iterator", "get_mnist_pkl", "get_mnist_ubyte", "get_rtol",
           "get_tolerance", "get_tols", "get_zip_data", "getenv", "gzip", "has_tvm_ops", "is_aarch64_run",
           "is_cd_run", "is_op_runnable", "json", "list_gpus", "locationError", "logging", "mean_check", "mx",
           "new_matrix_with_real_eigvals_2d", "new_matrix_with_real_eigvals_nd", "new_orthonormal_matrix_2d",
           "new_sym_matrix_with_real_eigvals_2d", "new_sym_matrix_with_real_eigvals_nd", "np", "np_reduce", "npt",
           "numbers", "numeric_grad", "os", "platform", "rand_coord_2d", "rand_ndarray", "rand_shape_2d",
           "rand_shape_3d", "rand_shape_nd", "rand_sparse_ndarray", "random_arrays", "random_sample",
           "random_uniform_arrays", "retry", "rnd", "same", "same_array", "same_symbol_structure",
           "set_default_context", "setenv", "shuffle_csr_column_indices", "simple_forward", "ss", "struct", "sys",
           "time", "traceback", "use_np", "var_check", "verify_generator", "zipfile", "set_env_var"]
if _HAVE_REQUESTS:
    __all__.append("requests")


def list_gpus() -> range:
    """The ids of the GPUs hybridgraph can use (via cupy)."""
    return range(_backend.num_gpus())


def collapse_sum_like(a: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Sum `a` down to `shape`, undoing numpy broadcasting (for reference gradients)."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    axes = []
    ndim_diff = len(a.shape) - len(shape)
    for i in range(ndim_diff):
        axes.append(i)
    for i, s in enumerate(shape):
        if s != a.shape[i + ndim_diff]:
            assert s == 1
            axes.append(i + ndim_diff)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def same_symbol_structure(sym1: Symbol, sym2: Symbol) -> bool:
    """Whether two symbols have the same operators in the same order and wiring."""
    conf1, conf2 = json.loads(sym1.tojson()), json.loads(sym2.tojson())
    nodes1, nodes2 = conf1["nodes"], conf2["nodes"]
    if len(nodes1) != len(nodes2):
        return False
    for node1, node2 in zip(nodes1, nodes2):
        if node1["op"] != node2["op"] or node1["inputs"] != node2["inputs"]:
            return False
    return True


# -- environment variables ----------------------------------------------------------------------

def set_env_var(key: str, val: str, default_val: str = "") -> str:
    """Set environment variable `key` to `val`; return its previous value (`default_val` if unset).

    Parameters
    ----------
    key : str
        The variable name.
    val : str
        The new value.
    default_val : str, optional
        What to return when the variable was not set.
    """
    prev_val = os.environ.get(key, default_val)
    os.environ[key] = val
    return prev_val


@contextlib.contextmanager
def environment(*args: Any) -> Iterator[None]:
    """Set environment variables for the body of a `with` block, restoring them afterwards.

    Parameters
    ----------
    args
        Either ``name, value`` for one variable or one dict ``{name: value}``;
        a value of None unsets the variable.

    Examples
    --------
    >>> with environment('MXNET_ENGINE_TYPE', 'NaiveEngine'):
    ...     run_test()
    """
    if len(args) == 1 and isinstance(args[0], dict):
        env_vars = args[0]
    else:
        assert len(args) == 2, "Expecting one dict arg or two args: env var name and value"
        env_vars = {args[0]: args[1]}
    snapshot = {x: os.environ.get(x) for x in env_vars}

    def set_environ(values: dict) -> None:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    set_environ(env_vars)
    try:
        yield
    finally:
        set_environ(snapshot)


from .test_utils_more import (assign_each, assign_each2, check_gluon_hybridize_consistency, check_speed,  # noqa: E402
                              checkShapes, locationError,
                              compare_ndarray_tuple, compare_optimizer, create_2d_tensor, create_sparse_array,
                              create_sparse_array_zd, create_vector, discard_stderr, get_identity_mat,
                              get_identity_mat_batch, has_tvm_ops, is_aarch64_run, is_cd_run, is_op_runnable,
                              new_matrix_with_real_eigvals_2d, new_matrix_with_real_eigvals_nd,
                              new_orthonormal_matrix_2d, new_sym_matrix_with_real_eigvals_2d,
                              new_sym_matrix_with_real_eigvals_nd, rand_sparse_ndarray, shuffle_csr_column_indices)
