"""The backward pass runs tape nodes in decreasing recording order (nd/autograd.py `_Pass`):
on any graph of recorded operations the gradients must equal finite differences, however
the nodes were created (consumers recorded long after their producers, shared
subexpressions, unused branches, outputs used several times)."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd

# (name, arity, numpy function, hybridgraph function): smooth on the values drawn below
_OPS = [
    ("add", 2, np.add, lambda a, b: a + b),
    ("mul", 2, np.multiply, lambda a, b: a * b),
    ("sub", 2, np.subtract, lambda a, b: a - b),
    ("sin", 1, np.sin, lambda a: a.sin()),
    ("tanh", 1, np.tanh, lambda a: a.tanh()),
    ("square", 1, np.square, nd.square),
]


@st.composite
def programs(draw) -> list:
    """A random straight-line program over two inputs: (op index, operand positions) per line;
    operands are drawn from every earlier value, so any DAG shape comes up."""
    lines = []
    for k in range(draw(st.integers(1, 8))):
        op = draw(st.integers(0, len(_OPS) - 1))
        args = [draw(st.integers(0, k + 1)) for _ in range(_OPS[op][1])]
        lines.append((op, args))
    return lines


def _run(program, inputs, fn_index: int):
    values = list(inputs)
    for op, args in program:
        values.append(_OPS[op][fn_index](*(values[i] for i in args)))
    return values


def _loss(program, x0, x1) -> float:
    """Sum of every value the program computed (so every line reaches the head)."""
    return float(sum(np.sum(v) for v in _run(program, [x0, x1], 2)[2:]))


@given(programs(), st.integers(0, 2 ** 31 - 1))
def test_gradients_of_any_recorded_graph_match_finite_differences(program, seed):
    rs = np.random.RandomState(seed)
    a0, a1 = rs.uniform(-1, 1, (3,)), rs.uniform(-1, 1, (3,))
    x0, x1 = nd.array(a0, dtype=np.float64), nd.array(a1, dtype=np.float64)
    x0.attach_grad()
    x1.attach_grad()
    with autograd.record():
        values = _run(program, [x0, x1], 3)
        heads = values[2:]
    autograd.backward(heads)
    eps = 1e-6
    for x, grad, which in ((a0, x0.grad.asnumpy(), 0), (a1, x1.grad.asnumpy(), 1)):
        numeric = np.zeros_like(x)
        for i in range(x.size):
            up, down = x.copy(), x.copy()
            up[i] += eps
            down[i] -= eps
            args_up = (up, a1) if which == 0 else (a0, up)
            args_down = (down, a1) if which == 0 else (a0, down)
            numeric[i] = (_loss(program, *args_up) - _loss(program, *args_down)) / (2 * eps)
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


def test_a_producer_recorded_first_runs_after_all_its_consumers():
    x = nd.array([0.5], dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        a = x * 3            # recorded first, consumed by every later line
        b = a.sin()
        c = b * a
        d = c + a * a
    d.backward()
    v = 0.5
    # d = sin(3x) * 3x + 9x^2
    expected = 3 * np.cos(3 * v) * 3 * v + np.sin(3 * v) * 3 + 18 * v
    np.testing.assert_allclose(x.grad.asnumpy(), [expected], rtol=1e-10)


def test_a_branch_the_head_does_not_reach_contributes_nothing():
    x = nd.array([2.0])
    x.attach_grad()
    with autograd.record():
        unused = x * 100     # recorded, never reaches the head
        y = x * x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [4.0])
    assert unused.shape == (1,)
