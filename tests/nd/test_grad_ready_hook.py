"""autograd.register_grad_ready_hook: a variable is reported once its gradient is final and
stored, while the backward pass is still running (what the distributed kvstore overlaps with)."""
import numpy as np

import hybridgraph as mx
from hybridgraph import gluon
from hybridgraph.nd import autograd


def _vars(*values):
    out = [mx.nd.array([v]) for v in values]
    for v in out:
        v.attach_grad()
    return out


def test_gradients_are_reported_when_final_in_reverse_use_order():
    a, b, c = _vars(1.0, 2.0, 3.0)
    seen = []
    remove = autograd.register_grad_ready_hook(
        lambda leaf: seen.append((leaf.grad.asnumpy()[0], a.grad.asnumpy()[0])))
    try:
        with autograd.record():
            z = (a * 2) * b * c + a     # a is used first and last: its gradient is final last
        z.backward()
    finally:
        remove()
    # c (=a*2*b = 4) is final first, then b (a*2*c = 6); a's buffer is still empty then; a = 13
    assert [g for g, _ in seen] == [4.0, 6.0, 13.0]
    assert [stale for _, stale in seen][:2] == [0.0, 0.0]
    assert a.grad.asnumpy()[0] == 13.0
    with autograd.record():
        z = a * b
    z.backward()
    assert len(seen) == 3   # removed: not called again


def test_grad_req_add_and_unused_variables():
    a, b = _vars(1.0, 2.0)
    a._ag.grad_req = "add"
    seen = []
    remove = autograd.register_grad_ready_hook(seen.append)
    try:
        for _ in range(2):
            with autograd.record():
                y = a * 3
            y.backward()
    finally:
        remove()
    assert a.grad.asnumpy()[0] == 6.0 and b.grad.asnumpy()[0] == 0.0
    assert seen == [a._ag, a._ag]


def test_a_hybridized_block_reports_its_gradients_together_at_its_end():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(3, in_units=2), gluon.nn.Dense(1, in_units=3))
    net.initialize()
    x = mx.nd.array(np.ones((4, 2)))
    expected = None
    for hybrid in (False, True):
        if hybrid:
            net.hybridize()
        seen = []
        remove = autograd.register_grad_ready_hook(lambda leaf: seen.append(leaf.grad.asnumpy().copy()))
        try:
            with autograd.record():
                y = net(x).sum()
            y.backward()
        finally:
            remove()
        assert len(seen) == 4
        grads = sorted(float(g.sum()) for g in seen)
        expected = grads if expected is None else expected
        np.testing.assert_allclose(grads, expected, rtol=1e-5)
