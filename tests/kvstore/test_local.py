"""The in-process KVStore (`mx.kv.create('local' | 'device')`) against MXNet 1.9.1's semantics."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hybridgraph as mx
from hybridgraph.kvstore.compression import GradientCompression
from hybridgraph.nd.errors import MXNetError

REF = np.load(Path(__file__).resolve().parent.parent / "data" / "kvstore_ref.npz")
SHAPE = (4, 4)


def test_create_names_and_aliases():
    assert mx.kv is mx.kvstore
    for name in ("local", "device", "local_allreduce_cpu", "foo"):
        kv = mx.kv.create(name)
        assert kv.type == name and kv.rank == 0 and kv.num_workers == 1
    assert mx.kv.create("LOCAL").type == "local"
    assert mx.kv.create("teststore").type == "teststore"
    with pytest.raises(TypeError):
        mx.kv.create(3)
    with pytest.raises(NotImplementedError, match="dist_sync"):
        mx.kv.create("dist_async")


def test_push_sums_devices_and_pull_copies():
    kv = mx.kv.create("device")
    kv.init(3, mx.nd.zeros(SHAPE))
    kv.push(3, [mx.nd.ones(SHAPE, ctx=mx.cpu(i)) for i in range(4)])
    outs = [mx.nd.empty(SHAPE, ctx=mx.cpu(i)) for i in range(4)]
    kv.pull(3, out=outs)
    for i, o in enumerate(outs):
        assert (o.asnumpy() == 4).all() and o.context == mx.cpu(i)
    kv.push(3, mx.nd.ones(SHAPE) * 2)  # no updater: the sum replaces the value
    kv.pull(3, out=outs[0])
    assert (outs[0].asnumpy() == 2).all()


def test_list_keys_str_keys_and_pushpull():
    kv = mx.kv.create()
    kv.init(["a", "b"], [mx.nd.zeros(SHAPE)] * 2)
    kv.pushpull(["a", "b"], [[mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)], mx.nd.ones(SHAPE) * 3])
    out = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)]
    kv.pull(["a", "b"], out=out)
    assert (out[0].asnumpy() == 2).all() and (out[1].asnumpy() == 3).all()
    vals = [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE) * 2]
    res = mx.nd.zeros(SHAPE)
    kv.pushpull("a", vals, out=res)
    assert (res.asnumpy() == 3).all() and (vals[0].asnumpy() == 1).all()
    kv.pushpull("a", vals)  # no out: written back into the values
    assert (vals[0].asnumpy() == 3).all() and (vals[1].asnumpy() == 3).all()


def test_broadcast_inits_and_pulls():
    kv = mx.kv.create()
    outs = [mx.nd.zeros((2,)), mx.nd.zeros((2,), ctx=mx.cpu(1))]
    kv.broadcast(4, mx.nd.ones((2,)) * 3, out=outs)
    assert all((o.asnumpy() == 3).all() for o in outs)
    with pytest.raises(MXNetError, match="duplicate init of key 4"):
        kv.broadcast(4, mx.nd.ones((2,)), out=outs)


def test_row_sparse_pull_returns_exactly_the_requested_rows():
    kv = mx.kv.create()
    value = mx.nd.arange(12).reshape((4, 3)) * (mx.nd.arange(4).reshape((4, 1)) != 2)  # row 2 is zero
    kv.init("w", value.tostype("row_sparse"))
    outs = [mx.nd.ones((4, 3)).tostype("row_sparse"), mx.nd.zeros((4, 3), ctx=mx.cpu(1), stype="row_sparse")]
    kv.row_sparse_pull("w", out=outs, row_ids=mx.nd.array([2, 0, 2]))
    expected = np.arange(12.0).reshape(4, 3) * np.array([[1], [0], [0], [0]])
    for o in outs:
        assert o.stype == "row_sparse"
        np.testing.assert_array_equal(o.asnumpy(), expected)
        assert o.indices.asnumpy().tolist() == [0, 2]   # a requested zero row is stored too
    assert outs[1].context == mx.cpu(1)
    kv.row_sparse_pull("w", out=outs, row_ids=[mx.nd.array([1]), mx.nd.array([3])])
    assert outs[0].asnumpy()[1].tolist() == [3, 4, 5] and outs[1].asnumpy()[:3].sum() == 0
    assert outs[0].indices.asnumpy().tolist() == [1] and outs[1].indices.asnumpy().tolist() == [3]
    with pytest.raises(MXNetError, match="RowSparseNDArray"):
        kv.row_sparse_pull("w", out=mx.nd.zeros((4, 3)), row_ids=mx.nd.array([1]))
    kv.init("empty", mx.nd.zeros((4, 3), stype="row_sparse"))
    kv.row_sparse_pull("empty", out=outs[0], row_ids=mx.nd.array([1]))
    assert outs[0].indices.size == 0 and outs[0].asnumpy().sum() == 0   # nothing stored, nothing pulled
    kv.init("dense", value)
    with pytest.raises(MXNetError, match="storage type 'default'"):
        kv.row_sparse_pull("dense", out=outs[0], row_ids=mx.nd.array([1]))


def test_pull_skips_sparse_outputs_unless_asked():
    kv = mx.kv.create()
    kv.init(0, mx.nd.ones((2, 2)))
    out = (mx.nd.ones((2, 2)) * 5).tostype("row_sparse")
    kv.pull(0, out=out)
    assert out.asnumpy().tolist() == [[5, 5], [5, 5]]
    kv.pull(0, out=out, ignore_sparse=False)
    assert out.asnumpy().tolist() == [[1, 1], [1, 1]] and out.stype == "row_sparse"


def test_errors_are_clear():
    kv = mx.kv.create()
    kv.init(3, mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match="duplicate init"):
        kv.init(3, mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match="int or str keys"):
        kv.init("a", mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match="has not been initialized"):
        kv.push(9, mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match=r"shape \(2,\)"):
        kv.push(3, mx.nd.zeros((2,)))
    kv.init(4, mx.nd.ones(SHAPE).tostype("row_sparse"))
    with pytest.raises(MXNetError, match=r"must be in \[0, 4\)"):
        kv.row_sparse_pull(4, out=mx.nd.zeros(SHAPE, stype="row_sparse"), row_ids=mx.nd.array([4]))
    with pytest.raises(MXNetError, match="not supported for this type"):
        kv.set_gradient_compression({"type": "2bit"})
    with pytest.raises(AssertionError, match="Cannot save states"):
        kv.save_optimizer_states("unused")
    dev = mx.kv.create("device")
    with pytest.raises(MXNetError, match="Unknown type for gradient compression 1bit"):
        dev.set_gradient_compression({"type": "1bit"})
    with pytest.raises(MXNetError, match="Required parameter type"):
        dev.set_gradient_compression({"threshold": 0.5})
    with pytest.raises(MXNetError, match="greater than 0"):
        dev.set_gradient_compression({"type": "2bit", "threshold": 0})


def test_updater_and_optimizer_match_mxnet(tmp_path):
    kv = mx.kv.create()
    kv.init(3, mx.nd.zeros(SHAPE))
    kv._set_updater(lambda key, recv, local: local.__iadd__(recv))
    for _ in range(3):
        kv.push(3, [mx.nd.ones(SHAPE)] * 2)
    out = mx.nd.zeros(SHAPE)
    kv.pull(3, out=out)
    assert (out.asnumpy() == 6).all()

    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5))
    kv.init(0, mx.nd.ones(REF["sgd_mom_step0"].shape))
    for s in range(4):
        kv.push(0, [mx.nd.array(REF[f"grad_step{s}_dev{d}"], ctx=mx.cpu(d)) for d in range(2)])
        res = mx.nd.zeros(REF["sgd_mom_step0"].shape)
        kv.pull(0, out=res)
        np.testing.assert_allclose(res.asnumpy(), REF[f"sgd_mom_step{s}"], rtol=1e-6, atol=1e-7)
        if s == 1:
            kv.save_optimizer_states(str(tmp_path / "kv.states"))
    kv.load_optimizer_states(str(tmp_path / "kv.states"))
    assert set(kv._updater.states) == {0}


@pytest.mark.parametrize("threshold", [0.5, 0.3])
def test_2bit_compression_matches_mxnet(threshold):
    """The device store with 2-bit compression returns MXNet's numbers, residuals included."""
    shape = REF["grad_step0_dev0"].shape
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": threshold})
    kv.init(3, mx.nd.zeros(shape))
    for s in range(4):
        kv.push(3, [mx.nd.array(REF[f"grad_step{s}_dev{d}"], ctx=mx.cpu(d)) for d in range(2)])
        res = mx.nd.zeros(shape)
        kv.pull(3, out=res)
        np.testing.assert_allclose(res.asnumpy(), REF[f"2bit_t{threshold}_step{s}"], rtol=0, atol=1e-6)


