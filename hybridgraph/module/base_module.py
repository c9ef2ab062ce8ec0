"""BaseModule: the training loop (`fit`), evaluation (`score`) and prediction shared
by every module type (MXNet 1.9.1's `mxnet.module.BaseModule`)."""
from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.gluon import metric
from hybridgraph.gluon.initializer import Uniform
from hybridgraph.nd.backend import cpu
from hybridgraph.nd.ndarray import NDArray

from ..base import _as_list
from ..io import DataBatch, DataDesc, DataIter
from ..model import BatchEndParam

#: MXNet's default initializer of `fit` / `init_params` (one shared instance, as in MXNet)
DEFAULT_INITIALIZER = Uniform(0.01)


def _check_input_names(symbol: Any, names: list, typename: str, throw: bool) -> None:
    """Check that every name is an argument of `symbol` (raise or warn, naming candidates)."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [arg for arg in args if not arg.endswith(("_weight", "_bias", "_gamma", "_beta"))]
        msg = (f"\033[91mYou created Module with Module(..., {typename}_names={names}) but input with "
               f"name '{name}' is not found in symbol.list_arguments(). Did you mean one of:\n\t"
               + "\n\t".join(candidates) + "\033[0m")
        if throw:
            raise ValueError(msg)
        warnings.warn(msg, stacklevel=3)


def _check_names_match(data_names: list, data_shapes: list, name: str, throw: bool) -> None:
    actual = [x[0] for x in data_shapes]
    if sorted(data_names) != sorted(actual):
        msg = (f"Data provided by {name}_shapes don't match names specified by {name}_names "
               f"({data_shapes} vs. {data_names})")
        if throw:
            raise ValueError(msg)
        warnings.warn(msg, stacklevel=3)


def _to_desc(item: Any, what: str, items: list) -> DataDesc:
    """`item` as a DataDesc; TypeError (as MXNet raises) unless it is one or a (name, shape[, ...]) pair."""
    if isinstance(item, DataDesc):
        return item
    if not (isinstance(item, (tuple, list)) and len(item) >= 2 and isinstance(item[0], str)
            and isinstance(item[1], (tuple, list))):
        raise TypeError(f"{what} must be a list of (name, shape) pairs or DataDesc, got the item {item!r} "
                        f"in {items!r}")
    return DataDesc(*item)


def _parse_data_desc(data_names: list, label_names: list, data_shapes: list,
                     label_shapes: list | None) -> tuple[list, list | None]:
    """DataDescs from (name, shape) pairs, checked against the module's input names."""
    data_shapes = [_to_desc(x, "data_shapes", data_shapes) for x in data_shapes]
    _check_names_match(data_names, data_shapes, "data", True)
    if label_shapes is not None:
        label_shapes = [_to_desc(x, "label_shapes", label_shapes) for x in label_shapes]
        _check_names_match(label_names, label_shapes, "label", False)
    else:
        _check_names_match(label_names, [], "label", False)
    return data_shapes, label_shapes


def _call_all(callbacks: Any, *args: Any) -> None:
    if callbacks is not None:
        for callback in _as_list(callbacks):
            callback(*args)


