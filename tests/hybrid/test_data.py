"""gluon.data (datasets, samplers, DataLoader) and gluon.utils, with MXNet 1.9.1's behaviour."""
from __future__ import annotations

import multiprocessing
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph import nd
from hybridgraph.gluon import data as gdata, utils


def test_array_dataset_and_simple_dataset():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = nd.array(np.arange(6))
    ds = gdata.ArrayDataset(x, y)
    assert len(ds) == 6
    sample = ds[2]
    assert isinstance(sample, tuple) and sample[0].tolist() == [4.0, 5.0] and sample[1] == 2.0
    assert isinstance(ds[2][1], np.float32)  # 1-D NDArrays become numpy, elements are scalars
    single = gdata.ArrayDataset(x)
    assert single[1].tolist() == [2.0, 3.0]
    with pytest.raises(AssertionError, match="same length"):
        gdata.ArrayDataset(x, np.arange(5))
    assert gdata.SimpleDataset([1, 2, 3])[1] == 2


def test_transform_filter_shard_take():
    ds = gdata.ArrayDataset(np.arange(10), np.arange(10) * 10)
    t = ds.transform(lambda a, b: a + b)
    assert [t[i] for i in range(3)] == [0, 11, 22]
    tf = ds.transform_first(lambda a: -a)
    assert tf[3] == (-3, 30)
    eager = gdata.SimpleDataset([1, 2]).transform(lambda v: v * 2, lazy=False)
    assert isinstance(eager, gdata.SimpleDataset) and list(eager) == [2, 4]
    even = gdata.SimpleDataset(list(range(10))).filter(lambda v: v % 2 == 0)
    assert list(even) == [0, 2, 4, 6, 8]
    shards = [list(gdata.SimpleDataset(list(range(10))).shard(3, i)) for i in range(3)]
    assert shards == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert list(gdata.SimpleDataset([1, 2, 3]).take(2)) == [1, 2]
    assert len(gdata.SimpleDataset([1, 2, 3]).take(None)) == 3
    with pytest.raises(TypeError, match="Invalid sampler type"):
        gdata.SimpleDataset([1]).sample([0])


def test_samplers():
    assert list(gdata.SequentialSampler(3, start=2)) == [2, 3, 4]
    np.random.seed(0)
    r = list(gdata.RandomSampler(10))
    assert sorted(r) == list(range(10)) and r != list(range(10))
    keep = gdata.BatchSampler(gdata.SequentialSampler(7), 3, "keep")
    assert list(keep) == [[0, 1, 2], [3, 4, 5], [6]] and len(keep) == 3
    discard = gdata.BatchSampler(gdata.SequentialSampler(7), 3, "discard")
    assert list(discard) == [[0, 1, 2], [3, 4, 5]] and len(discard) == 2
    roll = gdata.BatchSampler(gdata.SequentialSampler(7), 3, "rollover")
    assert list(roll) == [[0, 1, 2], [3, 4, 5]]
    assert len(roll) == 2  # 1 left over + 7 -> 2 full batches
    assert list(roll) == [[6, 0, 1], [2, 3, 4]]
    with pytest.raises(ValueError, match="last_batch must be one of"):
        list(gdata.BatchSampler(gdata.SequentialSampler(2), 3, "bad"))


@given(n=st.integers(1, 40), bs=st.integers(1, 9), last=st.sampled_from(["keep", "discard", "rollover"]))
def test_batch_sampler_len_matches_iteration(n, bs, last):
    s = gdata.BatchSampler(gdata.SequentialSampler(n), bs, last)
    for _ in range(3):
        expected = len(s)
        assert len(list(s)) == expected


def test_default_batchify():
    b = gdata.default_batchify_fn([nd.array([1, 2]), nd.array([3, 4])])
    assert isinstance(b, nd.NDArray) and b.shape == (2, 2)
    out = gdata.default_batchify_fn([(np.ones(2, dtype=np.float64), 1), (np.zeros(2, dtype=np.float64), 0)])
    assert isinstance(out, list) and out[0].dtype == np.float64 and out[0].shape == (2, 2)
    assert out[1].asnumpy().tolist() == [1, 0]


def _dataset():
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    return gdata.ArrayDataset(x, np.arange(10, dtype=np.int32))


def _collect(loader):
    return [(d.asnumpy(), lab.asnumpy()) for d, lab in loader]


def test_dataloader_single_process():
    loader = gdata.DataLoader(_dataset(), batch_size=4)
    batches = _collect(loader)
    assert len(loader) == 3 and [b[0].shape for b in batches] == [(4, 3), (4, 3), (2, 3)]
    assert batches[2][1].tolist() == [8, 9] and batches[0][1].dtype == np.int32
    assert len(_collect(loader)) == 3  # iterable more than once
    assert len(list(gdata.DataLoader(_dataset(), batch_size=4, last_batch="discard"))) == 2
    np.random.seed(1)
    shuffled = np.concatenate([b[1] for b in _collect(gdata.DataLoader(_dataset(), batch_size=3, shuffle=True))])
    assert sorted(shuffled.tolist()) == list(range(10)) and shuffled.tolist() != list(range(10))


def test_dataloader_argument_errors():
    with pytest.raises(ValueError, match="batch_size must be specified"):
        gdata.DataLoader(_dataset())
    with pytest.raises(ValueError, match="shuffle must not be specified"):
        gdata.DataLoader(_dataset(), batch_size=2, shuffle=True, sampler=gdata.SequentialSampler(10))
    bs = gdata.BatchSampler(gdata.SequentialSampler(10), 5)
    with pytest.raises(ValueError, match="must not be specified if batch_sampler"):
        gdata.DataLoader(_dataset(), batch_size=2, batch_sampler=bs)
    assert len(list(gdata.DataLoader(_dataset(), batch_sampler=bs))) == 2


