"""`mx.mod.PythonModule` / `PythonLossModule`: modules computed in Python, e.g. a loss whose
gradient is a Python function, to chain after a symbolic Module in a SequentialModule."""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from hybridgraph import nd

from .base_module import DEFAULT_INITIALIZER, BaseModule


class PythonModule(BaseModule):
    """A parameter-free module; subclasses compute outputs in `forward` and gradients in `backward`
    and say their output shapes in `_compute_output_shapes`."""

    def __init__(self, data_names: Any, label_names: Any, output_names: Any, logger: Any = logging):
        super().__init__(logger=logger)
        self._data_names = list(data_names) if isinstance(data_names, tuple) else data_names
        self._label_names = list(label_names) if isinstance(label_names, tuple) else label_names
        self._output_names = output_names
        self._data_shapes = self._label_shapes = self._output_shapes = None

    @property
    def data_names(self) -> list:
        return self._data_names

    @property
    def output_names(self) -> list:
        return self._output_names

    @property
    def data_shapes(self) -> Any:
        return self._data_shapes

    @property
    def label_shapes(self) -> Any:
        return self._label_shapes

    @property
    def output_shapes(self) -> Any:
        return self._output_shapes

    def get_params(self) -> tuple[dict, dict]:
        return {}, {}

    def init_params(self, initializer: Any = DEFAULT_INITIALIZER, arg_params: Any = None, aux_params: Any = None,
                    allow_missing: bool = False, force_init: bool = False, allow_extra: bool = False) -> None:
        """Nothing to initialise."""

    def update(self) -> None:
        """Nothing to update."""

    def update_metric(self, eval_metric: Any, labels: list, pre_sliced: bool = False) -> None:
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise RuntimeError("PythonModule does not support presliced labels")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes: list, label_shapes: list | None = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: str = "write") -> None:
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise AssertionError("Python module only support write gradient")
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        if [x[0] for x in data_shapes] != list(self._data_names):
            raise AssertionError(f"data_shapes {data_shapes} do not match data_names {self._data_names}")
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
        if label_shapes is not None and [x[0] for x in label_shapes] != list(self._label_names or []):
            raise AssertionError(f"label_shapes {label_shapes} do not match label_names {self._label_names}")
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self) -> list:
        raise NotImplementedError()

    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        """No parameters, so no optimizer."""


class PythonLossModule(PythonModule):
    """Passes its input (the scores) through; backward gives `grad_func(scores, labels)`."""

    def __init__(self, name: str = "pyloss", data_names: Any = ("data",), label_names: Any = ("softmax_label",),
                 logger: Any = logging, grad_func: Callable | None = None):
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        self._name = name
        if len(data_names) != 1 or len(label_names) != 1:
            raise AssertionError("PythonLossModule takes one data and one label")
        if grad_func is not None and not callable(grad_func):
            raise AssertionError("grad_func must be callable")
        self._scores = self._labels = self._scores_grad = None
        self._grad_func = grad_func

    def _compute_output_shapes(self) -> list:
        return [(self._name + "_output", self._data_shapes[0][1])]

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        self._scores = data_batch.data[0]
        if self.for_training if is_train is None else is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        assert merge_multi_context is True
        return [self._scores]

    def backward(self, out_grads: Any = None) -> None:
        if out_grads is not None:
            raise AssertionError("For a loss module, out_grads should be None")
        assert self.for_training
        if self._grad_func is None:
            raise NotImplementedError("PythonLossModule without grad_func: subclass it and implement backward")
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, nd.NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        assert merge_multi_context is True
        return [self._scores_grad]

    def install_monitor(self, mon: Any) -> None:
        raise NotImplementedError("PythonLossModule has no executor to monitor")
