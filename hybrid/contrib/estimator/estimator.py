"""`Estimator`: a Gluon training loop driven by event handlers (MXNet 1.9.1's contrib estimator).

`fit` runs epochs (or a number of batches) over a DataLoader: each batch goes
through the batch processor, then every handler's `batch_end`; epochs end with
`epoch_end`. Default handlers stop training, apply the gradient update, update
and log the metrics and run validation; user handlers are merged in by
priority. Any `batch_end` / `epoch_end` returning True stops the loop.
"""
from __future__ import annotations

import copy
import logging
import sys
import warnings
from typing import Any

from hybridgraph.nd.backend import Context, cpu, gpu, num_gpus

from ...data import DataLoader
from ...loss import Loss as GluonLoss
from ...metric import Loss as MetricLoss
from ...trainer import Trainer
from .batch_processor import BatchProcessor
from .event_handler import (BatchBegin, BatchEnd, EpochBegin, EpochEnd, GradientUpdateHandler, LoggingHandler,
                            MetricHandler, StoppingHandler, TrainBegin, TrainEnd, ValidationHandler,
                            check_event_handlers)
from .utils import check_handler_metric_ref, check_metrics, suggest_metric_for_loss

__all__ = ["Estimator"]

_NOT_LOADER = ("Estimator only support input as Gluon DataLoader. Alternatively, you can transform your DataIter "
               "or any NDArray into Gluon DataLoader. Refer to gluon.data.DataLoader")


