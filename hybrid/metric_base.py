"""The metric base class `EvalMetric`, the metric registry (`register`,
`alias`, `create`), and the metrics that hold other metrics or values rather
than compare labels: CompositeEvalMetric, Loss (Torch, Caffe) and
CustomMetric (`np`).

hybrid/metric.py gathers these and the metrics of metric_classification.py
and metric_regression.py into the `mx.metric` namespace.
"""
from __future__ import annotations

import json
import numbers
import warnings
from collections import OrderedDict
from typing import Any
from collections.abc import Callable

import numpy

from hybridgraph.nd.ndarray import NDArray


_ARRAY_TYPES = (NDArray, numpy.ndarray)


def _host(x: Any) -> numpy.ndarray:
    """A numpy view of an NDArray (or array-like)."""
    return x.asnumpy() if hasattr(x, "asnumpy") else numpy.asarray(x)


def check_label_shapes(labels: Any, preds: Any, wrap: bool = False, shape: bool = False) -> tuple:
    """Check that labels and predictions have the same length (or shape, with `shape`).

    Parameters
    ----------
    labels : list of NDArray
        The labels of the data.
    preds : list of NDArray
        Predicted values.
    wrap : bool
        If True, wrap single arrays into lists.
    shape : bool
        If True, compare shapes; otherwise only lengths.
    """
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError(f"Shape of labels {label_shape} does not match shape of predictions {pred_shape}")
    if wrap:
        if isinstance(labels, _ARRAY_TYPES):
            labels = [labels]
        if isinstance(preds, _ARRAY_TYPES):
            preds = [preds]
    return labels, preds


# -- registry -----------------------------------------------------------------------------

_REGISTRY: dict[str, type] = {}


