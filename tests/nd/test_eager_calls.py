"""The eager hot path stays lean (issue 13, acceptance: no eager-overhead regression).

Timing is noisy on shared machines; the number of Python functions a call runs is not.
`a + b` on two arrays of one dtype runs the operator method and nd.kernel.run_kernel (the
one kernel path; its rule check needs no lookup here, the ufunc is C), and `a * 2.0` those
plus the scalar kernel: no wrapper, no attribute parsing, no verdict lookup."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from hybridgraph import autograd, nd
from hybridgraph.nd.errors import DTypeError, ShapeError


def _python_calls(fn) -> list[str]:
    names: list[str] = []

    def prof(frame, event, arg):
        if event == "call":
            names.append(frame.f_code.co_name)

    fn()   # warm: attribute caches and the rule-free sets fill on the first call
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return names[1:]   # the lambda itself


def test_array_plus_array_runs_the_method_and_the_runner():
    a, b = nd.ones((2, 3)), nd.ones((2, 3))
    # NDArray.__add__ (nd.ndarray._binary_method), then the kernel runner
    assert _python_calls(lambda: a + b) == ["method", "run_kernel"]


def test_array_times_scalar_runs_the_method_and_the_kernel():
    a = nd.ones((2, 3))
    calls = _python_calls(lambda: a * 2.0)
    assert calls[:2] == ["method", "run_kernel"] and len(calls) <= 5, calls


def test_the_fast_path_keeps_every_check():
    a = nd.ones((2, 3))
    a + a   # fills the rule-free set
    with pytest.raises(ShapeError, match="could not be broadcast"):
        a + nd.ones((4,))
    with pytest.raises(DTypeError, match="expected float32, got float64"):
        a + nd.ones((2, 3), dtype="float64")
    np.testing.assert_array_equal((a - 2.0).asnumpy(), np.full((2, 3), -1.0, np.float32))


def test_recording_still_records():
    x = nd.ones((2,))
    x.attach_grad()
    with autograd.record():
        y = (x + x) * 3.0
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [6.0, 6.0])
