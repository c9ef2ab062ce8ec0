"""The direct path of repeated hybridized inference calls (hybrid/direct_call.py) gives what
the general path gives, and steps aside whenever the call differs from the remembered one."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hybridgraph as mx
from hybridgraph import autograd, gluon, nd
from hybridgraph.gluon import nn


def _mlp(static: bool = True) -> nn.HybridSequential:
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu", in_units=5), nn.Dense(3, in_units=8))
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=static, static_shape=static)
    return net


def _x(batch: int = 4, seed: int = 0) -> nd.NDArray:
    return nd.array(np.random.RandomState(seed).randn(batch, 5), dtype="float32")


def _eager(net, x) -> np.ndarray:
    """The same block's output computed eagerly, node by node."""
    net.hybridize(False)
    out = net(x).asnumpy()
    return out


@pytest.mark.parametrize("static", [True, False])
def test_repeated_calls_take_the_direct_path_and_match_eager(static):
    net = _mlp(static)
    x = _x()
    first = net(x).asnumpy()
    assert net.__dict__.get("_direct") is not None
    hits = net.cache_info()["hits"]
    again = [net(x).asnumpy() for _ in range(3)]
    assert net.cache_info()["hits"] == hits + 3      # the direct path counts its calls too
    for a in again:
        np.testing.assert_array_equal(a, first)
    np.testing.assert_allclose(first, _eager(net, x), rtol=1e-6, atol=1e-6)


def test_each_call_returns_a_fresh_array():
    net = _mlp()
    x = _x()
    a = net(x)
    b = net(x)
    assert a is not b
    ref = a.asnumpy().copy()
    net(_x(seed=1))
    np.testing.assert_array_equal(a.asnumpy(), ref)  # a later call does not overwrite it


def test_parameter_changes_are_seen():
    net = _mlp()
    x = _x()
    net(x)
    w = net[1].weight
    w.set_data(nd.ones(w.shape))                         # a new buffer
    np.testing.assert_allclose(net(x).asnumpy(), _eager(net, x), rtol=1e-6)
    net.hybridize(static_alloc=True, static_shape=True)
    net(x)
    net[1].bias.data()[:] = 5.0                          # written in place
    np.testing.assert_allclose(net(x).asnumpy(), _eager(net, x), rtol=1e-6)


def test_calls_unlike_the_remembered_one_take_the_general_path():
    net = _mlp()
    x = _x()
    net(x)
    np.testing.assert_allclose(net(_x(batch=2)).asnumpy(), _eager(net, _x(batch=2)), rtol=1e-6)
    net.hybridize(static_alloc=True, static_shape=True)
    net(x)
    with autograd.record():                               # recording: a tape node, not the direct path
        out = net(x)
    out.backward()
    assert net[0].weight.grad().abs().sum().asscalar() > 0
    seen = []
    net.register_forward_hook(lambda blk, inp, out: seen.append(out))
    net(x)
    assert len(seen) == 1                                 # hooks registered later still run
    net.cast("float64")
    out = net(nd.array(x.asnumpy(), dtype="float64"))
    assert out.dtype == np.float64


def test_profiler_sees_direct_calls():
    net = _mlp()
    x = _x()
    net(x)
    mx.profiler.set_config(profile_all=True, aggregate_stats=True)
    mx.profiler.set_state("run")
    try:
        net(x)
    finally:
        mx.profiler.set_state("stop")
    assert "FullyConnected" in mx.profiler.dumps(reset=True)


@settings(deadline=None)
@given(batch=st.integers(1, 6), seed=st.integers(0, 2 ** 16), calls=st.integers(1, 4))
def test_direct_path_equals_general_path(batch, seed, calls):
    """Property: however many repeats, the direct path's outputs are bitwise the general path's."""
    net = _mlp()
    x = _x(batch, seed)
    general = net(x).asnumpy()              # the first call takes the general path
    for _ in range(calls):
        np.testing.assert_array_equal(net(x).asnumpy(), general)


def test_symbol_block_inference_repeats():
    net = _mlp()
    x = _x()
    net(x)
    sym = net(mx.sym.var("data"))
    block = gluon.SymbolBlock(sym, mx.sym.var("data"), params=net.collect_params())
    block.hybridize(static_alloc=True)
    ref = block(x).asnumpy()
    np.testing.assert_array_equal(block(x).asnumpy(), ref)
    np.testing.assert_allclose(ref, net(x).asnumpy(), rtol=1e-6)