def register(klass: type, name: str | None = None) -> type:
    """Register a metric class under its lower-cased name (or `name`)."""
    if not issubclass(klass, EvalMetric):
        raise TypeError(f"Can only register subclass of EvalMetric, got {klass!r}")
    name = (klass.__name__ if name is None else name).lower()
    if name in _REGISTRY:
        old = _REGISTRY[name]
        warnings.warn(f"New metric {klass.__module__}.{klass.__name__} registered with name {name} is overriding "
                      f"existing metric {old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases: str) -> Callable[[type], type]:
    """Register a metric class under extra names (`@alias('acc')`)."""
    def reg(klass: type) -> type:
        for name in aliases:
            register(klass, name)
        return klass
    return reg


def _create(*args: Any, **kwargs: Any) -> "EvalMetric":
    if args:
        name, args = args[0], args[1:]
    else:
        name = kwargs.pop("metric")
    if isinstance(name, EvalMetric):
        if args or kwargs:
            raise ValueError("metric is already an instance. Additional arguments are invalid")
        return name
    if isinstance(name, dict):
        return _create(**name)
    if not isinstance(name, str):
        raise TypeError(f"metric must be of string type, got {type(name).__name__}")
    if name.startswith("["):
        name, kwargs = json.loads(name)
        return _create(name, **kwargs)
    if name.startswith("{"):
        return _create(**json.loads(name))
    name = name.lower()
    if name not in _REGISTRY:
        raise ValueError(f"{name} is not registered. Please register with metric.register first")
    return _REGISTRY[name](*args, **kwargs)


def create(metric: Any, *args: Any, **kwargs: Any) -> "EvalMetric":
    """Create a metric from a name (``'acc'``, ``'ce'``, ``'top_k_accuracy'``, ...), an
    `EvalMetric`, a list of those (a `CompositeEvalMetric`), or a function
    ``feval(label, pred)`` on numpy arrays (a `CustomMetric`).

    Examples
    --------
    >>> metric = mx.metric.create(['acc', 'rmse'])
    """
    if callable(metric) and not isinstance(metric, EvalMetric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create(metric, *args, **kwargs)


# -- base ----------------------------------------------------------------------------------

class EvalMetric:
    """Base class for all evaluation metrics.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    output_names : list of str, or None
        Names of predictions used by `update_dict`; all when None.
    label_names : list of str, or None
        Names of labels used by `update_dict`; all when None.
    """

    def __init__(self, name: str, output_names: list | None = None, label_names: list | None = None,
                 **kwargs: Any):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict:
        """The configuration, from which `metric.create(**config)` rebuilds the metric."""
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name, "output_names": self.output_names,
                       "label_names": self.label_names})
        return config

    def update_dict(self, label: dict, pred: dict) -> None:
        """Update with name -> array mappings, selected by `label_names` / `output_names`."""
        pred = [pred[name] for name in self.output_names] if self.output_names is not None else list(pred.values())
        label = [label[name] for name in self.label_names] if self.label_names is not None \
            else list(label.values())
        self.update(label, pred)

    def update(self, labels: Any, preds: Any) -> None:
        """Update the internal evaluation result with a batch."""
        raise NotImplementedError()

    def reset(self) -> None:
        """Reset the local and global results."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self) -> None:
        """Reset the local results only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self) -> tuple:
        """The current result: ``(name, value)``; the value is nan before any update."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, _scalar(self.sum_metric / self.num_inst))

    def get_global(self) -> tuple:
        """The result over all updates since the last `reset`."""
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float("nan"))
            return (self.name, _scalar(self.global_sum_metric / self.global_num_inst))
        return self.get()

    def get_name_value(self) -> list:
        """The result as a list of ``(name, value)`` pairs."""
        return _zip_name_value(*self.get())

    def get_global_name_value(self) -> list:
        """The global result as a list of ``(name, value)`` pairs."""
        if self._has_global_stats:
            return _zip_name_value(*self.get_global())
        return self.get_name_value()

    def _add(self, value: Any, count: Any) -> None:
        """Add to the local and global accumulators."""
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count


def _scalar(x: Any) -> Any:
    """A numpy scalar as the Python number it holds (prints as `0.5`, not `np.float64(0.5)`)."""
    return x.item() if isinstance(x, numpy.generic) else x


def _zip_name_value(name: Any, value: Any) -> list:
    if not isinstance(name, list):
        name = [name]
    if not isinstance(value, list):
        value = [value]
    return list(zip(name, value))


@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Manages several evaluation metrics.

    Parameters
    ----------
    metrics : list of EvalMetric
        The child metrics.
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, metrics: list | None = None, name: str = "composite", output_names: list | None = None,
                 label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.metrics = [create(i) for i in (metrics or [])]

    def add(self, metric: Any) -> None:
        """Add a child metric."""
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> EvalMetric:
        """The child metric at `index`."""
        try:
            return self.metrics[index]
        except IndexError:
            return ValueError(f"Metric index {index} is out of range 0 and {len(self.metrics)}")

    def update_dict(self, labels: dict, preds: dict) -> None:
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self) -> None:
        for metric in getattr(self, "metrics", ()):
            metric.reset()

    def reset_local(self) -> None:
        for metric in getattr(self, "metrics", ()):
            metric.reset_local()

    def _collect(self, getter: str) -> tuple:
        names, values = [], []
        for metric in self.metrics:
            name, value = getattr(metric, getter)()
            names.extend([name] if isinstance(name, str) else name)
            values.extend([value] if isinstance(value, numbers.Number) else value)
        return (names, values)

    def get(self) -> tuple:
        return self._collect("get")

    def get_global(self) -> tuple:
        return self._collect("get_global")

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"metrics": [i.get_config() for i in self.metrics]})
        return config


# -- losses and custom metrics ------------------------------------------------------------------------

class Loss(EvalMetric):
    """Dummy metric that averages the given loss values (the labels are ignored).

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, name: str = "loss", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def update(self, _: Any, preds: Any) -> None:
        if isinstance(preds, _ARRAY_TYPES):
            preds = [preds]
        for pred in preds:
            pred = _host(pred)
            self._add(pred.sum(dtype=pred.dtype if pred.dtype.kind == "f" else None).item(), pred.size)


class Torch(Loss):
    """Dummy metric for torch criterions."""

    def __init__(self, name: str = "torch", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names)


class Caffe(Loss):
    """Dummy metric for caffe criterions."""

    def __init__(self, name: str = "caffe", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names)


class CustomMetric(EvalMetric):
    """A metric computed by `feval(label, pred)` on numpy arrays, returning either a
    value (one instance) or a ``(sum_metric, num_inst)`` tuple.

    Parameters
    ----------
    feval : callable(label, pred)
        The evaluation function.
    name : str, optional
        The metric's name (default: the function's name, ``custom(<lambda>)`` for lambdas).
    allow_extra_outputs : bool, optional
        Allow more predictions than labels (e.g. RNN states).
    """

    def __init__(self, feval: Callable, name: str | None = None, allow_extra_outputs: bool = False,
                 output_names: list | None = None, label_names: list | None = None):
        if name is None:
            name = feval.__name__
            if name.find("<") != -1:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels: Any, preds: Any) -> None:
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            reval = self._feval(_host(label), _host(pred))
            if isinstance(reval, tuple):
                self._add(*reval)
            else:
                self._add(reval, 1)

    def get_config(self) -> dict:
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval: Callable, name: str | None = None, allow_extra_outputs: bool = False) -> CustomMetric:
    """A `CustomMetric` from a function of numpy arrays ``(label, pred) -> float``."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
