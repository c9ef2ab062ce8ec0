"""Spec for nd/ops/hawkes.py: contrib.hawkesll against the intensity integrated event by event
in plain Python (MXNet 1.9.1's own values and gradients: tests/nd/test_hawkesll.py)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, ints


def _case(draw):
    n, t, k = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    lags = draw(arr((n, t), 0.1, 1.5))
    return [draw(arr((n, k), 0.5, 2.0)), draw(arr((k,), 0.1, 0.8)), draw(arr((k,), 0.5, 2.5)),
            draw(arr((n, k), 0.0, 1.0)), lags, draw(ints((n, t), 0, k - 1, dtype=np.int32)),
            draw(ints((n,), 0, t)).astype(np.float64), lags.sum(axis=1) + draw(arr((n,), 0.0, 2.0))], {}


def _ref(lda, alpha, beta, state, lags, marks, valid_length, max_time):
    """The log intensity at each event minus the integrated intensity over (0, max_time]."""
    n, k = lda.shape
    ll, out_state = np.zeros(n), np.zeros((n, k))
    for i in range(n):
        events = [[] for _ in range(k)]
        now = 0.0
        for j in range(int(valid_length[i])):
            now += lags[i, j]
            events[marks[i, j]].append(now)
        for m in range(k):
            # the memory before an event at time x: the starting state decayed from 0 plus earlier events
            def memory(x, m=m, i=i):
                return state[i, m] * math.exp(-beta[m] * x) + sum(math.exp(-beta[m] * (x - e))
                                                                   for e in events[m] if e < x)
            for x in events[m]:
                ll[i] += math.log(lda[i, m] + alpha[m] * beta[m] * memory(x))
            # integral of lda + alpha * beta * memory over (0, T]
            big_t = max_time[i]
            ll[i] -= lda[i, m] * big_t + alpha[m] * (state[i, m] * (1 - math.exp(-beta[m] * big_t)) + sum(
                1 - math.exp(-beta[m] * (big_t - e)) for e in events[m]))
            out_state[i, m] = memory(big_t) + sum(math.exp(-beta[m] * (big_t - e)) for e in events[m]
                                                  if e == big_t)
    return ll, out_state


def _backward_case(draw):
    inputs, _ = _case(draw)
    n, k = inputs[0].shape
    return [draw(arr((n,))), draw(arr((n, k))), *inputs], {}


SPECS = [
    OpSpec("_contrib_hawkesll", case=_case, ref=_ref, grad_inputs=(0, 1, 2, 3)),
    OpSpec("_contrib_backward_hawkesll", case=_backward_case,
           nondiff="hidden backward op without a gradient of its own (as MXNet)"),
]
