"""Event handlers of the Gluon Estimator (MXNet 1.9.1): stopping, metrics, validation, logging,
checkpoints, early stopping and the gradient update.

A handler subclasses the event mix-ins it reacts to (TrainBegin, EpochBegin,
BatchBegin, BatchEnd, EpochEnd, TrainEnd); handlers run in `priority` order
(lower first; default 0). `batch_end` / `epoch_end` returning True stops training.
"""
from __future__ import annotations

import os
import time
import warnings
from typing import Any

import numpy as np

from ...metric import CompositeEvalMetric, EvalMetric
from ...metric import Loss as MetricLoss
from .utils import check_metrics

__all__ = ["TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd", "StoppingHandler",
           "MetricHandler", "ValidationHandler", "LoggingHandler", "CheckpointHandler", "EarlyStoppingHandler",
           "GradientUpdateHandler"]


class EventHandler:
    """Base of every handler."""


def check_event_handlers(handlers: Any) -> list:
    """A list of handlers from one handler, a list or None."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    if not all(isinstance(h, EventHandler) for h in handlers):
        raise ValueError(f"handlers must be an EventHandler or a list of EventHandler, got: {handlers}")
    return handlers


class TrainBegin(EventHandler):
    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class TrainEnd(EventHandler):
    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class EpochBegin(EventHandler):
    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class EpochEnd(EventHandler):
    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        return False


class BatchBegin(EventHandler):
    def batch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class BatchEnd(EventHandler):
    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        return False


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stop after the estimator's max_epoch epochs or max_batch batches."""

    def __init__(self, max_epoch: int | None = None, max_batch: int | None = None):
        self.max_epoch, self.max_batch = max_epoch, max_batch
        self.current_batch = self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch, self.max_batch = estimator.max_epoch, estimator.max_batch
        self.current_batch = self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Reset metrics each epoch; update them after each batch (Loss metrics from the loss)."""

    def __init__(self, metrics: Any, priority: float = -1000):
        self.metrics = check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            if isinstance(metric, MetricLoss):
                metric.update(0, kwargs["loss"])
            else:
                metric.update(kwargs["label"], kwargs["pred"])


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Call `eval_fn(val_data=..., batch_axis=..., event_handlers=...)` every `epoch_period`
    epochs and/or every `batch_period` batches."""

    def __init__(self, val_data: Any, eval_fn: Any, epoch_period: int | None = 1, batch_period: int | None = None,
                 priority: float = -1000, event_handlers: Any = None):
        self.val_data, self.eval_fn = val_data, eval_fn
        self.epoch_period, self.batch_period = epoch_period, batch_period
        self.current_batch = self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def _run(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis, event_handlers=self.event_handlers)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._run(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._run(estimator)


def _metric_text(metrics: list) -> str:
    return "".join("%s: %.4f, " % m.get() for m in metrics)  # noqa: UP031 - MXNet's log format


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Log to estimator.logger: training start/end, each epoch, and every `log_interval` batches
    when it is an int ('epoch' logs per epoch only)."""

    def __init__(self, log_interval: int | str = "epoch", metrics: Any = None, priority: float = np.inf):
        super().__init__()
        if not isinstance(log_interval, int) and log_interval != "epoch":
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = check_metrics(metrics)
        self.batch_index = self.current_epoch = self.processed_samples = 0
        self.priority = priority
        self.log_interval = log_interval
        self.log_interval_time = 0.0

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate %.4f ",
                              trainer.optimizer.__class__.__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = self.batch_index = self.processed_samples = 0
        self.log_interval_time = 0.0

    def train_end(self, estimator, *args, **kwargs):
        msg = "Train finished using total %ds with %d epochs. " % (time.time() - self.train_start,  # noqa: UP031
                                                                   self.current_epoch)
        estimator.logger.info((msg + _metric_text(self.metrics)).rstrip(", "))

    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.processed_samples += kwargs["batch"][0].shape[0]
            self.log_interval_time += time.time() - self.batch_start
            msg = f"[Epoch {self.current_epoch}][Batch {self.batch_index}][Samples {self.processed_samples}] "
            if self.batch_index % self.log_interval == 0:
                msg += "time/interval: %.3fs " % self.log_interval_time  # noqa: UP031
                self.log_interval_time = 0.0
                estimator.logger.info((msg + _metric_text(self.metrics)).rstrip(", "))
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        if any("training" in m.name for m in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f", self.current_epoch,
                                  estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        msg = "[Epoch %d] Finished in %.3fs, " % (self.current_epoch, time.time() - self.epoch_start)  # noqa: UP031
        estimator.logger.info((msg + _metric_text(self.metrics)).rstrip(", "))
        self.current_epoch += 1
        self.batch_index = 0


def _monitor_op(mode: str, monitor: Any, who: str):
    """np.less for 'min', np.greater for 'max'. 'auto' gives np.greater whatever the metric:
    MXNet 1.9.1's test `'acc' or 'f1' in name` is always true, and this keeps its behaviour."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{who} mode {mode} is unknown, fallback to auto mode.", RuntimeWarning, stacklevel=3)
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "auto":
        warnings.warn(f"`greater` operator will be used to determine if {monitor.get()[0]} has improved. Please "
                      "specify `mode='min'` to use the `less` operator. Specify `mode='max' to disable this "
                      "warning.`", stacklevel=3)
    return np.greater


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Save parameters and trainer states every `epoch_period` epochs / `batch_period` batches as
    `<prefix>-epoch<E>batch<B>.params/.states` (keeping `max_checkpoints`), the best model as
    `<prefix>-best` when `save_best`, the symbol of a hybridized net, and resume from them."""

    def __init__(self, model_dir: str, model_prefix: str = "model", monitor: Any = None, verbose: int = 0,
                 save_best: bool = False, mode: str = "auto", epoch_period: int | None = 1,
                 batch_period: int | None = None, max_checkpoints: int = 5, resume_from_checkpoint: bool = False):
        self.monitor, self.verbose = monitor, verbose
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir, self.model_prefix = model_dir, model_prefix
        self.save_best = save_best
        if save_best and not isinstance(monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric objects from "
                             "estimator.train_metrics and estimator.val_metrics as monitor.")
        self.epoch_period, self.batch_period = epoch_period, batch_period
        self.current_batch = self.current_epoch = 0
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints: list[str] = []
        self.trained_epoch = self.trained_batch = -1
        if save_best:
            self.monitor_op = _monitor_op(mode, monitor, "ModelCheckpoint")
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = self.current_batch = 0
        if self.save_best:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        if self.resume_from_checkpoint:
            msg = ("To use resume from checkpoint, you must only specify the same type of period you used for "
                   "training.For example, if you are training based on number of epochs,you must save only based "
                   "on epochs, and set batch_period to None.")
            if estimator.max_batch and not (self.batch_period and not self.epoch_period):
                raise AssertionError(msg)
            if estimator.max_epoch and not (self.epoch_period and not self.batch_period):
                raise AssertionError(msg)
            self._resume(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _save_checkpoint(self, estimator):
        if self.resume_from_checkpoint:
            epoch = self.current_epoch + self.trained_epoch + 1
            batch = self.current_batch + self.trained_batch + (0 if estimator.max_epoch else 1)
        else:
            epoch, batch = self.current_epoch, self.current_batch
        prefix = f"{self.model_prefix}-epoch{epoch}batch{batch}"
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, saving model at %s "
                                  "with prefix: %s", self.current_epoch, self.current_batch + 1, self.model_dir,
                                  prefix)
        if not self.save_best:
            return
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(f"Skipping save best because {name} is not updated, make sure you pass one "
                                         "of the metric objects estimator.train_metrics and estimator.val_metrics "
                                         "as monitor"), stacklevel=2)
        elif self.monitor_op(value, self.best):
            self._save_params_and_trainer(estimator, self.model_prefix + "-best")
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f to %0.5f, updating best "
                                      "model at %s with prefix: %s", self.current_epoch, name, self.best, value,
                                      self.model_dir, self.model_prefix + "-best")
            self.best = value
        elif self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from %0.5f, skipping updating "
                                  "best model", self.current_batch, name, self.best)

    def _save_symbol(self, estimator):
        fname = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        sym = _cached_symbol(estimator.net)
        if sym is not None:
            sym.save(fname)
        else:
            estimator.logger.info("Model architecture(symbol file) is not saved, please use HybridBlock to construct "
                                  "your model, and call net.hybridize() before passing to Estimator in order to "
                                  "save model architecture as %s.", fname)

    def _save_params_and_trainer(self, estimator, prefix):
        estimator.net.save_parameters(os.path.join(self.model_dir, prefix + ".params"))
        estimator.trainer.save_states(os.path.join(self.model_dir, prefix + ".states"))
        if "best" not in prefix:
            self.saved_checkpoints.append(prefix)
        if len(self.saved_checkpoints) > self.max_checkpoints:
            old = self.saved_checkpoints.pop(0)
            for fname in os.listdir(self.model_dir):
                if fname.startswith(old):
                    os.remove(os.path.join(self.model_dir, fname))

    def _resume(self, estimator):
        prefix = self.model_prefix + "-epoch"
        self.trained_epoch = self._find_max_iteration(self.model_dir, prefix, "epoch", "batch",
                                                      self.saved_checkpoints)
        prefix += str(self.trained_epoch)
        self.trained_batch = self._find_max_iteration(self.model_dir, prefix, "batch", ".params")
        if self.trained_epoch == -1:
            what = f"{estimator.max_batch} batches" if estimator.max_batch else f"{estimator.max_epoch} epochs"
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from scratch for " + what)
            return
        msg = (f"CheckpointHandler: Checkpoint resumed from epoch {self.trained_epoch} batch {self.trained_batch}, "
               "continue to train for ")
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError(f"Found checkpoint with maximum number of epoch {estimator.max_epoch} reached, "
                                 "please specify resume_from_checkpoint=False (default value) if you wan to train "
                                 "from scratch.")
            estimator.max_epoch = estimator.max_epoch - self.trained_epoch - 1
            msg += f"{estimator.max_epoch} epochs "
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError(f"Found checkpoint with maximum number of batch {self.trained_batch} reached, "
                                 "please specifyresume_from_checkpoint=False (default value) if you wan to train "
                                 "from scratch.")
            estimator.max_batch = estimator.max_batch - self.trained_batch - 1
            msg += f"{estimator.max_batch} batches "
        base = os.path.join(self.model_dir, f"{self.model_prefix}-epoch{self.trained_epoch}batch{self.trained_batch}")
        for ext in (".params", ".states"):
            if not os.path.exists(base + ext):
                raise AssertionError(f"Failed to load checkpoint, {base + ext} does not exist")
        estimator.net.load_parameters(base + ".params", ctx=estimator.context)
        estimator.trainer.load_states(base + ".states")
        estimator.logger.warning(msg)

    @staticmethod
    def _find_max_iteration(folder, prefix, start, end, saved_checkpoints=None):
        max_iter = -1
        for fname in os.listdir(folder):
            if fname.startswith(prefix) and ".params" in fname:
                if saved_checkpoints:
                    saved_checkpoints.append(fname[:fname.find(".params")])
                try:
                    max_iter = max(max_iter, int(fname[fname.find(start) + len(start):fname.find(end)]))
                except ValueError:
                    raise ValueError("Error parsing checkpoint file, please check your checkpoints have the format: "
                                     "{model_name}-epoch{epoch_number}batch{batch_number}.params, there should "
                                     "also be a .states file for each .params file ") from None
        return max_iter


def _cached_symbol(net: Any) -> Any:
    """The Symbol a hybridized block last traced, or None (not hybridized or not run yet)."""
    trace = getattr(net, "_last_trace", None)
    return None if trace is None else trace.symbol


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stop when `monitor` has not improved by `min_delta` for `patience` epochs."""

    def __init__(self, monitor: Any, min_delta: float = 0, patience: int = 0, mode: str = "auto",
                 baseline: float | None = None):
        super().__init__()
        if not isinstance(monitor, EvalMetric):
            raise ValueError("Please provide one of the metric objects from estimator.train_metrics and "
                             "estimator.val_metrics as monitor.")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError("CompositeEvalMetric is not supported for EarlyStoppingHandler, please specify a "
                             "simple metric instead.")
        self.monitor, self.baseline, self.patience = monitor, baseline, patience
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False
        self.monitor_op = _monitor_op(mode, monitor, "EarlyStopping")
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def epoch_end(self, estimator, *args, **kwargs):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(f"{name} is not updated, make sure you pass one of the metric objects "
                                         "fromestimator.train_metrics and estimator.val_metrics as monitor."),
                          stacklevel=2)
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stopped_epoch > 0:
            estimator.logger.info("[Epoch %d] EarlyStoppingHanlder: early stopping due to %s not improving",
                                  self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Apply the trainer step, normalised by the batch size (the losses' first dimension)."""

    def __init__(self, priority: float = -2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        loss = loss if isinstance(loss, list) else [loss]
        estimator.trainer.step(sum(part.shape[0] for part in loss))
