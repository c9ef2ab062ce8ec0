"""gluon.contrib.nn layers and gluon.nn.SymbolBlock; PixelShuffle values as MXNet 1.9.1 gives them."""
import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.gluon.contrib import nn as cnn


def _weighted(y):
    return float((y.asnumpy() * np.arange(y.size).reshape(y.shape)).sum())


def test_pixel_shuffle_matches_mxnet_hybridized_and_not():
    x1 = mx.nd.array(np.arange(24).reshape(1, 8, 3))
    x2 = mx.nd.array(np.arange(180).reshape(1, 12, 3, 5))
    x3 = mx.nd.array(np.arange(576).reshape(2, 24, 2, 3, 2))
    # (shape, sum(y * arange)) measured with MXNet 1.9.1
    expected = [((1, 4, 6), 4304.0), ((1, 2, 6, 15), 1857600.0), ((2, 2, 4, 9, 4), 63023472.0)]
    for (block, x), (shape, weighted) in zip(((cnn.PixelShuffle1D(2), x1), (cnn.PixelShuffle2D((2, 3)), x2),
                                              (cnn.PixelShuffle3D((2, 3, 2)), x3)), expected):
        eager = block(x)
        block.hybridize()
        hyb = block(x)
        assert eager.shape == shape == hyb.shape
        assert _weighted(eager) == _weighted(hyb) == weighted


def test_concurrent_blocks_concatenate_children():
    for cls in (cnn.Concurrent, cnn.HybridConcurrent):
        net = cls(axis=1)
        net.add(mx.gluon.nn.Dense(2, in_units=3, weight_initializer="ones"))
        net.add(cnn.Identity())
        net.initialize()
        assert net(mx.nd.ones((1, 3))).asnumpy().tolist() == [[3.0, 3.0, 1.0, 1.0, 1.0]]


def test_sync_batch_norm_is_batch_norm_on_one_process():
    x = mx.nd.array(np.arange(8, dtype=np.float32).reshape(2, 2, 2))
    sbn, bn = cnn.SyncBatchNorm(in_channels=2, num_devices=4), mx.gluon.nn.BatchNorm(in_channels=2)
    sbn.initialize()
    bn.initialize()
    with mx.autograd.record():
        a, b = sbn(x), bn(x)
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)


def test_symbol_block_alias():
    assert mx.gluon.nn.SymbolBlock is mx.gluon.SymbolBlock


def test_sparse_embedding_gradient_touches_looked_up_rows():
    layer = cnn.SparseEmbedding(10, 4)
    layer.initialize()
    x = mx.nd.array([3, 4, 2, 0, 1])
    with mx.autograd.record():
        y = layer(x)
    y.backward()
    grad = layer.weight.grad().asnumpy()
    assert (grad[:5] == 1).all() and (grad[5:] == 0).all()
    np.testing.assert_array_equal(y.asnumpy(), layer.weight.data().asnumpy()[[3, 4, 2, 0, 1]])
    assert repr(layer) == "SparseEmbedding(10 -> 4, float32)"


def test_interval_sampler_orders_and_rollover():
    from hybridgraph.gluon.contrib.data import IntervalSampler
    assert list(IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    assert list(IntervalSampler(13, 3, rollover=False)) == [0, 3, 6, 9, 12]
    assert len(IntervalSampler(13, 3, rollover=False)) == 13  # MXNet's len ignores rollover
    with pytest.raises(AssertionError, match="Interval"):
        IntervalSampler(2, 3)
