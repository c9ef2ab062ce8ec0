"""mx.nd.sparse: dense-backed row_sparse / csr arrays with MXNet 1.9.1's visible semantics
(expected values were read off MXNet 1.9.1), and the Gluon paths that use them."""
import pickle

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import gluon
from hybridgraph.base import NotSupportedForSparseNDArray
from hybridgraph.nd.sparse import CSRNDArray, RowSparseNDArray

DENSE = [[0, 0], [1, 2], [0, 0], [3, 0]]


def test_tostype_views_match_mxnet():
    a = mx.nd.array(DENSE)
    assert a.stype == "default" and a.tostype("default") is a
    r = a.tostype("row_sparse")
    assert isinstance(r, RowSparseNDArray) and r.stype == "row_sparse"
    assert r.indices.asnumpy().tolist() == [1, 3] and r.indices.dtype == np.int64
    assert r.data.asnumpy().tolist() == [[1, 2], [3, 0]]
    c = a.tostype("csr")
    assert isinstance(c, CSRNDArray)
    assert c.indptr.asnumpy().tolist() == [0, 0, 2, 2, 3]
    assert c.indices.asnumpy().tolist() == [0, 1, 0] and c.data.asnumpy().tolist() == [1, 2, 3]
    assert r.tostype("default").stype == "default" and np.array_equal(r.asnumpy(), DENSE)
    with pytest.raises(ValueError, match="row_sparse to csr"):
        r.tostype("csr")
    assert repr(r) == "\n<RowSparseNDArray 4x2 @cpu(0)>"


def test_result_storage_types_follow_mxnet():
    a = mx.nd.array(DENSE)
    r, c = a.tostype("row_sparse"), a.tostype("csr")
    for res in (r * 2, r / 2, r + r, r - r, r * r, -r):
        assert res.stype == "row_sparse"
    for res in (c * 2, c + c):
        assert res.stype == "csr"
    assert (r + a).stype == "default" and (a + r).stype == "default"
    d = mx.nd.ones((4, 2))
    d += r
    assert d.stype == "default" and d.asnumpy().tolist() == [[1, 1], [2, 3], [1, 1], [4, 1]]
    r2 = r.copy()
    r2 += r
    assert r2.stype == "row_sparse" and r2.asnumpy().tolist() == [[0, 0], [2, 4], [0, 0], [6, 0]]
    with pytest.raises(NotSupportedForSparseNDArray):
        r.reshape((8,))


def test_explicit_rows_are_kept():
    rs = mx.nd.sparse.row_sparse_array(([[0, 0], [3, 4]], [1, 3]), shape=(4, 2))
    assert rs.asnumpy().tolist() == [[0, 0], [0, 0], [0, 0], [3, 4]]
    for arr in (rs, rs * 1, rs + rs, rs.copy(), rs.copyto(mx.cpu(1)), pickle.loads(pickle.dumps(rs))):
        assert arr.indices.asnumpy().tolist() == [1, 3]
    assert mx.nd.sparse.retain(rs, mx.nd.array([3, 0])).indices.asnumpy().tolist() == [0, 3]
    x = mx.nd.zeros((4, 2)).tostype("row_sparse")
    x[:] = mx.nd.array(DENSE)
    assert x.indices.asnumpy().tolist() == [1, 3]
    x[:] = 3
    assert x.indices.asnumpy().tolist() == [0, 1, 2, 3]
    assert mx.nd.zeros((3, 2), stype="row_sparse").data.shape == (0, 2)


def test_constructors():
    cs = mx.nd.sparse.csr_matrix(([1, 2], [0, 1], [0, 1, 1, 2]), shape=(3, 2))
    assert cs.asnumpy().tolist() == [[1, 0], [0, 0], [0, 2]] and cs.dtype == np.float32
    coo = mx.nd.sparse.csr_matrix(([5, 6], ([0, 2], [1, 0])), shape=(3, 2))
    assert coo.asnumpy().tolist() == [[0, 5], [0, 0], [6, 0]]
    assert mx.nd.sparse.zeros("csr", (3, 2)).indptr.asnumpy().tolist() == [0, 0, 0, 0]
    assert mx.nd.sparse.row_sparse_array((4, 2)).indices.size == 0
    assert mx.nd.sparse.array(cs).stype == "csr" and mx.nd.sparse.zeros("default", (2,)).stype == "default"
    with pytest.raises(AssertionError, match="tostype"):
        mx.nd.sparse.array(mx.nd.ones((2, 2)))
    with pytest.raises(ValueError, match="Shape mismatch"):
        mx.nd.sparse.row_sparse_array(np.ones((2, 2)), shape=(3, 2))
    assert cs[2].asnumpy().tolist() == [[0, 2]] and cs[0:2].stype == "csr"
    scipy = pytest.importorskip("scipy.sparse", reason="asscipy / scipy input need scipy")
    m = scipy.csr_matrix(np.array([[0, 1.5], [2, 0]]))
    assert mx.nd.sparse.array(m).asnumpy().tolist() == [[0, 1.5], [2, 0]]
    assert (cs.asscipy().toarray() == cs.asnumpy()).all()


def test_rand_ndarray_sparse():
    from hybridgraph.test_utils import rand_ndarray
    r = rand_ndarray((6, 3), "row_sparse", density=0.5)
    assert r.stype == "row_sparse" and set(r.indices.asnumpy()) <= set(range(6))
    c = rand_ndarray((5, 4), "csr", density=1.0)
    assert c.stype == "csr" and len(c.data) == 20


