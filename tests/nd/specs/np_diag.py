"""Specs for numpy's diagonal operators (nd/ops/np_diag.py): forward against numpy (diagonals
beyond the matrix are empty), gradients by finite differences."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes

_KERNEL = "a gradient kernel (checked through its forward operator)"


def _diag_case(draw):
    s = draw(shapes(min_dims=1, max_dims=2))
    return [draw(arr(s))], {"k": draw(st.integers(-3, 3))}


def _diagonal_case(draw):
    s = draw(shapes(min_dims=2, max_dims=4))
    a1, a2 = draw(st.permutations(range(len(s))))[:2]
    return [draw(arr(s))], {"offset": draw(st.integers(-3, 3)), "axis1": a1 - len(s) * draw(st.integers(0, 1)),
                            "axis2": a2}


def _diagflat_case(draw):
    return [draw(arr(shapes(min_dims=0, max_dims=2)))], {"k": draw(st.integers(-2, 2))}


def _kernel_case(case, fwd):
    def build(draw):
        (x,), attrs = case(draw)
        return [draw(arr(fwd(x, **attrs).shape)), x], attrs
    return build


def _diag_ref(x, k, **kw):
    return np.diag(x, k)


def _diagonal_ref(x, offset, axis1, axis2, **kw):
    return np.diagonal(x, offset, axis1, axis2)


def _diagflat_ref(x, k, **kw):
    return np.diagflat(x, k)


def _adjoint(fwd):
    """The gradient kernel's reference: the transpose of the (linear) forward, column by column."""
    def ref(g, x, **attrs):
        out = np.zeros(x.size)
        for i in range(x.size):
            e = np.zeros(x.size)
            e[i] = 1.0
            out[i] = (fwd(e.reshape(x.shape), **attrs) * g).sum()
        return out.reshape(x.shape)
    return ref


SPECS = [
    OpSpec("_np_diag", case=_diag_case, ref=_diag_ref),
    OpSpec("_np_diagonal", case=_diagonal_case, ref=_diagonal_ref),
    OpSpec("_np_diagflat", case=_diagflat_case, ref=_diagflat_ref),
    OpSpec("_backward_np_diag", case=_kernel_case(_diag_case, _diag_ref), ref=_adjoint(_diag_ref), nondiff=_KERNEL),
    OpSpec("_backward_np_diagonal", case=_kernel_case(_diagonal_case, _diagonal_ref), ref=_adjoint(_diagonal_ref),
           nondiff=_KERNEL),
    OpSpec("_backward_np_diagflat", case=_kernel_case(_diagflat_case, _diagflat_ref), ref=_adjoint(_diagflat_ref),
           nondiff=_KERNEL),
    OpSpec("_npi_diag_indices_from",
           case=lambda draw: ([draw(arr((draw(st.integers(1, 3)),) * draw(st.integers(2, 3))))], {}),
           ref=lambda x, **kw: np.array(np.diag_indices_from(x)), nondiff="integer indices"),
]
