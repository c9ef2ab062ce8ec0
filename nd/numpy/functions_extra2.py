"""More of the `mx.np` function namespace: the binary ufuncs `lcm`, `bitwise_and`,
`bitwise_or`, `bitwise_xor`, `copysign`, `arctan2`, `ldexp` (registry ops in
nd/ops/np_extra2.py) and mx.np.ndarray's `&`, `|`, `^` (and `&=`, `|=`, `^=`), which MXNet 1.9.1
defines through them (it has no reflected `3 & x`)."""
from __future__ import annotations

from .functions import _binary_fn
from .multiarray import _is_scalar, call, ndarray



def _ufunc(name: str, commutative: bool):
    """mx.np.<name>(x1, x2, out=None): arrays, or an array and a scalar (`_npi_<name>_scalar`,
    `_npi_r<name>_scalar` with the scalar first unless the op commutes)."""
    rs = f"_npi_{name}_scalar" if commutative else f"_npi_r{name}_scalar"
    return _binary_fn(name, (f"_npi_{name}", f"_npi_{name}_scalar", rs))


lcm, bitwise_and, bitwise_or, bitwise_xor = (_ufunc(n, True) for n in ("lcm", "bitwise_and", "bitwise_or",
                                                                       "bitwise_xor"))
copysign, arctan2, ldexp = (_ufunc(n, False) for n in ("copysign", "arctan2", "ldexp"))


def ediff1d(ary, to_end=None, to_begin=None) -> ndarray:
    """The differences between consecutive elements of the flattened array, with `to_begin` and
    `to_end` (arrays, scalars or None) around them (`_npi_ediff1d`)."""
    def given(x) -> bool:   # an array (eager or traced)
        return x is not None and not _is_scalar(x)
    attrs = {"to_begin_arr_given": given(to_begin), "to_end_arr_given": given(to_end)}
    inputs = [ary] + [x for x in (to_begin, to_end) if given(x)]
    for key, val in (("to_begin_scalar", to_begin), ("to_end_scalar", to_end)):
        if not given(val):
            attrs[key] = None if val is None else float(val)
    return call("_npi_ediff1d", inputs, attrs)


def percentile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear", keepdims=False):
    """The q-th percentiles (q in [0, 100]: a number, or a 0-/1-D array) along the axes (`_npi_percentile`)."""
    if overwrite_input is not None:
        raise NotImplementedError("percentile: overwrite_input is not supported (nor in MXNet 1.9.1)")
    attrs = {"axis": axis, "interpolation": interpolation, "keepdims": keepdims}
    if _is_scalar(q):
        return call("_npi_percentile", [a], {**attrs, "q_scalar": float(q)}, out=out)
    return call("_npi_percentile", [a, q], {**attrs, "q_scalar": None}, out=out)


def quantile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear", keepdims=False):
    """The q-th quantiles (q in [0, 1]): percentile of 100 q, as MXNet computes it."""
    return percentile(a, q * 100, axis=axis, out=out, overwrite_input=overwrite_input,
                      interpolation=interpolation, keepdims=keepdims)


def _dunder(fn_name: str, inplace: bool):
    fn = {"bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor}[fn_name]

    def method(self, other):
        return fn(self, other, out=self) if inplace else fn(self, other)
    method.__name__ = f"__{'i' if inplace else ''}{fn_name.split('_')[1]}__"
    method.__doc__ = f"x {'op=' if inplace else 'op'} y via mx.np.{fn_name}."
    return method


for _n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    for _inplace in (False, True):
        _m = _dunder(_n, _inplace)
        setattr(ndarray, _m.__name__, _m)

__all__ = ["lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "copysign", "arctan2", "ldexp", "ediff1d", "percentile",
           "quantile"]
