"""mx.callback: Speedometer, do_checkpoint, log_train_metric, ProgressBar, module_checkpoint."""
from __future__ import annotations

import logging
import re

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph.gluon import metric
from hybridgraph import callback
from hybridgraph.model import BatchEndParam, load_checkpoint


def _metric(correct: int, total: int) -> metric.Accuracy:
    m = metric.Accuracy()
    labels = nd.array(np.zeros(total))
    preds = nd.array(np.eye(2)[[0] * correct + [1] * (total - correct)])
    m.update([labels], [preds])
    return m


def _param(nbatch: int, m, epoch: int = 0) -> BatchEndParam:
    return BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=m, locals={})


def test_speedometer_logs_like_mxnet(caplog):
    caplog.set_level(logging.INFO)
    m = _metric(3, 4)
    speed = callback.Speedometer(batch_size=4, frequent=2)
    for nbatch in range(5):
        speed(_param(nbatch, m, epoch=1))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert re.fullmatch(r"Epoch\[1\] Batch \[0-2\]\tSpeed: [0-9.]+ samples/sec\taccuracy=0\.750000", lines[0])
    # auto_reset: the local metric was reset after the first log
    assert lines[1].startswith("Epoch[1] Batch [2-4]") and lines[1].endswith("accuracy=nan")


def test_speedometer_without_auto_reset_and_without_metric(caplog):
    caplog.set_level(logging.INFO)
    speed = callback.Speedometer(8, frequent=1, auto_reset=False)
    m = _metric(1, 2)
    for nbatch in range(3):
        speed(_param(nbatch, m))
    assert caplog.records[-1].getMessage().startswith("Epoch[0] Batch [0-2]\tSpeed:")
    assert caplog.records[-1].getMessage().endswith("accuracy=0.500000")
    caplog.clear()
    speed = callback.Speedometer(8, frequent=1)
    speed(_param(0, None))
    speed(_param(1, None, epoch=2))
    assert re.fullmatch(r"Iter\[2\] Batch \[1\]\tSpeed: [0-9.]+ samples/sec", caplog.records[-1].getMessage())


def test_speedometer_restarts_each_epoch(caplog):
    caplog.set_level(logging.INFO)
    speed = callback.Speedometer(1, frequent=1)
    m = _metric(1, 1)
    speed(_param(0, m))
    speed(_param(1, m))
    speed(_param(0, m, epoch=1))     # a smaller count: a new epoch, the timer restarts without logging
    assert len(caplog.records) == 1


def test_log_train_metric(caplog):
    caplog.set_level(logging.INFO)
    m = _metric(1, 4)
    cb = callback.log_train_metric(period=2, auto_reset=True)
    cb(_param(1, m))
    assert not caplog.records
    cb(_param(2, m, epoch=3))
    assert caplog.records[0].getMessage() == "Iter[3] Batch[2] Train-accuracy=0.250000"
    assert np.isnan(m.get()[1]) and m.get_global()[1] == 0.25


def test_progress_bar(caplog):
    caplog.set_level(logging.INFO)
    bar = callback.ProgressBar(total=4, length=8)
    bar(_param(2, None))
    assert caplog.records[0].getMessage() == "[====----] 50%\r"


def test_log_validation_metrics(caplog):
    caplog.set_level(logging.INFO)
    callback.LogValidationMetricsCallback()(_param(0, _metric(2, 4), epoch=5))
    assert caplog.records[0].getMessage() == "Epoch[5] Validation-accuracy=0.500000"


def _small_net():
    x = sym.Variable("data")
    return sym.SoftmaxOutput(sym.FullyConnected(x, num_hidden=2, name="fc"), name="softmax")


def test_do_checkpoint_every_period(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    prefix = str(tmp_path / "net")
    net = _small_net()
    args = {"fc_weight": nd.ones((2, 3)), "fc_bias": nd.zeros((2,))}
    cb = callback.do_checkpoint(prefix, period=2)
    for epoch in range(4):
        cb(epoch, net, args, {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net-0002.params", "net-0004.params", "net-symbol.json"]
    assert f'Saved checkpoint to "{prefix}-0002.params"' in caplog.text
    s, arg_params, aux_params = load_checkpoint(prefix, 4)
    assert s.list_arguments() == net.list_arguments() and aux_params == {}
    np.testing.assert_array_equal(arg_params["fc_weight"].asnumpy(), np.ones((2, 3)))


def test_module_checkpoint_saves_optimizer_states(tmp_path):
    mod = mx.mod.Module(_small_net())
    mod.bind([("data", (4, 3))], [("softmax_label", (4,))])
    mod.init_params()
    mod.init_optimizer()
    prefix = str(tmp_path / "m")
    cb = callback.module_checkpoint(mod, prefix, period=1, save_optimizer_states=True)
    cb(0)
    assert {p.name for p in tmp_path.iterdir()} == {"m-symbol.json", "m-0001.params", "m-0001.states"}


@pytest.mark.parametrize("period", [0, -3])
def test_period_is_at_least_one(tmp_path, period):
    cb = callback.do_checkpoint(str(tmp_path / "p"), period=period)
    cb(0, _small_net(), {"fc_weight": nd.ones((2, 3)), "fc_bias": nd.zeros((2,))}, {})
    assert (tmp_path / "p-0001.params").exists()
