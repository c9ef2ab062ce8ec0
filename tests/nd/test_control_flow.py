"""nd.contrib.cond / foreach / while_loop, eagerly: MXNet 1.9.1's numbers
(tests/data/control_flow_ref.npz), float64 finite-difference gradients,
MXNet's return conventions and clear errors."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
sys.path.insert(0, DATA)
from control_flow_cases import CASES, make_inputs  # noqa: E402

REF = np.load(os.path.join(DATA, "control_flow_ref.npz"))
CASE_IDS = [c[0] for c in CASES]


def run_case(fn, inputs: dict, heads: list | None = None, dtype=np.float32):
    """Outputs and (with heads) input gradients of sum(out * head) under autograd."""
    xs = {k: nd.array(v, dtype=dtype) for k, v in inputs.items()}
    for x in xs.values():
        x.attach_grad()
    with autograd.record():
        outs = fn(nd, **xs)
    if heads is None:
        return [o.asnumpy() for o in outs], None
    autograd.backward(outs, [nd.array(h, dtype=dtype) for h in heads])
    return [o.asnumpy() for o in outs], {k: x.grad.asnumpy() for k, x in xs.items()}


def check_against_ref(name: str, extra: dict, outs: list, grads: dict) -> None:
    """Compare with MXNet's recorded numbers; rows after the end of a while_loop are zeros."""
    steps = int(REF[f"{name}/steps"]) if f"{name}/steps" in REF else None
    for i, out in enumerate(outs):
        want = REF[f"{name}/out{i}"]
        if steps is not None and i < extra.get("stacked", 0):
            np.testing.assert_array_equal(out[steps:], 0, err_msg=f"{name} output {i} padding")
            out = out[:steps]
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6, err_msg=f"{name} output {i}")
    for k, g in grads.items():
        np.testing.assert_allclose(g, REF[f"{name}/grad/{k}"], rtol=1e-5, atol=1e-6, err_msg=f"{name} grad {k}")


def heads_of(name: str, outs: list) -> list:
    """The recorded head gradients, zero-padded over rows MXNet leaves undefined."""
    heads = []
    for i, out in enumerate(outs):
        h = np.zeros(out.shape, np.float32)
        rec = REF[f"{name}/head{i}"]
        h[tuple(slice(0, s) for s in rec.shape)] = rec
        heads.append(h)
    return heads


@pytest.mark.parametrize("name,fn,shapes,extra", CASES, ids=CASE_IDS)
def test_matches_mxnet(name, fn, shapes, extra):
    inputs = make_inputs(name, shapes)
    for k, v in inputs.items():
        np.testing.assert_array_equal(v, REF[f"{name}/in/{k}"])
    outs, _ = run_case(fn, inputs)
    outs, grads = run_case(fn, inputs, heads_of(name, outs))
    check_against_ref(name, extra, outs, grads)


@pytest.mark.parametrize("name,fn,shapes,extra", CASES, ids=CASE_IDS)
def test_gradient_finite_differences(name, fn, shapes, extra):
    """float64 autograd gradient along a random direction equals central differences."""
    inputs = {k: v.astype(np.float64) for k, v in make_inputs(name, shapes).items()}
    outs, _ = run_case(fn, inputs, dtype=np.float64)
    rng = np.random.default_rng(1)
    heads = [rng.standard_normal(o.shape) for o in outs]
    _, grads = run_case(fn, inputs, heads, dtype=np.float64)
    direction = {k: rng.standard_normal(v.shape) for k, v in inputs.items()}

    def objective(t: float) -> float:
        moved = {k: v + t * direction[k] for k, v in inputs.items()}
        res, _ = run_case(fn, moved, dtype=np.float64)
        return sum(float((o * h).sum()) for o, h in zip(res, heads))

    eps = 1e-6
    numeric = (objective(eps) - objective(-eps)) / (2 * eps)
    analytic = sum(float((grads[k] * direction[k]).sum()) for k in inputs)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)


