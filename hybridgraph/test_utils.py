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

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from hybridgraph.nd import backend as _backend
from hybridgraph.symbol import Symbol

from .compare import (almost_equal, assert_allclose, assert_almost_equal, assert_almost_equal_ignore_nan,
                      assert_almost_equal_with_err, assert_exception, default_atols, default_context, default_dtype,
                      default_numeric_eps, default_rtols, effective_dtype, get_atol, get_etol, get_rtol,
                      get_tolerance, get_tols, retry, same, same_array, set_default_context)
from .random_data import (np_reduce, rand_coord_2d, rand_ndarray, rand_shape_2d, rand_shape_3d, rand_shape_nd,
                          random_arrays, random_sample, random_uniform_arrays)
from .gradient_check import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                             check_symbolic_forward, numeric_grad, simple_forward)
from .np_test_utils import (check_gluon_hybridize_consistency, gen_buckets_probs_with_ppf, has_tvm_ops,
                            is_op_runnable, new_matrix_with_real_eigvals_nd, new_sym_matrix_with_real_eigvals_nd,
                            use_np, verify_generator)

__all__ = ["default_context", "set_default_context", "default_dtype", "default_rtols", "default_atols",
           "default_numeric_eps", "effective_dtype", "get_tolerance", "get_tols", "get_rtol", "get_atol",
           "get_etol", "random_arrays", "random_uniform_arrays", "random_sample", "rand_ndarray",
           "rand_shape_2d", "rand_shape_3d", "rand_shape_nd", "rand_coord_2d", "np_reduce", "same",
           "almost_equal", "assert_almost_equal", "assert_allclose", "assert_almost_equal_ignore_nan",
           "assert_almost_equal_with_err", "assert_exception", "retry", "simple_forward", "numeric_grad",
           "check_numeric_gradient", "check_symbolic_forward", "check_symbolic_backward",
           "check_consistency", "list_gpus", "same_array", "set_env_var", "environment",
           "collapse_sum_like", "same_symbol_structure", "use_np", "check_gluon_hybridize_consistency",
           "gen_buckets_probs_with_ppf", "verify_generator", "is_op_runnable", "has_tvm_ops",
           "new_matrix_with_real_eigvals_nd", "new_sym_matrix_with_real_eigvals_nd"]


def list_gpus() -> list[int]:
    """The ids of the GPUs hybridgraph can use (via cupy)."""
    return list(range(_backend.num_gpus()))


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
    import json
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
