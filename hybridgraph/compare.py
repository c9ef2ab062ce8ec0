"""Part of `mx.test_utils` (hybridgraph/test_utils.py re-exports everything):
the default context and dtype of tests, MXNet's per-dtype default tolerances,
and the array comparisons (`same`, `almost_equal`, `assert_almost_equal`, ...)
with MXNet 1.9.1's semantics and failure messages.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.testing as npt

from hybridgraph.nd import backend as _backend
from hybridgraph.nd.ndarray import NDArray


_FLOAT64 = np.dtype(np.float64)


# -- contexts and dtypes ---------------------------------------------------------------------

def default_context() -> _backend.Context:
    """The context tests run on: the current default context (cpu(0) unless changed)."""
    return _backend.current_context()


def set_default_context(ctx: _backend.Context) -> None:
    """Make `ctx` the default context (also what `default_context()` returns)."""
    _backend._current.set(ctx)


def default_dtype() -> type:
    """The default data type of regression tests: float32."""
    return np.float32


def default_rtols() -> dict:
    """MXNet's default relative tolerance per dtype."""
    return {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5,
            np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.uint8): 0,
            np.dtype(np.int32): 0, np.dtype(np.uint32): 0, np.dtype(np.int64): 0,
            np.dtype(np.uint64): 0}


def default_atols() -> dict:
    """MXNet's default absolute tolerance per dtype."""
    return {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20,
            np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.uint8): 0,
            np.dtype(np.int32): 0, np.dtype(np.uint32): 0, np.dtype(np.int64): 0,
            np.dtype(np.uint64): 0}


def default_numeric_eps() -> dict:
    """The default finite-difference step per dtype (powers of two, exact as input deltas)."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def effective_dtype(dat: Any) -> np.dtype:
    """The dtype whose tolerances apply to `dat` (numpy array, NDArray or scalar).

    MXNet maps float32 on TF32-enabled GPUs to float16; numpy and cupy compute
    float32 in full precision, so this is simply the dtype of `dat`.
    """
    return np.dtype(dat.dtype)


def get_tolerance(dat: Any, tol: Any, default_tol: dict) -> float:
    """`tol` if it is a number, else the entry for `dat`'s dtype in `tol` or `default_tol`."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    return tol.get(dtype, default_tol[dtype])


def get_tols(x: Any, y: Any, rtol: Any, atol: Any) -> tuple[float, float]:
    """The (rtol, atol) for comparing `x` with `y`: the larger default of the two dtypes."""
    if isinstance(x, numbers.Number):
        x = np.array(x)
    if isinstance(y, numbers.Number):
        y = np.array(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol: float | None = None, dtype: Any = _FLOAT64) -> float:
    """`atol`, or the default absolute tolerance of `dtype` (float64: 1e-20) when None."""
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol: float | None = None, dtype: Any = _FLOAT64) -> float:
    """`rtol`, or the default relative tolerance of `dtype` (float64: 1e-5) when None."""
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol: float | None = None) -> float:
    """`etol` (the tolerated fraction of mismatching elements), 0 when None."""
    return 0 if etol is None else etol


# -- comparisons ------------------------------------------------------------------------------------

def _numpy(x: Any) -> Any:
    return x.asnumpy() if isinstance(x, NDArray) else x


