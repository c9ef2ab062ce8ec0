"""Gluon Trainer through a KVStore (MXNet 1.9.1's update_on_kvstore rules), in one process."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, gluon

CTXS = [mx.cpu(0), mx.cpu(1)]


def _step(x, trainer, batch=1):
    with autograd.record():
        for w in x.list_data():
            (w + 1).backward()
    trainer.step(batch)


def test_multi_context_updates_on_the_store():
    x = gluon.Parameter("x", shape=(10,))
    x.initialize(ctx=CTXS, init="zeros")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0, "momentum": 0.5})
    _step(x, trainer)
    assert trainer._update_on_kvstore is True and trainer._kvstore.type == "device"
    assert (x.data(mx.cpu(1)).asnumpy() == -2).all()
    with pytest.raises(AssertionError, match="update_on_kvstore"):
        trainer.update(1)
    with pytest.raises(AssertionError, match="update_on_kvstore"):
        trainer.allreduce_grads()


def test_single_context_has_no_store_and_custom_store_no_optimizer():
    x = gluon.Parameter("x", shape=(3,))
    x.initialize(ctx=mx.cpu(0), init="zeros")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0})
    _step(x, trainer)
    assert trainer._kvstore is None and trainer._update_on_kvstore is None
    y = gluon.Parameter("y", shape=(3,))
    y.initialize(ctx=CTXS, init="zeros")
    trainer = gluon.Trainer([y], "sgd", {"learning_rate": 1.0}, kvstore=mx.kv.create("teststore"))
    _step(y, trainer)
    assert trainer._update_on_kvstore is False and (y.data(mx.cpu(1)).asnumpy() == -2).all()
    bad = gluon.Trainer([y], "sgd", kvstore=mx.kv.create("teststore"), update_on_kvstore=True)
    with pytest.raises(ValueError, match="update_on_kvstore=False"):
        bad._init_kvstore()


def test_loading_parameters_resets_the_store(tmp_path):
    params = gluon.ParameterDict()
    x = params.get("x", shape=(10,))
    params.initialize(ctx=CTXS, init="zeros")
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.1}, kvstore="local")
    params.save(str(tmp_path / "p.params"))
    _step(x, trainer)
    params.load(str(tmp_path / "p.params"))
    assert trainer._kvstore is None and not trainer._kv_initialized
    _step(x, trainer)
    assert np.allclose(x.data(mx.cpu(0)).asnumpy(), -0.2)  # 2 contexts x 1 x lr, not -0.4


def test_compression_params_reach_the_store():
    x = gluon.Parameter("x", shape=(4,))
    x.initialize(ctx=CTXS, init="zeros")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0}, compression_params={"type": "2bit", "threshold": 1.5})
    _step(x, trainer)  # each context pushes 1 < threshold: nothing is sent yet
    assert (x.data(mx.cpu(0)).asnumpy() == 0).all()
    _step(x, trainer)  # residual 2 >= 1.5 on each context: 2 * 1.5 arrives
    np.testing.assert_allclose(x.data(mx.cpu(1)).asnumpy(), -3.0)


def test_states_round_trip_through_the_store(tmp_path):
    x = gluon.Parameter("x", shape=(5,))
    x.initialize(ctx=CTXS, init="zeros")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0, "momentum": 0.5})
    _step(x, trainer)
    trainer.save_states(str(tmp_path / "t.states"))
    before = trainer._kvstore._updater.states[0].asnumpy()
    _step(x, trainer)
    trainer.load_states(str(tmp_path / "t.states"))
    np.testing.assert_array_equal(trainer._kvstore._updater.states[0].asnumpy(), before)
    assert trainer._optimizer is trainer._kvstore._updater.optimizer


@pytest.mark.parametrize("in_units", [6, 0])
def test_store_writes_inside_a_recorded_forward_are_not_recorded(in_units):
    """A row_sparse weight read in forward (under autograd.record) makes the Trainer set up its
    store there and broadcast every parameter into its contexts: those writes into variables
    are the store's, not recorded (MXNet: engine copies), and training goes on normally. With a
    deferred Dense (in_units=0) the second context's forward broadcasts the Dense weight again,
    into the first context's copy that the tape already uses: equal values, left untouched."""
    class Net(gluon.Block):
        def __init__(self):
            super().__init__(prefix="rsnet_")
            with self.name_scope():
                self.table = self.params.get("table", stype="row_sparse", shape=(4, 3), grad_stype="row_sparse")
                self.dense = gluon.nn.Dense(2, in_units=in_units)

        def forward(self, x):
            rows = self.table.row_sparse_data(x)
            return self.dense(mx.nd.Embedding(x, rows, input_dim=4, output_dim=3, sparse_grad=True))

    net = Net()
    net.initialize(mx.init.One(), ctx=[mx.cpu(1), mx.cpu(2)])
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1})
    xs = gluon.utils.split_and_load(mx.nd.array([[0, 2], [1, 2]]), [mx.cpu(1), mx.cpu(2)])
    with mx.autograd.record():
        ys = [net(x) for x in xs]
    mx.autograd.backward(ys)
    trainer.step(1)
    table = net.table.row_sparse_data(mx.nd.arange(0, 4, ctx=mx.cpu(1))).asnumpy()
    np.testing.assert_array_equal(table[:, 0], [-1, -1, -3, 1])   # rows 0, 1 once, row 2 twice, row 3 unused