def test_sparse_parameter_trains_through_the_kvstore():
    x = gluon.Parameter("x", shape=(4, 2), stype="row_sparse", grad_stype="row_sparse")
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="ones")
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        x.data()
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 0.5})
    weights = x.list_row_sparse_data(mx.nd.array([0, 2], dtype="int64"))
    with mx.autograd.record():
        for w in weights:
            assert w.indices.asnumpy().tolist() == [0, 2] and w.asnumpy()[:, 0].tolist() == [1, 0, 1, 0]
            (w * 2).backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is True
    # (as MXNet) each context's gradient is 2 on every row; the store sums them (4) and updates all rows
    w = x.row_sparse_data(mx.nd.arange(0, 4, ctx=mx.cpu(1)))
    assert w.context == mx.cpu(1) and w.asnumpy()[:, 0].tolist() == [-1, -1, -1, -1]
    with pytest.raises(RuntimeError, match="More than one trainers"):
        gluon.Trainer([x], "sgd")
    with pytest.raises(ValueError, match="update_on_kvstore=False"):
        y = gluon.Parameter("y", shape=(2, 2), stype="row_sparse")
        y.initialize()
        gluon.Trainer([y], "sgd", update_on_kvstore=False)._init_kvstore()


def test_sparse_grad_with_dense_weight_updates_locally():
    x = gluon.Parameter("x", shape=(3,), grad_stype="row_sparse")
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    assert x.list_grad()[0].stype == "row_sparse"
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0})
    with mx.autograd.record():
        for w in x.list_data():
            (w + 1).backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    assert x.data(mx.cpu(1)).asnumpy().tolist() == [-2, -2, -2]


# weights after 3 updates with the row_sparse gradients of `_lazy_run`, from MXNet 1.9.1
_LAZY_EXPECTED = {
    ("sgd", (("momentum", 0.9), ("wd", 0.1))): [[0.48210, 0.96420], [2.87000, 3.86000], [4.61100, 6.31560], [7, 8]],
    ("sgd", (("lazy_update", False), ("momentum", 0.9), ("wd", 0.1))):
        [[0.37717, 0.75434], [2.64414, 3.58852], [4.43829, 6.23348], [6.61065, 7.55503]],
    ("sgd", (("wd", 0.1),)): [[0.58110, 1.16220], [2.87000, 3.86000], [4.70100, 6.27960], [7, 8]],
    ("adam", (("wd", 0.1),)): [[0.82053, 1.82055], [2.92559, 3.92559], [4.81710, 6.17250], [7, 8]],
    ("rmsprop", (("wd", 0.1),)): [[0.36223, 1.35735], [2.31541, 3.30211], [4.26248, 6.34873], [6.27422, 7.27267]],
}


@pytest.mark.parametrize("name,kwargs", list(_LAZY_EXPECTED))
def test_lazy_update_touches_only_the_gradient_rows(name, kwargs):
    """SGD / Adam with lazy_update (their default) update only a row_sparse gradient's rows;
    other optimizers (RMSProp) and lazy_update=False update every row, as MXNet."""
    upd = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **dict(kwargs)))
    w = mx.nd.array(np.arange(8, dtype=np.float32).reshape(4, 2) + 1)
    for step in range(3):
        g = np.array([[1, 2], [0, 0], [0.5, -1], [0, 0]], dtype=np.float32) * (step + 1)
        if step == 1:
            g = np.array([[0, 0], [1, 1], [0, 0], [0, 0]], dtype=np.float32)
        upd(0, mx.nd.array(g).tostype("row_sparse"), w)
    np.testing.assert_allclose(w.asnumpy(), _LAZY_EXPECTED[(name, kwargs)], rtol=1e-5, atol=1e-5)


def test_save_parameters_of_a_sparse_weight(tmp_path):
    """A row_sparse weight is saved with the values its Trainer's kvstore holds and loads back
    as a row_sparse parameter."""
    class Net(gluon.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.embed = self.params.get("embed", stype="row_sparse", shape=(4, 2), grad_stype="row_sparse")

    net = Net()
    net.initialize(mx.init.One())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    w = net.embed.row_sparse_data(mx.nd.array([1]))
    with mx.autograd.record():
        (w * 3).backward()
    trainer.step(1)
    net.save_parameters(str(tmp_path / "net.params"))
    fresh = Net()
    fresh.load_parameters(str(tmp_path / "net.params"))
    assert fresh.embed._data[0].stype == "row_sparse"
    assert fresh.embed._data[0].asnumpy()[:, 0].tolist() == [-2, -2, -2, -2]


@pytest.mark.parametrize("stype", ["default", "row_sparse", "csr"])
@pytest.mark.parametrize("grad_stype", [None, "default", "row_sparse", "csr"])
def test_attach_grad_storage_type_and_detach_keep_stypes(stype, grad_stype):
    """MXNet: the gradient buffer has the given storage type (the array's own by default), and
    detach() keeps the array's; backward writes the dense values into it."""
    x = mx.nd.zeros((2, 3), stype=stype)
    x.attach_grad(stype=grad_stype)
    assert x.grad.stype == (grad_stype or stype)
    assert x.detach().stype == stype
    lhs = mx.nd.array(np.arange(4.0).reshape(2, 2)).tostype("csr")
    with mx.autograd.record():
        y = mx.nd.dot(lhs, x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.arange(4.0).reshape(2, 2).T @ np.ones((2, 3)))
    assert x.grad.stype == (grad_stype or stype)