# -- cond -------------------------------------------------------------------------------------------

def test_cond_runs_only_the_chosen_branch_and_returns_it_unchanged():
    ran = []
    a, b = nd.array([1]), nd.array([2])

    def then_func():
        ran.append("then")
        return (a + 5) * (b + 5), a

    def else_func():
        ran.append("else")
        return (a - 5) * (b - 5), b

    out = nd.contrib.cond(a * b < 5, then_func, else_func)
    assert ran == ["then"] and isinstance(out, tuple)
    np.testing.assert_array_equal(out[0].asnumpy(), [42.0])
    out = nd.contrib.cond(a * b > 5, then_func, else_func)
    assert ran == ["then", "else"]
    np.testing.assert_array_equal(out[0].asnumpy(), [12.0])


@pytest.mark.parametrize("pred,want", [(True, 1.0), (0, 2.0), (nd.array([[3.0]]), 1.0),
                                       (nd.array([0], dtype="int64"), 2.0), (np.float32(0.5), 1.0)])
def test_cond_predicate_forms(pred, want):
    out = nd.contrib.cond(pred, lambda: nd.array([1.0]), lambda: nd.array([2.0]))
    assert out.asscalar() == want


def test_cond_predicate_must_have_size_one():
    with pytest.raises(ValueError, match=r"pred must be an array of size 1.*\(2,\)"):
        nd.contrib.cond(nd.array([1, 0]), lambda: 1, lambda: 2)


def test_cond_gradient_flows_through_the_taken_branch_only():
    x = nd.array([1.0, -2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.cond(x.sum() < 0, lambda: x * x, lambda: x * 3)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, -4.0])


# -- foreach ----------------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(st.integers(1, 5), st.integers(1, 3), st.integers(1, 3))
def test_foreach_equals_python_loop(n, b, d):
    rng = np.random.default_rng(n * 100 + b * 10 + d)
    data = rng.standard_normal((n, b, d)).astype(np.float32)
    s0 = rng.standard_normal((b, d)).astype(np.float32)
    outs, states = nd.contrib.foreach(lambda x, s: (x * s[0], [s[0] + x]), nd.array(data), [nd.array(s0)])
    want, s = [], s0
    for t in range(n):
        want.append(data[t] * s)
        s = s + data[t]
    np.testing.assert_allclose(outs.asnumpy(), np.stack(want), rtol=1e-6)
    np.testing.assert_allclose(states[0].asnumpy(), s, rtol=1e-6)


def test_foreach_returns_body_states_as_they_are_and_nested_outputs():
    def body(x, states):
        return [x, [x * 2]], (states[0] + 1, states[1])
    outs, states = nd.contrib.foreach(body, nd.ones((3, 2)), (nd.zeros(2), nd.ones(1)))
    assert isinstance(states, tuple) and len(outs) == 2 and isinstance(outs[1], list)
    assert outs[0].shape == (3, 2) and outs[1][0].shape == (3, 2)
    np.testing.assert_array_equal(states[0].asnumpy(), [3, 3])


def test_foreach_state_only():
    outs, states = nd.contrib.foreach(lambda x, s: ([], [s[0] + x]), nd.ones((4, 2)), [nd.zeros(2)])
    assert outs == []
    np.testing.assert_array_equal(states[0].asnumpy(), [4, 4])


@pytest.mark.parametrize("data,match", [
    ([nd.ones((3, 2)), nd.ones((2, 2))], "same length along axis 0"),
    (nd.empty((0, 2)), "at least one slice"),
    ([], "at least one array"),
    ("x", "foreach input"),
])
def test_foreach_errors(data, match):
    with pytest.raises((ValueError, TypeError), match=match):
        nd.contrib.foreach(lambda x, s: (x, s), data, [nd.zeros(2)])


