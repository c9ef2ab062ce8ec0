"""gluon.contrib.estimator: fit/evaluate loops, default and user handlers, stopping by epochs or
batches, checkpoints with resume, early stopping, and the errors for bad arguments."""
import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import gluon
from hybridgraph.gluon.contrib.estimator import (BatchEnd, CheckpointHandler, EarlyStoppingHandler, Estimator,
                                                 EpochEnd, LoggingHandler, MetricHandler, StoppingHandler,
                                                 ValidationHandler)


def _data(n=32, batch=8):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32)
    return gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y)), batch_size=batch)


def _est(**kw):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(2, in_units=4))
    net.initialize(mx.init.Xavier())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    return Estimator(net, loss=gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer, **kw)


class _Count(BatchEnd, EpochEnd):
    def __init__(self):
        self.batches = self.epochs = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.batches += 1
        assert set(kwargs) == {"batch", "pred", "label", "loss"}

    def epoch_end(self, estimator, *args, **kwargs):
        self.epochs += 1


def test_fit_by_epochs_and_batches_trains_and_names_metrics():
    est = _est()
    assert [m.name for m in est.train_metrics] == ["training accuracy", "training softmaxcrossentropyloss"]
    assert [m.name for m in est.val_metrics] == ["validation accuracy", "validation softmaxcrossentropyloss"]
    count = _Count()
    est.fit(_data(), val_data=_data(), epochs=6, event_handlers=[count])
    assert count.epochs == 6 and count.batches == 24
    assert est.train_metrics[0].get()[1] > 0.8 and not np.isnan(est.val_metrics[1].get()[1])
    count = _Count()
    est.fit(_data(), batches=5, event_handlers=[count])
    assert count.batches == 5 and count.epochs == 2  # the second epoch is cut after one batch


def test_bad_arguments():
    est = _est()
    with pytest.raises(ValueError, match="DataLoader"):
        est.fit([mx.nd.ones((2, 4))], epochs=1)
    with pytest.raises(ValueError, match="exactly one"):
        est.fit(_data(), epochs=1, batches=1)
    with pytest.raises(ValueError, match="loss must be a Loss"):
        Estimator(gluon.nn.Dense(1), loss="l2")
    with pytest.raises(ValueError, match="context"):
        Estimator(gluon.nn.Dense(1), loss=gluon.loss.L2Loss(), context="cpu")
    with pytest.raises(ValueError, match="outside of the known"):
        est.fit(_data(), epochs=1, event_handlers=[MetricHandler([mx.metric.Accuracy()]),
                                                   LoggingHandler(metrics=[mx.metric.Accuracy()])])


def test_early_stopping_and_validation_period(capsys):
    est = _est()
    calls = []
    val = ValidationHandler(_data(), eval_fn=lambda **kw: calls.append(kw), epoch_period=2)
    stop = EarlyStoppingHandler(monitor=est.train_metrics[0], patience=0, mode="min")
    est.fit(_data(), epochs=10, event_handlers=[val, stop])
    assert stop.stop_training and stop.current_epoch < 10
    assert len(calls) == stop.current_epoch // 2
    assert "Train finished" in capsys.readouterr().out


def test_checkpoints_keep_max_and_resume(tmp_path):
    est = _est()
    est.net.hybridize()
    ckpt = CheckpointHandler(str(tmp_path), model_prefix="m", epoch_period=1, max_checkpoints=2,
                             save_best=True, monitor=est.train_metrics[0], mode="max")
    est.fit(_data(), epochs=3, event_handlers=[ckpt])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "m-symbol.json" in names and "m-best.params" in names and "m-best.states" in names
    assert [n for n in names if n.startswith("m-epoch")] == ["m-epoch1batch8.params", "m-epoch1batch8.states",
                                                           "m-epoch2batch12.params", "m-epoch2batch12.states"]
    est2 = _est()
    resume = CheckpointHandler(str(tmp_path), model_prefix="m", resume_from_checkpoint=True)
    est2.fit(_data(), epochs=4, event_handlers=[resume])
    assert resume.trained_epoch == 2 and est2.max_epoch == 1
    np.testing.assert_allclose(est2.net[0].weight.data().asnumpy().shape, (2, 4))


def test_stopping_handler_counts():
    est = _est()
    stop = StoppingHandler()
    est.max_epoch, est.max_batch = None, 3
    stop.train_begin(est)
    assert [stop.batch_end(est) for _ in range(3)] == [False, False, True]