class Estimator:
    """Train and evaluate a Gluon `net` with `loss`, metrics, a Trainer and event handlers."""

    logger = None

    def __init__(self, net: Any, loss: Any, train_metrics: Any = None, val_metrics: Any = None,
                 initializer: Any = None, trainer: Any = None, context: Any = None, val_net: Any = None,
                 val_loss: Any = None, batch_processor: Any = None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = check_metrics(train_metrics)
        self._val_metrics = check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = self.max_batch = None
        self.batch_axis = 0

    @staticmethod
    def _check_loss(loss: Any) -> Any:
        if not isinstance(loss, GluonLoss):
            raise ValueError(f"loss must be a Loss, refer to gluon.loss.Loss:{loss}")
        return loss

    @staticmethod
    def _check_context(context: Any) -> list:
        gpus = [gpu(i) for i in range(num_gpus())]
        if not context:
            if len(gpus) > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default. To utilize all your GPUs, "
                              "specify context as a list of gpus, e.g. context=[mx.gpu(0), mx.gpu(1)] ",
                              stacklevel=3)
            return [gpus[0]] if gpus else [cpu()]
        if isinstance(context, Context):
            context = [context]
        elif not (isinstance(context, list) and all(isinstance(c, Context) for c in context)):
            raise ValueError("context must be a Context or a list of Context, for example mx.cpu() or "
                             f"[mx.gpu(0), mx.gpu(1)], refer to mxnet.Context:{context}")
        for ctx in context:
            if not (ctx in gpus or str(ctx).startswith("cpu")):
                raise AssertionError(f"{ctx} is not available, please make sure your context is in one of: "
                                     f"mx.cpu(), {', '.join(str(g) for g in gpus)}")
        return context

    @staticmethod
    def _check_batch_processor(batch_processor: Any) -> Any:
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, "fit_batch", None))
                and callable(getattr(batch_processor, "evaluate_batch", None))):
            raise ValueError("Customized Batch Processor must contain fit_batch() and evaluate_batch() methods")
        return batch_processor

    def _is_initialized(self) -> bool:
        params = self.net.collect_params()
        for name in params:
            try:
                params[name].list_ctx()
            except RuntimeError:
                return False
        return True

    def _initialize(self, initializer: Any) -> None:
        if not self._is_initialized():
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You don't need to pass "
                          "initializer if you already initialized your net. You can use "
                          "net.initialize(init=your_initializer, force_reinit=True)to force re-initialize.",
                          stacklevel=3)

    def _check_trainer(self, trainer: Any) -> Any:
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate 0.001 is used.",
                          stacklevel=3)
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError(f"Trainer must be a Gluon Trainer instance, refer to gluon.Trainer:{trainer}")
        return trainer

    def _add_default_training_metrics(self) -> None:
        if not self._train_metrics:
            suggested = suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            self._train_metrics.append(MetricLoss(self.loss.name.rstrip("1234567890")))
        for metric in self._train_metrics:
            metric.name = "training " + metric.name

    def _add_validation_metrics(self) -> None:
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation")
            else:
                metric.name = "validation " + metric.name

    @property
    def train_metrics(self) -> list:
        return self._train_metrics

    @property
    def val_metrics(self) -> list:
        return self._val_metrics

    def evaluate(self, val_data: Any, batch_axis: int = 0, event_handlers: Any = None) -> None:
        """Run `val_net` over `val_data`, updating the validation metrics through the handlers."""
        if not isinstance(val_data, DataLoader):
            raise ValueError(_NOT_LOADER)
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = self._categorize_handlers(handlers)
        for h in epoch_begin:
            h.epoch_begin(self)
        for batch in val_data:
            for h in batch_begin:
                h.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for h in batch_end:
                h.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for h in epoch_end:
            h.epoch_end(self)

    def fit(self, train_data: Any, val_data: Any = None, epochs: int | None = None, event_handlers: Any = None,
            batches: int | None = None, batch_axis: int = 0) -> None:
        """Train for `epochs` epochs or `batches` batches (exactly one of them)."""
        if not isinstance(train_data, DataLoader):
            raise ValueError(_NOT_LOADER)
        if (not epochs) == (not batches):
            raise ValueError("Fit only support exactly one type of iteration, train by number of epochs or number "
                             "of batches.Please specify one and only one of: epochs or batches.")
        self.max_epoch, self.max_batch, self.batch_axis = epochs, batches, batch_axis
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = self._categorize_handlers(handlers)
        for h in train_begin:
            h.train_begin(self)
        while True:
            for h in epoch_begin:
                h.epoch_begin(self)
            for batch in train_data:
                for h in batch_begin:
                    h.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                # every handler sees the batch, then any True stops
                if any([h.batch_end(self, batch=batch, pred=pred, label=label, loss=loss) for h in batch_end]):
                    break
            if any([h.epoch_end(self) for h in epoch_end]):
                break
        for h in train_end:
            h.train_end(self)

    def _merge_handlers(self, event_handlers: Any, defaults: list, known: set) -> list:
        handlers = check_event_handlers(event_handlers)
        mixing = bool(handlers) and bool(defaults)
        handlers.extend(defaults)
        if mixing:
            for h in handlers:
                check_handler_metric_ref(h, known)
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    def _prepare_default_handlers(self, val_data: Any, event_handlers: Any) -> list:
        given = check_event_handlers(event_handlers)

        def has(cls):
            return any(isinstance(h, cls) for h in given)
        defaults: list = [StoppingHandler(self.max_epoch, self.max_batch)]
        if not has(GradientUpdateHandler):
            defaults.append(GradientUpdateHandler())
        if not has(MetricHandler):
            defaults.append(MetricHandler(metrics=self.train_metrics))
        if not has(ValidationHandler) and val_data:
            defaults.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if not has(LoggingHandler):
            defaults.append(LoggingHandler(metrics=self.train_metrics))
        return self._merge_handlers(given, defaults, set(self.train_metrics + self.val_metrics))

    def _prepare_default_validation_handlers(self, event_handlers: Any) -> list:
        given = check_event_handlers(event_handlers)
        defaults: list = []
        if not any(isinstance(h, MetricHandler) for h in given):
            defaults.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in given):
            defaults.append(LoggingHandler(metrics=self.val_metrics))
        return self._merge_handlers(given, defaults, set(self.val_metrics))

    @staticmethod
    def _categorize_handlers(event_handlers: list) -> tuple:
        kinds = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([h for h in event_handlers if isinstance(h, k)] for k in kinds)