def test_foreach_inconsistent_body_outputs():
    def body(x, s):
        return ([x] if s[0].asscalar() == 0 else [x, x]), [s[0] + 1]
    with pytest.raises(ValueError, match="2 outputs at step 1 but 1 at step 0"):
        nd.contrib.foreach(body, nd.ones((3, 2)), [nd.zeros(1)])


# -- while_loop -------------------------------------------------------------------------------------

def test_while_loop_mxnet_docstring_example():
    cond = lambda i, s: i <= 5
    func = lambda i, s: ([i + s], [i + 1, s + i])
    loop_vars = (nd.array([0], dtype="int64"), nd.array([1], dtype="int64"))
    outputs, states = nd.contrib.while_loop(cond, func, loop_vars, max_iterations=10)
    assert outputs[0].dtype == np.int64 and outputs[0].shape == (10, 1)
    np.testing.assert_array_equal(outputs[0].asnumpy().ravel(), [1, 2, 4, 7, 11, 16, 0, 0, 0, 0])
    assert [s.asscalar() for s in states] == [6, 16]


def test_while_loop_without_iterations_returns_no_outputs_and_the_input_vars():
    loop_vars = (nd.array([5.0]),)
    outputs, states = nd.contrib.while_loop(lambda i: i < 0, lambda i: (i, i + 1), loop_vars, max_iterations=3)
    assert outputs == [] and states is loop_vars


def test_while_loop_single_array_and_none_outputs():
    outputs, state = nd.contrib.while_loop(lambda i: i < 5, lambda i: (None, i + 1), nd.array([0]),
                                           max_iterations=nd.array([3]))
    assert outputs == [] and isinstance(state, nd.NDArray) and state.asscalar() == 3


def test_while_loop_gradient_through_loop_variables():
    x = nd.array([0.5])
    x.attach_grad()
    with autograd.record():
        outs, (s, k) = nd.contrib.while_loop(lambda s, k: k < 3, lambda s, k: ([s], [s * s, k + 1]),
                                             [x, nd.zeros(1)], max_iterations=5)
    s.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [8 * 0.5 ** 7], rtol=1e-6)  # d/dx x^8
    np.testing.assert_allclose(outs[0].asnumpy().ravel(), [0.5, 0.25, 0.0625, 0, 0])


@pytest.mark.parametrize("kwargs,match", [
    ({}, "max_iterations should be specified"),
    ({"max_iterations": "many"}, "Cannot convert max_iterations"),
])
def test_while_loop_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        nd.contrib.while_loop(lambda i: i < 3, lambda i: (i, i + 1), [nd.zeros(1)], **kwargs)


def test_while_loop_body_errors():
    with pytest.raises(ValueError, match="loop_vars should contain at least one element"):
        nd.contrib.while_loop(lambda: True, lambda: ([], []), [], max_iterations=2)
    with pytest.raises(ValueError, match="length of loop_vars should be consistent"):
        nd.contrib.while_loop(lambda i: i < 3, lambda i: (i, [i, i]), [nd.zeros(1)], max_iterations=2)
    with pytest.raises(ValueError, match="Number of elements in step_output"):
        nd.contrib.while_loop(lambda i: i < 3, lambda i: ([i] * int(i.asscalar() + 1), [i + 1]),
                              [nd.zeros(1)], max_iterations=3)
    with pytest.raises(ValueError, match=r"Shapes of 1-th elements in step_outputs are inconsistent"):
        nd.contrib.while_loop(lambda i: i < 3, lambda i: (nd.zeros(int(i.asscalar()) + 1), [i + 1]),
                              [nd.zeros(1)], max_iterations=3)
    with pytest.raises(ValueError, match="the return value of cond must be an array of size 1"):
        nd.contrib.while_loop(lambda i: i < 3, lambda i: (i, i + 1), [nd.zeros(2)], max_iterations=3)


def test_contrib_namespace_has_the_functions():
    from hybridgraph.nd import control_flow
    assert nd.contrib.cond is control_flow.cond
    assert nd.contrib.foreach is control_flow.foreach
    assert nd.contrib.while_loop is control_flow.while_loop
