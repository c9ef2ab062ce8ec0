"""contrib.boolean_mask eagerly, in a Symbol and hybridized under autograd, where each call may
select a different number of rows (the dynamic output shape reaches the compiled backward)."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx


class _Mask(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, data, index):
        return F.contrib.boolean_mask(data, index) * 2


def test_hybridized_boolean_mask_with_changing_row_counts():
    net = _Mask()
    net.hybridize()
    data = mx.nd.array(np.arange(12.0).reshape(4, 3))
    data.attach_grad()
    for mask in ([0, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1], [0, 1, 0, 1]):
        with mx.autograd.record():
            out = net(data, mx.nd.array(mask))
        out.backward()
        keep = np.array(mask) != 0
        np.testing.assert_allclose(out.asnumpy(), 2 * data.asnumpy()[keep])
        np.testing.assert_allclose(data.grad.asnumpy(), 2 * np.repeat(keep[:, None], 3, axis=1))


def test_boolean_mask_eager_symbol_and_errors():
    data, index = mx.nd.array([[1, 2], [3, 4], [5, 6]]), mx.nd.array([1, 0, 1], dtype="int32")
    assert mx.nd.contrib.boolean_mask(data, index).asnumpy().tolist() == [[1, 2], [5, 6]]
    sym = mx.sym.contrib.boolean_mask(mx.sym.var("d"), mx.sym.var("i"))
    out = sym.bind(mx.cpu(), {"d": data, "i": index}).forward()[0]
    assert out.asnumpy().tolist() == [[1, 2], [5, 6]]
    with pytest.raises(mx.base.MXNetError, match="only axis=0"):
        mx.nd.contrib.boolean_mask(data, index, axis=1)
    with pytest.raises(mx.base.MXNetError, match="index has 2 entries"):
        mx.nd.contrib.boolean_mask(data, mx.nd.array([1, 0]))