def test_dataloader_thread_pool_keeps_order():
    loader = gdata.DataLoader(_dataset(), batch_size=3, num_workers=2, thread_pool=True, timeout=20)
    try:
        got = _collect(loader)
        assert [b[1].tolist() for b in got] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
        assert len(_collect(loader)) == 4
    finally:
        loader.close()


def test_dataloader_processes_numpy_data_and_custom_batchify():
    loader = gdata.DataLoader(_dataset(), batch_size=4, num_workers=2, timeout=30,
                              batchify_fn=gdata.default_batchify_fn, prefetch=1)
    try:
        got = _collect(loader)
        assert [b[1].tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        np.testing.assert_array_equal(got[1][0], np.arange(12, 24, dtype=np.float32).reshape(4, 3))
    finally:
        loader.close()


def test_dataloader_processes_with_transform_and_pin_memory():
    ds = _dataset().transform_first(_double)
    loader = gdata.DataLoader(ds, batch_size=5, num_workers=1, pin_memory=True, timeout=30)
    try:
        (d0, l0), (d1, _) = list(loader)
        assert d0.context == nd.cpu_pinned(0)
        np.testing.assert_array_equal(d1.asnumpy(), 2 * np.arange(15, 30, dtype=np.float32).reshape(5, 3))
    finally:
        loader.close()


def _double(x):
    return x * 2


class _SlowDataset(gdata.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, idx):
        time.sleep(2)
        return np.float32(idx)


def test_dataloader_timeout_raises_instead_of_hanging():
    loader = gdata.DataLoader(_SlowDataset(), batch_size=1, num_workers=1, thread_pool=True, timeout=0.2)
    try:
        with pytest.raises(multiprocessing.TimeoutError, match="timed out after 0.2 seconds"):
            next(iter(loader))
    finally:
        loader.close()


# -- gluon.utils ---------------------------------------------------------------------------

def test_split_data_matches_mxnet():
    x = nd.arange(10).reshape((5, 2))
    parts = utils.split_data(x, 3, even_split=False)
    assert [p.shape for p in parts] == [(2, 2), (2, 2), (1, 2)]
    assert parts[2].asnumpy().tolist() == [[8.0, 9.0]]
    with pytest.raises(ValueError, match="cannot be evenly split into 3 slices along axis 0"):
        utils.split_data(x, 3)
    cols = utils.split_data(nd.arange(12).reshape((2, 6)), 3, batch_axis=1)
    assert [c.asnumpy().tolist() for c in cols][1] == [[2.0, 3.0], [8.0, 9.0]]


def test_split_and_load():
    ctxs = [nd.cpu(0), nd.cpu(1)]
    parts = utils.split_and_load(np.arange(8, dtype=np.float32).reshape(4, 2), ctxs)
    assert [p.context for p in parts] == ctxs and parts[1].asnumpy().tolist() == [[4.0, 5.0], [6.0, 7.0]]
    one = utils.split_and_load(nd.ones((3, 1)), [nd.cpu(1)])
    assert len(one) == 1 and one[0].context == nd.cpu(1)


def test_clip_global_norm_matches_mxnet():
    a = [nd.array([3.0, 4.0]), nd.array([[12.0]])]
    norm = utils.clip_global_norm(a, 1.0)
    assert norm == pytest.approx(13.0)
    np.testing.assert_allclose(a[0].asnumpy(), [0.23076925, 0.30769232], rtol=1e-6)
    np.testing.assert_allclose(a[1].asnumpy(), [[0.923077]], rtol=1e-6)
    b = [nd.array([0.3, 0.4])]
    ret = utils.clip_global_norm(b, 1.0, check_isfinite=False)
    assert isinstance(ret, nd.NDArray) and ret.shape == (1,)
    np.testing.assert_allclose(b[0].asnumpy(), [0.3, 0.4], rtol=1e-6)  # under the limit: unchanged
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        utils.clip_global_norm([nd.array([np.inf])], 1.0)
    assert any("nan or inf is detected" in str(w.message) for w in caught)


def test_download_writes_once_checks_sha1_and_explains_offline(tmp_path, monkeypatch):
    import hashlib
    calls = []
    monkeypatch.setattr(utils, "_fetch", lambda url, verify: calls.append(url) or b"payload")
    fname = utils.download("http://example.com/a/x.params", path=str(tmp_path))
    assert fname == str(tmp_path / "x.params") and (tmp_path / "x.params").read_bytes() == b"payload"
    utils.download("http://example.com/a/x.params", path=str(tmp_path))  # present: not fetched again
    assert len(calls) == 1 and sorted(p.name for p in tmp_path.iterdir()) == ["x.params"]
    good = hashlib.sha1(b"payload").hexdigest()
    assert utils.download("http://e/x.params", path=fname, sha1_hash=good) == fname and len(calls) == 1
    with pytest.raises(UserWarning, match="hash does not match"):
        utils.download("http://e/x.params", path=fname, sha1_hash="0" * 40, retries=1)

    def offline(url, verify):
        raise ConnectionError("no route")
    monkeypatch.setattr(utils, "_fetch", offline)
    with pytest.raises(OSError, match="place it at"):
        utils.download("http://example.com/y.params", path=str(tmp_path / "y.params"), retries=2)
    assert not (tmp_path / "y.params").exists()
