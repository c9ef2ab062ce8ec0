"""Specs for nd/ops/svm.py: SVMOutput and its hidden backward (values checked against
MXNet 1.9.1 in tests/nd/test_svm_output.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, ints, shapes

_ATTRS = st.fixed_dictionaries({"use_linear": st.booleans(), "margin": st.sampled_from([1.0, 0.5]),
                                "regularization_coefficient": st.sampled_from([1.0, 2.0])})


def _case(draw):
    shape = draw(shapes(min_dims=2, max_dims=3))
    label = draw(ints(shape[:-1], 0, shape[-1] - 1)).astype(np.float64)
    return [draw(arr(shape)), label], draw(_ATTRS)


def _backward_case(draw):
    (x, label), attrs = _case(draw)
    return [draw(arr(x.shape)), label, x], attrs


def _backward_ref(g, label, out, use_linear, margin, regularization_coefficient):
    own = np.arange(out.shape[-1]) == label.astype(np.int64)[..., None]
    sign = np.where(own, 1.0, -1.0)          # +1 for the label's score, -1 for the others
    slack = np.maximum(margin - sign * out, 0.0)
    grad = -sign * (slack > 0) if use_linear else -2.0 * sign * slack
    return grad * regularization_coefficient


SPECS = [
    OpSpec("SVMOutput", case=_case, ref=lambda x, label, **_: x,
           nondiff="a loss layer: its backward is the hinge-loss formula, not d(output)/d(data)"),
    OpSpec("_backward_SVMOutput", case=_backward_case, ref=_backward_ref,
           nondiff="hidden backward operator (no gradient of its own, as in MXNet)"),
]
