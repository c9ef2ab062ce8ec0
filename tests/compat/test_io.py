"""mx.io: DataDesc, DataBatch, NDArrayIter (batching, shuffling, last-batch rules),
ResizeIter, PrefetchingIter — against MXNet 1.9.1's behaviour."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph.io import DataBatch, DataDesc, DataIter, NDArrayIter, PrefetchingIter, ResizeIter

from ._helpers import both


def _epochs(handle: str, shuffle: bool = False, epochs: int = 2, n: int = 10, bs: int = 3) -> list:
    np.random.seed(1)
    it = NDArrayIter(np.arange(n * 2).reshape(n, 2), np.arange(n), bs, shuffle=shuffle,
                     last_batch_handle=handle)
    out = []
    for _ in range(epochs):
        out.append([(b.data[0].asnumpy()[:, 0].tolist(), b.label[0].asnumpy().tolist(), b.pad) for b in it])
        it.reset()
    return out


# expected values printed by MXNet 1.9.1 for the same calls
PAD = [([0, 2, 4], [0, 1, 2], 0), ([6, 8, 10], [3, 4, 5], 0), ([12, 14, 16], [6, 7, 8], 0),
       ([18, 0, 2], [9, 0, 1], 2)]


def test_pad_wraps_to_the_beginning():
    assert _epochs("pad") == [PAD, PAD]


def test_discard_drops_the_last_batch():
    assert _epochs("discard") == [PAD[:3], PAD[:3]]


def test_roll_over_carries_the_rest_into_the_next_epoch():
    second = [([18, 0, 2], [9, 0, 1], 1), ([4, 6, 8], [2, 3, 4], 0), ([10, 12, 14], [5, 6, 7], 0)]
    assert _epochs("roll_over") == [PAD[:3], second]


def test_shuffle_uses_numpy_random_like_mxnet():
    assert _epochs("discard", shuffle=True) == [
        [([4, 18, 12], [2, 9, 6], 0), ([8, 0, 6], [4, 0, 3], 0), ([2, 14, 16], [1, 7, 8], 0)],
        [([6, 8, 0], [3, 4, 0], 0), ([12, 16, 4], [6, 8, 2], 0), ([2, 10, 18], [1, 5, 9], 0)]]
    assert _epochs("roll_over", shuffle=True)[1][0] == ([10, 6, 8], [5, 3, 4], 1)


def test_pad_larger_than_the_data_tiles_it():
    assert _epochs("pad", n=2, bs=5)[0] == [([0, 2, 0, 2, 0], [0, 1, 0, 1, 0], 3)]


def test_names_dicts_lists_and_provide_data():
    it = NDArrayIter({"b": np.zeros((4, 3)), "a": np.ones((4, 1))}, {"l2": np.zeros(4)}, 2)
    assert [d.name for d in it.provide_data] == ["a", "b"]
    assert repr(it.provide_data[1]) == "DataDesc[b,(2, 3),<class 'numpy.float32'>,NCHW]"
    assert it.provide_label == [("l2", (2,))]
    it = NDArrayIter([np.zeros((4, 3)), np.ones((4, 1))], batch_size=2)
    assert [d.name for d in it.provide_data] == ["_0_data", "_1_data"] and it.provide_label == []
    assert [x.shape for x in it.next().data] == [(2, 3), (2, 1)]
    it = NDArrayIter(nd.ones((5, 2), dtype="float64"), np.zeros(5), 5, data_name="x", label_name="y")
    assert it.provide_data[0].dtype is np.float64 and it.provide_label[0].name == "y"
    assert it.getindex() is None


def test_next_iter_and_reset():
    it = NDArrayIter(np.arange(8).reshape(4, 2), np.arange(4), batch_size=2)
    assert iter(it) is it
    batches = [next(it), it.next()]
    with pytest.raises(StopIteration):
        it.next()
    it.reset()
    assert it.iter_next() and it.getpad() == 0 and it.getdata()[0].asnumpy().tolist() == [[0, 1], [2, 3]]
    assert it.getlabel()[0].asnumpy().tolist() == [0, 1]
    assert len(batches) == 2 and str(batches[0]) == "DataBatch: data shapes: [(2, 2)] label shapes: [(2,)]"


def test_hard_reset_drops_rolled_over_data():
    it = NDArrayIter(np.arange(5), batch_size=2, last_batch_handle="roll_over")
    assert len(list(it)) == 2
    it.hard_reset()
    assert [b.data[0].asnumpy().tolist() for b in it] == [[0, 1], [2, 3]]


def test_bad_last_batch_handle():
    with pytest.raises(ValueError, match="last_batch_handle"):
        NDArrayIter(np.zeros(3), last_batch_handle="drop")


def test_data_desc_and_batch():
    d = DataDesc("x", (1, 2))
    assert d == ("x", (1, 2)) and d.dtype is np.float32 and d.layout == "NCHW"
    assert repr(d) == "DataDesc[x,(1, 2),<class 'numpy.float32'>,NCHW]"
    assert DataDesc.get_batch_axis("TNC") == 1 and DataDesc.get_batch_axis(None) == 0
    assert DataDesc.get_list([("a", (1,))], [("a", np.int32)])[0].dtype is np.int32
    assert DataDesc.get_list([("a", (1,))], None)[0].dtype is np.float32
    with pytest.raises(AssertionError):
        DataBatch(nd.zeros((2,)))
    b = DataBatch([nd.zeros((2, 3))], pad=1, index=np.arange(2), bucket_key=5)
    assert b.pad == 1 and b.bucket_key == 5 and str(b).endswith("label shapes: None")


def test_custom_data_iter():
    class Counter(DataIter):
        def __init__(self):
            super().__init__(batch_size=1)
            self.i = 0

        def iter_next(self):
            self.i += 1
            return self.i <= 3

        def getdata(self):
            return [nd.array([self.i])]

        def getpad(self):
            return 0

    assert [b.data[0].asscalar() for b in Counter()] == [1, 2, 3]
    base = DataIter()
    assert base.getdata() is None and base.getpad() is None and not base.iter_next()


def test_resize_iter():
    r = ResizeIter(NDArrayIter(np.arange(10).reshape(5, 2), batch_size=2), 4)
    assert [b.data[0].asnumpy()[:, 0].tolist() for b in r] == [[0, 2], [4, 6], [8, 0], [0, 2]]
    r.reset()
    assert len(list(r)) == 4 and r.getpad() == 0 and r.getindex() is None
    assert r.provide_data[0].shape == (2, 2) and r.batch_size == 2


def test_prefetching_iter_joins_and_renames():
    it1 = NDArrayIter({"data": np.arange(8).reshape(4, 2)}, np.arange(4), batch_size=2)
    it2 = NDArrayIter({"data": -np.arange(8).reshape(4, 2)}, np.arange(4), batch_size=2)
    p = PrefetchingIter([it1, it2], rename_data=[{"data": "d1"}, {"data": "d2"}])
    try:
        assert [d.name for d in p.provide_data] == ["d1", "d2"] and p.batch_size == 2
        for _ in range(2):
            batches = list(p)
            assert len(batches) == 2
            assert batches[1].data[0].asnumpy().tolist() == [[4, 5], [6, 7]]
            assert batches[1].data[1].asnumpy().tolist() == [[-4, -5], [-6, -7]]
            assert len(batches[0].label) == 2 and p.getpad() == 0
            p.reset()
    finally:
        p.close()
    single = PrefetchingIter(NDArrayIter(np.zeros((3, 1)), batch_size=3))
    assert len(list(single)) == 1 and single.provide_label == []
    single.close()


def test_mx_io_namespace():
    assert mx.io.NDArrayIter is NDArrayIter
    from hybridgraph.io import DataDesc as D
    assert D is DataDesc


CASES = r'''
import sys
import numpy as np
import {MX} as mx
for handle in ("pad", "discard", "roll_over"):
    for shuffle in (False, True):
        np.random.seed(3)
        it = mx.io.NDArrayIter({{"x": np.random.rand(11, 2), "w": np.arange(11)}}, np.arange(11) % 3, 4,
                               shuffle=shuffle, last_batch_handle=handle)
        for epoch in range(3):
            for b in it:
                print(handle, shuffle, epoch, [d.asnumpy().round(5).tolist() for d in b.data],
                      b.label[0].asnumpy().tolist(), b.pad)
            it.reset()
        print(it.provide_data, it.provide_label)
'''


def test_same_batches_as_mxnet(mxnet_python, tmp_path):
    runs = both(mxnet_python, CASES, [], tmp_path, "io_cases")
    assert runs["mxnet"].stdout == runs["hybridgraph"].stdout
