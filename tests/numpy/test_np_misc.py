"""mx.np windows, indices, bitwise_not, nan_to_num, rot90 and polyval: values against numpy,
eagerly and hybridized, and their gradients (as MXNet 1.9.1 defines them)."""
from __future__ import annotations

import numpy as onp
import pytest

from hybridgraph import autograd, np

from .fn_block import FnBlock as _Fn


pytestmark = pytest.mark.usefixtures("np_mode")


@pytest.mark.parametrize("hybridize", [False, True])
def test_creation_functions_inside_blocks(hybridize):
    net = _Fn(lambda F, x: (x + F.np.hanning(6, dtype="float64"), x + F.np.indices((2, 3), dtype="int32"),
                            x + F.np.blackman(-1)))
    if hybridize:
        net.hybridize()
    w, idx, empty = net(np.zeros(()))
    onp.testing.assert_allclose(w.asnumpy(), onp.hanning(6))
    onp.testing.assert_array_equal(idx.asnumpy(), onp.indices((2, 3)))
    assert empty.shape == (0,)


def test_bitwise_not_and_nan_to_num():
    assert np.bitwise_not(np.array([0, 5], dtype="int32")).asnumpy().tolist() == [-1, -6]
    assert np.invert(np.array([True, False], dtype="bool")).asnumpy().tolist() == [False, True]
    x = np.array([onp.nan, onp.inf, -onp.inf, 2.0])
    x.attach_grad()
    with autograd.record():
        y = np.nan_to_num(x, nan=-1.0, posinf=5.0)
    y.backward()
    assert y.asnumpy()[:2].tolist() == [-1.0, 5.0] and y.asnumpy()[3] == 2.0
    assert x.grad.asnumpy().tolist() == [0.0, 0.0, 0.0, 1.0]
    z = np.array([onp.nan, 1.0])
    np.nan_to_num(z, copy=False)
    assert z.asnumpy().tolist() == [0.0, 1.0]


@pytest.mark.parametrize("hybridize", [False, True])
def test_rot90_and_polyval_gradients(hybridize):
    net = _Fn(lambda F, m: F.np.rot90(m, 3, (2, 0)))
    if hybridize:
        net.hybridize()
    m_np = onp.arange(24.0).reshape(2, 3, 4)
    m = np.array(m_np)
    m.attach_grad()
    g = onp.random.default_rng(0).standard_normal(onp.rot90(m_np, 3, (2, 0)).shape)
    with autograd.record():
        y = net(m)
    y.backward(np.array(g))
    onp.testing.assert_array_equal(y.asnumpy(), onp.rot90(m_np, 3, (2, 0)))
    onp.testing.assert_allclose(m.grad.asnumpy(), onp.rot90(g, -3, (2, 0)), rtol=1e-6)

    p, x = np.array([2.0, -1.0, 3.0]), np.array([[0.5, 2.0]])
    p.attach_grad()
    x.attach_grad()
    with autograd.record():
        v = np.polyval(p, x)
    v.backward()
    onp.testing.assert_allclose(v.asnumpy(), onp.polyval([2.0, -1.0, 3.0], [[0.5, 2.0]]))
    onp.testing.assert_allclose(p.grad.asnumpy(), [0.25 + 4.0, 2.5, 2.0])
    onp.testing.assert_allclose(x.grad.asnumpy(), [[4 * 0.5 - 1, 4 * 2.0 - 1]])
