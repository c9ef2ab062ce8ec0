"""mx.metric against MXNet 1.9.1 (tests/data/metric_ref.npz)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon import metric

REF = np.load(Path(__file__).resolve().parent.parent / "data" / "metric_ref.npz")
CASES = json.loads(str(REF["cases"]))
VALUES = json.loads(str(REF["values"]))


def _close(got, want):
    (gname, gval), (wname, wval) = got, want
    assert gname == wname
    if math.isnan(wval):
        assert math.isnan(gval)
    else:
        assert gval == pytest.approx(wval, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize(("case", "name", "kwargs", "kind"), CASES, ids=[c[0] for c in CASES])
def test_matches_mxnet(case, name, kwargs, kind):
    m = metric.create(name, **kwargs)
    for i in range(2):
        m.update([nd.array(REF[f"{case}/label{i}"])], [nd.array(REF[f"{case}/pred{i}"])])
        want_local, want_global = VALUES[case][i]
        _close(m.get(), want_local)
        _close(m.get_global(), want_global)
    m.reset_local()
    want_local, want_global = VALUES[case][2]
    _close(m.get(), want_local)
    _close(m.get_global(), want_global)


def test_numpy_inputs_and_single_arrays():
    m = metric.Accuracy()
    m.update(np.array([0, 1, 1]), np.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]]))
    assert m.get() == ("accuracy", pytest.approx(2 / 3))


def test_docstring_examples():
    preds = [nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])]
    labels = [nd.array([0, 1, 1])]
    ce = metric.CrossEntropy()
    ce.update(labels, preds)
    assert ce.get() == ("cross-entropy", pytest.approx(0.57159948348999023))
    comp = metric.create(["acc", "f1"])
    comp.update(labels, preds)
    assert comp.get() == (["accuracy", "f1"], [pytest.approx(2 / 3), pytest.approx(0.8)])
    assert comp.get_name_value() == [("accuracy", pytest.approx(2 / 3)), ("f1", pytest.approx(0.8))]
    mae = metric.MAE()
    mae.update([nd.array([2.5, 0.0, 2, 8]).reshape((4, 1))], [nd.array([3, -0.5, 2, 7]).reshape((4, 1))])
    assert mae.get() == ("mae", 0.5)


def test_create_forms():
    assert isinstance(metric.create("acc"), metric.Accuracy)
    assert isinstance(metric.create("ACC"), metric.Accuracy)
    assert isinstance(metric.create("top_k_acc", top_k=2), metric.TopKAccuracy)
    assert metric.create("top_k_accuracy", top_k=5).name == "top_k_accuracy_5"
    assert isinstance(metric.create("nll_loss"), metric.NegativeLogLikelihood)
    assert isinstance(metric.create("composite"), metric.CompositeEvalMetric)
    acc = metric.Accuracy()
    assert metric.create(acc) is acc
    cfg = metric.create("ce", eps=1e-5).get_config()
    again = metric.create(**cfg)
    assert isinstance(again, metric.CrossEntropy) and again.eps == 1e-5
    assert isinstance(metric.create('["mse", {"name": "m"}]'), metric.MSE)

    def my_metric(label, pred):
        return np.mean(np.abs(label - pred))
    custom = metric.create(my_metric)
    assert isinstance(custom, metric.CustomMetric) and custom.name == "my_metric"
    assert metric.CustomMetric(lambda x, y: 1.0).name == "custom(<lambda>)"
    with pytest.raises(ValueError, match="is not registered"):
        metric.create("nope")
    with pytest.raises(AssertionError, match="Please use Accuracy"):
        metric.TopKAccuracy(top_k=1)


def test_custom_metric_tuple_and_np():
    m = metric.CustomMetric(lambda label, pred: (float(np.sum(label == pred)), label.size), name="eq")
    m.update([nd.array([1, 2, 3])], [nd.array([1, 0, 3])])
    assert m.get() == ("eq", pytest.approx(2 / 3))
    m2 = metric.np(lambda label, pred: float(np.abs(label - pred).max()))
    m2.update([nd.array([1, 2])], [nd.array([1, 5])])
    assert m2.get()[1] == 3.0
    with pytest.raises(NotImplementedError):
        m2.get_config()


def test_update_dict_and_names():
    m = metric.Accuracy(output_names=["out"], label_names=["lab"])
    m.update_dict({"lab": nd.array([1, 0]), "other": nd.array([0, 0])},
                  {"out": nd.array([[0, 1], [1, 0]]), "x": nd.array([[1, 0], [1, 0]])})
    assert m.get()[1] == 1.0
    assert str(m) == "EvalMetric: {'accuracy': 1.0}"


def test_shape_checks_and_empty():
    with pytest.raises(ValueError, match="does not match shape of predictions"):
        metric.Accuracy().update([nd.array([1])], [nd.array([[0, 1]]), nd.array([[0, 1]])])
    name, value = metric.MSE().get()
    assert name == "mse" and math.isnan(value)
    with pytest.raises(ValueError, match="only supports binary"):
        metric.F1().update([nd.array([0, 1, 2])], [nd.array(np.eye(3)[:, :2])])


def test_loss_metric():
    m = metric.Loss()
    m.update(None, nd.array([1.0, 2.0, 3.0]))
    m.update(None, [nd.array([[4.0]])])
    assert m.get() == ("loss", 2.5)