class BaseModule:
    """The base class of modules: a computation unit with parameters and an optimizer.

    A module moves through states: created, `bind` (memory allocated for the
    input shapes), `init_params`, `init_optimizer`; then `forward`,
    `backward`, `update` run training steps, and `fit`, `score`, `predict`
    wrap whole loops over a `DataIter`.

    Parameters
    ----------
    logger : Logger
        Where progress is logged (default: the `logging` module).
    """

    def __init__(self, logger: Any = logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # -- high-level API --------------------------------------------------------------------------
    def forward_backward(self, data_batch: DataBatch) -> None:
        """A forward pass in training mode followed by a backward pass."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data: DataIter, eval_metric: Any, num_batch: int | None = None,
              batch_end_callback: Any = None, score_end_callback: Any = None, reset: bool = True,
              epoch: int = 0, sparse_row_id_fn: Any = None) -> list[tuple[str, float]]:
        """Evaluate `eval_metric` over `eval_data`; the list of (name, value).

        Parameters
        ----------
        eval_data : DataIter
        eval_metric : str or EvalMetric
        num_batch : int, optional
            Stop after this many batches.
        batch_end_callback, score_end_callback : function or list, optional
            Called with a `BatchEndParam` after each batch / at the end.
        reset : bool
            Reset `eval_data` first.
        epoch : int
            The epoch reported to the callbacks.
        """
        assert self.binded and self.params_initialized
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            self.update_metric(eval_metric, eval_batch.label)
            _call_all(batch_end_callback, BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                                        locals=locals()))
            actual_num_batch += 1
        _call_all(score_end_callback, BatchEndParam(epoch=epoch, nbatch=actual_num_batch,
                                                    eval_metric=eval_metric, locals=locals()))
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data: DataIter, num_batch: int | None = None, reset: bool = True,
                     sparse_row_id_fn: Any = None) -> Iterator[tuple[list, int, DataBatch]]:
        """Yield `(outputs, nbatch, batch)` for each batch, padding removed from the outputs."""
        assert self.binded and self.params_initialized
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, eval_batch

    def predict(self, eval_data: Any, num_batch: int | None = None, merge_batches: bool = True,
                reset: bool = True, always_output_list: bool = False, sparse_row_id_fn: Any = None) -> Any:
        """Run prediction over `eval_data` (a DataIter, or one NDArray / numpy batch).

        Returns
        -------
        With `merge_batches`, the outputs of all batches concatenated (one
        NDArray for a single output unless `always_output_list`); otherwise a
        list with the list of outputs of every batch. Padding is removed.
        """
        assert self.binded and self.params_initialized
        if isinstance(eval_data, (NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = nd.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError("eval_data must be of type NDArray or DataIter")
        if reset:
            eval_data.reset()
        output_list = []
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            output_list.append([out[0:out.shape[0] - pad].copy() for out in self.get_outputs()])
        if not output_list or not merge_batches:
            return output_list
        num_outputs = len(output_list[0])
        for out in output_list:
            assert len(out) == num_outputs, ("Cannot merge batches, as num of outputs is not the same in "
                                             "mini-batches. Maybe bucketing is used?")
        merged = [nd.concat(*[out[i] for out in output_list], dim=0) for i in range(num_outputs)]
        if num_outputs == 1 and not always_output_list:
            return merged[0]
        return merged

    def fit(self, train_data: DataIter, eval_data: DataIter | None = None, eval_metric: Any = "acc",
            epoch_end_callback: Any = None, batch_end_callback: Any = None, kvstore: Any = "local",
            optimizer: Any = "sgd", optimizer_params: Any = (("learning_rate", 0.01),),
            eval_end_callback: Any = None, eval_batch_end_callback: Any = None,
            initializer: Any = DEFAULT_INITIALIZER, arg_params: dict | None = None, aux_params: dict | None = None,
            allow_missing: bool = False, force_rebind: bool = False, force_init: bool = False,
            begin_epoch: int = 0, num_epoch: int | None = None, validation_metric: Any = None,
            monitor: Any = None, sparse_row_id_fn: Any = None) -> None:
        """Train the module on `train_data` for epochs `begin_epoch` .. `num_epoch - 1`.

        Parameters
        ----------
        train_data : DataIter
        eval_data : DataIter, optional
            Scored with `validation_metric` after every epoch.
        eval_metric : str or EvalMetric
            The training metric (default 'acc').
        epoch_end_callback : function or list
            Called as `callback(epoch, symbol, arg_params, aux_params)`.
        batch_end_callback : function or list
            Called with a `BatchEndParam` after every batch.
        kvstore : str, KVStore or None
            How gradients are summed: ``'local'``/``'device'`` over the contexts
            (no store on one context), ``'dist_sync'`` also over the MPI workers
            (then ``rescale_grad = 1 / (batch_size * num_workers)``), as in MXNet.
        optimizer : str or Optimizer
        optimizer_params : dict or tuple of pairs
            Default ``(('learning_rate', 0.01),)``.
        eval_end_callback, eval_batch_end_callback : function or list
            Callbacks of the per-epoch `score`.
        initializer : Initializer
            For parameters not in `arg_params` (default ``Uniform(0.01)``).
        arg_params, aux_params : dict of str to NDArray, optional
            Initial values.
        allow_missing : bool
            Let `arg_params` miss some parameters (they get `initializer`).
        force_rebind, force_init : bool
            Rebind / reinitialize even if already done.
        begin_epoch : int
            The first epoch (for resuming).
        num_epoch : int
            One past the last epoch.
        validation_metric : str or EvalMetric, optional
            Defaults to `eval_metric`.
        monitor : Monitor, optional
        """
        assert num_epoch is not None, "please specify number of epochs"
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            self._fit_epoch(train_data, epoch, eval_metric, batch_end_callback, monitor, sparse_row_id_fn)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            arg_params_, aux_params_ = self.get_params()
            self.set_params(arg_params_, aux_params_)
            _call_all(epoch_end_callback, epoch, self.symbol, arg_params_, aux_params_)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric, score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    def _fit_epoch(self, train_data: DataIter, epoch: int, eval_metric: Any, batch_end_callback: Any,
                   monitor: Any, sparse_row_id_fn: Any) -> None:
        """One pass over `train_data`, prefetching the next batch as MXNet does."""
        nbatch = 0
        data_iter = iter(train_data)
        end_of_batch = False
        next_data_batch = next(data_iter)
        eval_name_vals: list = []
        while not end_of_batch:
            data_batch = next_data_batch
            if monitor is not None:
                monitor.tic()
            self.forward_backward(data_batch)
            self.update()
            self.update_metric(eval_metric, data_batch.label)
            try:
                next_data_batch = next(data_iter)
                self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
            except StopIteration:
                end_of_batch = True
            if monitor is not None:
                monitor.toc_print()
            if end_of_batch:
                eval_name_vals = eval_metric.get_global_name_value()
            _call_all(batch_end_callback, BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                                        locals=locals()))
            nbatch += 1
        for name, val in eval_name_vals:
            self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)

    # -- symbol and shapes ----------------------------------------------------------------------------
    @property
    def symbol(self) -> Any:
        """The symbol of this module."""
        return self._symbol

    @property
    def data_names(self) -> list:
        raise NotImplementedError()

    @property
    def output_names(self) -> list:
        raise NotImplementedError()

    @property
    def data_shapes(self) -> list:
        raise NotImplementedError()

    @property
    def label_shapes(self) -> list:
        raise NotImplementedError()

    @property
    def output_shapes(self) -> list:
        raise NotImplementedError()

    # -- parameters ------------------------------------------------------------------------------------
    def get_params(self) -> tuple[dict, dict]:
        raise NotImplementedError()

    def init_params(self, initializer: Any = DEFAULT_INITIALIZER, arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        raise NotImplementedError()

    def set_params(self, arg_params: dict, aux_params: dict, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        """Assign parameter and aux state values (all required unless `allow_missing`)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)

    def save_params(self, fname: str) -> None:
        """Save the parameters to `fname` with `arg:` / `aux:` keys (MXNet's format)."""
        arg_params, aux_params = self.get_params()
        save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
        save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
        nd.save(fname, save_dict)

    def load_params(self, fname: str) -> None:
        """Load parameters saved by `save_params` (or MXNet) and assign them."""
        arg_params, aux_params = {}, {}
        for k, value in nd.load(fname).items():
            arg_type, name = k.split(":", 1)
            if arg_type == "arg":
                arg_params[name] = value
            elif arg_type == "aux":
                aux_params[name] = value
            else:
                raise ValueError("Invalid param file " + fname)
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context: bool = True) -> list:
        assert self.binded and self.params_initialized
        assert not merge_multi_context
        return []

    def set_states(self, states: Any = None, value: Any = None) -> None:
        assert self.binded and self.params_initialized
        assert not states and not value

    def install_monitor(self, mon: Any) -> None:
        raise NotImplementedError()

    # -- computations ----------------------------------------------------------------------------------
    def prepare(self, data_batch: DataBatch, sparse_row_id_fn: Any = None) -> None:
        """Prepare for a batch (switch bucket / reshape); a no-op here."""
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning("sparse_row_id_fn is not invoked for BaseModule."), stacklevel=2)

    def forward(self, data_batch: DataBatch, is_train: bool | None = None) -> None:
        raise NotImplementedError()

    def backward(self, out_grads: Any = None) -> None:
        raise NotImplementedError()

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        raise NotImplementedError()

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        raise NotImplementedError()

    def update(self) -> None:
        raise NotImplementedError()

    def update_metric(self, eval_metric: Any, labels: list, pre_sliced: bool = False) -> None:
        raise NotImplementedError()

    def bind(self, data_shapes: list, label_shapes: list | None = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: Any = "write") -> None:
        raise NotImplementedError()

    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        raise NotImplementedError()
