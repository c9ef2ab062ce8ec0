"""`mx.callback`: callbacks for `Module.fit` (MXNet 1.9.1's `mxnet.callback`).

Batch-end callbacks receive a `BatchEndParam` (epoch, nbatch, eval_metric,
locals); epoch-end callbacks receive `(epoch, symbol, arg_params, aux_params)`.
Messages go to the root `logging` logger with MXNet's exact formats.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

from .model import save_checkpoint

__all__ = ["module_checkpoint", "do_checkpoint", "log_train_metric", "Speedometer", "ProgressBar",
           "LogValidationMetricsCallback"]


def module_checkpoint(mod: Any, prefix: str, period: int = 1,
                      save_optimizer_states: bool = False) -> Callable:
    """An epoch-end callback that checkpoints a Module (optionally with optimizer states).

    Parameters
    ----------
    mod : Module
        The module to checkpoint.
    prefix : str
        Prefix of the checkpoint files.
    period : int
        Checkpoint every `period` epochs.
    save_optimizer_states : bool
        Also write `prefix-%04d.states`.

    Returns
    -------
    callback : function
        For `fit(..., epoch_end_callback=...)`.
    """
    period = int(max(1, period))

    def _callback(iter_no: int, sym: Any = None, arg: Any = None, aux: Any = None) -> None:
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def do_checkpoint(prefix: str, period: int = 1) -> Callable:
    """An epoch-end callback saving `prefix-symbol.json` and `prefix-%04d.params`.

    After epoch `i` (0-based) the params file is numbered `i + 1`, every
    `period` epochs.

    Parameters
    ----------
    prefix : str
        Prefix of the checkpoint files.
    period : int, optional
        Interval (in epochs) between checkpoints.

    Returns
    -------
    callback : function
        For `fit(..., epoch_end_callback=...)`.

    Examples
    --------
    >>> module.fit(iterator, num_epoch=n_epoch,
    ...            epoch_end_callback=mx.callback.do_checkpoint("mymodel", 1))
    """
    period = int(max(1, period))

    def _callback(iter_no: int, sym: Any, arg: dict, aux: dict) -> None:
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def log_train_metric(period: int, auto_reset: bool = False) -> Callable:
    """A batch-end callback logging the training metric every `period` batches.

    Parameters
    ----------
    period : int
        Log every `period` batches.
    auto_reset : bool
        Reset the metric's local state after each log.

    Returns
    -------
    callback : function
        For `fit(..., batch_end_callback=...)`.
    """
    def _callback(param: Any) -> None:
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name, value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """Log training speed and the metric every `frequent` batches.

    Parameters
    ----------
    batch_size : int
        Batch size of the data.
    frequent : int
        Log every `frequent` batches (default 50).
    auto_reset : bool
        Reset the metric's local state after each log, so each line shows the
        metric of the last `frequent` batches.

    Examples
    --------
    >>> module.fit(iterator, num_epoch=n_epoch, batch_end_callback=mx.callback.Speedometer(1, 10))
    Epoch[0] Batch [0-10]   Speed: 1910.41 samples/sec  accuracy=0.200000
    """

    def __init__(self, batch_size: int, frequent: int = 50, auto_reset: bool = True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0.0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param: Any) -> None:
        count = param.nbatch
        if self.last_count > count:
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        try:
            speed = self.frequent * self.batch_size / (time.time() - self.tic)
        except ZeroDivisionError:
            speed = float("inf")
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            if self.auto_reset:
                param.eval_metric.reset_local()
                msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(name_value)
                logging.info(msg, param.epoch, count - self.frequent, count, speed, *sum(name_value, ()))
            else:
                msg = "Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(name_value)
                logging.info(msg, param.epoch, count, speed, *sum(name_value, ()))
        else:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count, speed)
        self.tic = time.time()


class ProgressBar:
    """Log a progress bar of the batches done in the epoch.

    Parameters
    ----------
    total : int
        Batches per epoch.
    length : int
        Width of the bar in characters.

    Examples
    --------
    >>> mod.fit(data, num_epoch=5, batch_end_callback=mx.callback.ProgressBar(total=2))
    [========--------] 50.0%
    """

    def __init__(self, total: int, length: int = 80):
        self.bar_len = length
        self.total = total

    def __call__(self, param: Any) -> None:
        count = param.nbatch
        filled_len = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        prog_bar = "=" * filled_len + "-" * (self.bar_len - filled_len)
        logging.info("[%s] %s%s\r", prog_bar, percents, "%")


class LogValidationMetricsCallback:
    """Log the metric values at the end of an epoch (an `eval_end_callback`)."""

    def __call__(self, param: Any) -> None:
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
