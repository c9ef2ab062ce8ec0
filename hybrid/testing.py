"""Test helpers for users' own blocks: eager vs hybridized consistency, and
hypothesis strategies for input arrays.

Example (in a user's test file)::

    from hypothesis import given
    from hybridgraph.gluon.testing import arrays, check_hybrid_consistency

    @given(arrays((4, 10)))
    def test_my_block(x):
        net = MyBlock(); net.initialize()
        check_hybrid_consistency(net, [x])
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from hybridgraph import nd
from hybridgraph.nd import autograd


def arrays(shape: Sequence[int], low: float = -1.0, high: float = 1.0, dtype: Any = np.float32):
    """A hypothesis strategy of numpy arrays with the given shape and value range."""
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
    return hnp.arrays(np.dtype(dtype), tuple(shape),
                      elements=st.floats(low, high, allow_nan=False, width=32 if np.dtype(dtype).itemsize <= 4 else 64))


def batch_shapes(feature_shape: Sequence[int], max_batch: int = 4):
    """A hypothesis strategy of shapes `(batch, *feature_shape)`."""
    from hypothesis import strategies as st
    return st.integers(1, max_batch).map(lambda b: (b, *feature_shape))


def _run(block, inputs: Sequence[np.ndarray], train: bool, head_seed: int,
         loss_fn: Callable | None) -> tuple[list, list, dict]:
    xs = [nd.array(x, dtype=x.dtype) for x in inputs]
    for x in xs:
        x.attach_grad()
    params = block.collect_params()
    for p in params.values():
        if p.grad_req != "null" and p._data is not None:
            p.zero_grad()
    with autograd.record(train_mode=train):
        out = block(*xs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        rng = np.random.default_rng(head_seed)
        heads = [nd.array(rng.standard_normal(o.shape), dtype=o.dtype) for o in outs]
        loss = loss_fn(outs) if loss_fn else None
    if loss is not None:
        loss.backward()
    else:
        autograd.backward(outs, heads)
    grads = {name: p.grad().asnumpy() for name, p in params.items() if p.grad_req != "null"}
    aux = {name: p.data().asnumpy() for name, p in params.items() if p.grad_req == "null"}
    grads.update({"aux:" + k: v for k, v in aux.items()})
    return [o.asnumpy() for o in outs], [x.grad.asnumpy() for x in xs], grads


def check_hybrid_consistency(block, inputs: Sequence[np.ndarray], train_modes: Sequence[bool] = (False, True),
                             static_alloc: Sequence[bool] = (False, True), rtol: float = 1e-5,
                             atol: float = 1e-6, repeats: int = 2, loss_fn: Callable | None = None) -> None:
    """Assert that hybridized calls give the eager outputs, input gradients,
    parameter gradients and aux-state updates, in train and predict mode,
    over repeated calls (so cached graphs are exercised)."""
    inputs = [np.asarray(x) for x in inputs]
    if any(p._data is None for p in block.collect_params().values()):
        with autograd.pause():  # finish deferred initialisation before taking the snapshot
            block(*[nd.array(x, dtype=x.dtype) for x in inputs])
    snapshot = {n: p.data().asnumpy().copy() for n, p in block.collect_params().items() if p._data is not None}
    for train in train_modes:
        block.hybridize(False)
        _restore(block, snapshot)
        want = _run(block, inputs, train, 0, loss_fn)
        for alloc in static_alloc:
            block.hybridize(True, static_alloc=alloc, static_shape=alloc)
            for _ in range(repeats):
                _restore(block, snapshot)
                got = _run(block, inputs, train, 0, loss_fn)
                _compare(want, got, rtol, atol, f"train={train} static_alloc={alloc}")
    block.hybridize(False)
    _restore(block, snapshot)


def _restore(block, snapshot: dict) -> None:
    if not snapshot:
        for p in block.collect_params().values():
            if p._data is not None:
                snapshot[p.name] = p.data().asnumpy().copy()
    for name, p in block.collect_params().items():
        if name in snapshot:
            p.set_data(nd.array(snapshot[name], dtype=p.dtype))


def _compare(want, got, rtol, atol, where: str) -> None:
    for i, (w, g) in enumerate(zip(want[0], got[0])):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {i} ({where})")
    for i, (w, g) in enumerate(zip(want[1], got[1])):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"input gradient {i} ({where})")
    for name, w in want[2].items():
        np.testing.assert_allclose(got[2][name], w, rtol=rtol, atol=atol, err_msg=f"{name} ({where})")
