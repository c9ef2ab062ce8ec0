"""Spec for nd/ops/group_adagrad.py: the row-wise AdaGrad update against its documented rule
(the peer suite's test_group_adagrad compares the optimizer with MXNet's Python reference)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr

_ND = "optimizer update: not differentiable (MXNet registers no gradient)"


def _case(draw):
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    attrs = {"lr": draw(st.sampled_from([0.5, 0.25])), "rescale_grad": draw(st.sampled_from([1.0, 0.5])),
             "clip_gradient": draw(st.sampled_from([-1.0, 0.25])), "epsilon": draw(st.sampled_from([1e-5, 0.5]))}
    return [draw(arr((rows, cols))), draw(arr((rows, cols))), draw(arr((rows, 1), 0.0, 2.0))], attrs


def _ref(w, g, h, lr, rescale_grad, clip_gradient, epsilon):
    g = g * rescale_grad
    if clip_gradient >= 0:
        g = np.clip(g, -clip_gradient, clip_gradient)
    h = h + (g * g).mean(axis=1, keepdims=True)
    return w - lr * g / np.sqrt(h + epsilon)


SPECS = [OpSpec("_contrib_group_adagrad_update", case=_case, ref=_ref, nondiff=_ND)]