def _find_max_violation(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> tuple[tuple, float]:
    """The index of the largest |a - b| / (atol + rtol |b|) and that ratio."""
    with np.errstate(invalid="ignore"):
        absdiff = np.where(np.equal(a, b), 0, np.abs(a - b))
    tol = atol + rtol * np.abs(b)
    violation = absdiff / (tol + 1e-20)
    loc = np.argmax(violation)
    idx = tuple(int(i) for i in np.unravel_index(loc, violation.shape))
    return idx, np.max(violation)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays have the same shape and elements."""
    return np.array_equal(_numpy(a), _numpy(b))


def _check_shapes(a: Any, b: Any) -> None:
    if a.shape != b.shape:
        msg = npt.build_err_msg([a, b], err_msg=f"a.shape = {a.shape} and b.shape = {b.shape} are not equal")
        raise AssertionError(msg)


def almost_equal(a: Any, b: Any, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, use_broadcast: bool = True) -> bool:
    """Whether `a` and `b` are element-wise close (`np.allclose`; float64 defaults when None)."""
    if not use_broadcast:
        _check_shapes(a, b)
    return np.allclose(_numpy(a), _numpy(b), rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan)


def _location_error(a: np.ndarray, b: np.ndarray, index: tuple, names: Sequence[str],
                    max_error: bool = False) -> str:
    maximum = "maximum " if max_error else ""
    return f"Location of {maximum}error: {index}, {names[0]}={a[index]:.8f}, {names[1]}={b[index]:.8f}"


def assert_almost_equal(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                        names: Sequence[str] = ("a", "b"), equal_nan: bool = False,
                        use_broadcast: bool = True, mismatches: tuple[int, int] = (10, 10)) -> None:
    """Assert that two arrays are almost equal; on failure report the worst mismatch.

    Elements pass when ``|a - b| <= atol + rtol * |b|``. The error message
    names the index of the largest violation and both values there, as
    ``Location of maximum error: (i, j), a=..., b=...``.

    Parameters
    ----------
    a : np.ndarray or NDArray
    b : np.ndarray or NDArray
    rtol : None or float or dict of dtype -> float
        The relative threshold; None uses MXNet's default for the dtypes
        (float16: 1e-2, float32: 1e-4, float64: 1e-5, integers: 0), taking
        the larger of the two arrays' defaults.
    atol : None or float or dict of dtype -> float
        The absolute threshold (defaults: float16 1e-1, float32 1e-3,
        float64 1e-20, integers 0).
    names : tuple of str, optional
        The names of `a` and `b` in the error message.
    equal_nan : bool, optional
        Whether NaN compares equal to NaN.
    use_broadcast : bool, optional
        When False, the shapes must match exactly.
    mismatches : tuple of int
        How many mismatches to print (mismatches[0]) and to locate (mismatches[1]).
    """
    if not use_broadcast:
        _check_shapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _numpy(a), _numpy(b)
    if getattr(a, "dtype", None) == np.bool_ and getattr(b, "dtype", None) == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
        return
    a, b = np.asarray(a), np.asarray(b)
    a, b = np.broadcast_arrays(a, b)
    raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def _mismatch_message(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, names: Sequence[str],
                      equal_nan: bool, mismatches: tuple[int, int]) -> str:
    """MXNet's report: the worst violation, the list of the next ones, and the arrays."""
    index, rel = _find_max_violation(a, b, rtol, atol)
    if index != ():
        index_err, rel_err = index, rel
        print(f"\n*** Maximum errors for vector of size {a.size}:  rtol={rtol}, atol={atol}\n")
        a_tmp, b_tmp = a.copy(), b.copy()
        i = 1
        while i <= a.size:
            if i <= mismatches[0]:
                print(f"{i:3d}: Error {rel:f}  {_location_error(a, b, index, names)}")
            a_tmp[index] = b_tmp[index] = 0
            if almost_equal(a_tmp, b_tmp, rtol, atol, equal_nan=equal_nan):
                break
            i += 1
            if i <= mismatches[1] or mismatches[1] <= 0:
                index, rel = _find_max_violation(a_tmp, b_tmp, rtol, atol)
            else:
                break
        degree = "at least " if mismatches[1] > 0 and i > mismatches[1] else ""
        err = (f"Error {rel_err:f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
               f"(mismatch {degree}{100 * i / a.size:f}%).\n"
               + _location_error(a, b, index_err, names, max_error=True))
    else:
        err = f"Error {rel:f} exceeds tolerance rtol={rtol:e}, atol={atol:e}.\n"
    with np.printoptions(threshold=4, suppress=True):
        return npt.build_err_msg([a, b], err_msg=err)


def assert_allclose(a: Any, b: Any, rtol: float = 1e-07, atol: float = 0, equal_nan: bool = True) -> None:
    """`assert_almost_equal` with numpy's `assert_allclose` defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a: Any, b: Any, rtol: Any = None, atol: Any = None, etol: float | None = None,
                                 names: Sequence[str] = ("a", "b"), equal_nan: bool = False,
                                 mismatches: tuple[int, int] = (10, 10)) -> None:
    """Like `assert_almost_equal`, but pass while at most a fraction `etol` of elements mismatch."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.asarray(_numpy(a)), np.asarray(_numpy(b))
    equals = np.isclose(a, b, rtol=rtol, atol=atol)
    if 1 - np.count_nonzero(equals) / equals.size > etol:
        a, b = np.broadcast_arrays(a, b)
        raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_almost_equal_ignore_nan(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                                   names: Sequence[str] = ("a", "b")) -> None:
    """`assert_almost_equal` where a NaN in either array is ignored (both set to 0)."""
    a = np.copy(_numpy(a))
    b = np.copy(_numpy(b))
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f: Callable, exception_type: type[BaseException] | tuple, *args: Any,
                     **kwargs: Any) -> None:
    """Assert that `f(*args, **kwargs)` raises `exception_type`."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise {exception_type}")


def retry(n: int) -> Callable:
    """Decorator: run a stochastic test up to `n` times, failing only if every run fails."""
    assert n > 0

    def decorate(f: Callable) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> None:
            for i in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError:
                    if i == n - 1:
                        raise
        return wrapper
    return decorate


def same_array(array1: NDArray, array2: NDArray) -> bool:
    """Whether two NDArrays share their memory (a write to one shows in the other)."""
    if array1.shape != array2.shape:
        return False
    return bool(np.shares_memory(_backend.to_numpy(array1._data), _backend.to_numpy(array2._data))) \
        if array1.context.device_type == "cpu" else array1._data.data.ptr == array2._data.data.ptr