@settings(deadline=None)
@given(st.lists(st.floats(-3, 3, width=32), min_size=1, max_size=40), st.floats(0.05, 2))
def test_2bit_quantize_roundtrip_keeps_error_feedback(values, threshold):
    """What is sent plus what stays in the residual is always what was pushed."""
    gc = GradientCompression({"type": "2bit", "threshold": threshold})
    grad = np.array(values, dtype=np.float32)
    packed = gc.quantize("k", grad)
    assert packed.dtype == np.uint8 and packed.size == gc.packed_size(grad.size)
    sent = gc.dequantize(packed, grad.size)
    assert set(np.unique(sent)) <= {np.float32(threshold), np.float32(-threshold), 0}
    np.testing.assert_allclose(sent + gc._residuals["k"], grad, atol=1e-5)


def test_teststore_and_registry():
    kv = mx.kv.create("teststore")
    assert kv.is_capable("optimizer") is False
    vals = [mx.nd.ones((2,)), mx.nd.ones((2,), ctx=mx.cpu(1))]
    kv.pushpull(0, vals)
    assert (vals[1].asnumpy() == 2).all()

    @mx.kv.KVStoreBase.register
    class MyStore(mx.kv.TestStore):
        pass

    try:
        assert isinstance(mx.kv.create("mystore"), MyStore)
    finally:
        del mx.kv.KVStoreBase.kv_registry["mystore"]


def test_split_sampler_gives_each_worker_its_part():
    from hybridgraph.gluon.data import ArrayDataset, DataLoader, SplitSampler
    parts = [sorted(SplitSampler(10, 3, i)) for i in range(3)]
    assert parts == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert list(SplitSampler(10, 2, 1, shuffle=False)) == [5, 6, 7, 8, 9] and len(SplitSampler(10, 3, 0)) == 3
    with pytest.raises(ValueError, match="part_index"):
        SplitSampler(10, 2, 2)
    data = ArrayDataset(np.arange(8, dtype=np.float32))
    loader = DataLoader(data, batch_size=2, sampler=SplitSampler(8, 2, 1, shuffle=False))
    assert [b.asnumpy().tolist() for b in loader] == [[4, 5], [6, 7]]
    shard = data.shard(2, 1)
    assert [shard[i] for i in range(len(shard))] == [4, 5, 6, 7]
