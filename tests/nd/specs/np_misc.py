"""Specs for nd/ops/np_misc.py: windows, indices, bitwise_not, nan_to_num, rot90, polyval
against numpy; gradients by finite differences."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, ints, shapes

_CREATE = "creation (constant output)"


def _window(name):
    return OpSpec(f"_npi_{name}", case=lambda draw: ([], {"M": draw(st.integers(-2, 8)),
                                                           "dtype": draw(st.sampled_from(["float32", "float64"]))}),
                  ref=lambda M, dtype, **kw: getattr(np, name)(M).astype(dtype), nondiff=_CREATE, atol=1e-6)


def _nan_case(draw):
    x = draw(arr(shapes(), away_from=0.0))
    mask = draw(st.lists(st.sampled_from([0, 1, 2, 3]), min_size=x.size, max_size=x.size))
    flat = x.reshape(-1).copy()
    for i, m in enumerate(mask):
        if m == 1:
            flat[i] = np.nan
        elif m == 2:
            flat[i] = np.inf if i % 2 else -np.inf
    return [flat.reshape(x.shape)], {"copy": True, "nan": draw(st.sampled_from([0.0, -1.5])),
                                     "posinf": draw(st.sampled_from([None, 9.0])), "neginf": None}


def _rot_case(draw):
    s = draw(shapes(min_dims=2, max_dims=4))
    a0, a1 = draw(st.permutations(range(len(s))))[:2]
    return [draw(arr(s))], {"k": draw(st.integers(-5, 5)), "axes": (a0, a1)}


def _polyval_case(draw):
    return [draw(arr((draw(st.integers(1, 4)),))), draw(arr(shapes(max_dims=3), -1.5, 1.5))], {}


def _polyval_kernel_case(draw):
    (p, x), attrs = _polyval_case(draw)
    return [draw(arr(x.shape)), p, x], attrs


def _polyval_backward_ref(g, p, x, **kw):
    n = p.size
    gp = np.array([(g * x ** (n - 1 - i)).sum() for i in range(n)])
    return gp, g * np.polyval(np.polyder(p) if n > 1 else np.zeros(1), x)


def _nan_kernel_case(draw):
    (x,), attrs = _nan_case(draw)
    return [draw(arr(x.shape)), x], attrs


SPECS = [
    _window("hanning"), _window("hamming"), _window("blackman"),
    OpSpec("_npi_indices", case=lambda draw: ([], {"dimensions": draw(shapes(min_dims=0, max_dims=3, min_side=0)),
                                                    "dtype": draw(st.sampled_from(["int32", "int64", "float32"]))}),
           ref=lambda dimensions, dtype, **kw: np.indices(dimensions, dtype=dtype), nondiff=_CREATE),
    OpSpec("_npi_bitwise_not", case=lambda draw: ([draw(ints(shapes(), -5, 5, dtype=np.int32))], {}),
           ref=lambda x, **kw: np.invert(x), nondiff="integer operation"),
    OpSpec("_npi_nan_to_num", case=_nan_case, grad_inputs=(),
           ref=lambda x, nan, posinf, neginf, **kw: np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf),
           nondiff="NaN inputs make finite differences meaningless; tests/numpy checks the mask gradient"),
    OpSpec("_backward_npi_nan_to_num", case=_nan_kernel_case, ref=lambda g, x, **kw: np.where(np.isfinite(x), g, 0),
           nondiff="a gradient kernel"),
    OpSpec("_npi_rot90", case=_rot_case, ref=lambda x, k, axes, **kw: np.rot90(x, k, axes)),
    OpSpec("_npi_polyval", case=_polyval_case, ref=lambda p, x, **kw: np.polyval(p, x)),
    OpSpec("_backward_npi_polyval", case=_polyval_kernel_case, ref=_polyval_backward_ref, nondiff="a gradient kernel"),
]
