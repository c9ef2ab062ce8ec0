"""BucketingModule: one Module per bucket key (e.g. sequence length), all sharing the
parameters of the default bucket (MXNet 1.9.1's `mxnet.module.BucketingModule`)."""
from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph import symbol as _sym
from hybridgraph.symbol.naming import NameManager

from ..model import load_params

from .base_module import DEFAULT_INITIALIZER, BaseModule, _check_input_names
from .module import Module


class BucketingModule(BaseModule):
    """A module that switches between symbols by the batches' `bucket_key`.

    Parameters
    ----------
    sym_gen : function
        `sym_gen(bucket_key)` returns `(symbol, data_names, label_names)`.
    default_bucket_key : str or int
        The bucket bound first; the largest bucket, whose memory the others reuse.
    logger, context, work_load_list, fixed_param_names, state_names, group2ctxs, compression_params
        As for `Module`.
    """

    def __init__(self, sym_gen: Callable, default_bucket_key: Any = None, logger: Any = logging,
                 context: Any = None, work_load_list: list | None = None, fixed_param_names: list | None = None,
                 state_names: list | None = None, group2ctxs: Any = None, compression_params: dict | None = None):
        super().__init__(logger=logger)
        assert default_bucket_key is not None
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        self._fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        self._state_names = list(state_names) if state_names is not None else []
        _check_input_names(symbol, list(data_names or []), "data", True)
        _check_input_names(symbol, list(label_names or []), "label", False)
        _check_input_names(symbol, self._state_names, "state", True)
        _check_input_names(symbol, self._fixed_param_names, "fixed_param", True)
        self._compression_params = compression_params
        self._context = context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets: dict = {}
        self._curr_module: Module | None = None
        self._curr_bucket_key: Any = None
        self._params_dirty = False
        self._monitor: Any = None
        self._grad_req: Any = None

    def _reset_bind(self) -> None:
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, *args: Any, **kwargs: Any) -> tuple:
        with NameManager():
            return self._sym_gen(*args, **kwargs)

    def _new_module(self, symbol: Any, data_names: Any, label_names: Any) -> Module:
        return Module(symbol, data_names, label_names, logger=self.logger, context=self._context,
                      work_load_list=self._work_load_list, fixed_param_names=self._fixed_param_names,
                      state_names=self._state_names, group2ctxs=self._group2ctxs,
                      compression_params=self._compression_params)

    # -- properties ----------------------------------------------------------------------------
    @property
    def default_bucket_key(self) -> Any:
        return self._default_bucket_key

    @property
    def data_names(self) -> list:
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self) -> list:
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self) -> list:
        assert self.binded
        return self._curr_module.data_shapes

    @property
    def label_shapes(self) -> list | None:
        assert self.binded
        return self._curr_module.label_shapes

    @property
    def output_shapes(self) -> list:
        assert self.binded
        return self._curr_module.output_shapes

    @property
    def symbol(self) -> Any:
        """The symbol of the current bucket."""
        assert self.binded
        return self._curr_module.symbol

    # -- parameters ------------------------------------------------------------------------------
    def get_params(self) -> tuple[dict, dict]:
        assert self.params_initialized
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params: dict, aux_params: dict, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params call ignored.",
                          stacklevel=2)
            return
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                     force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer: Any = DEFAULT_INITIALIZER, arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        if self.params_initialized and not force_init:
            return
        assert self.binded, "call bind before initializing the parameters"
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                                      allow_missing=allow_missing, force_init=force_init,
                                      allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context: bool = True) -> list:
        assert self.binded and self.params_initialized
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states: Any = None, value: Any = None) -> None:
        assert self.binded and self.params_initialized
        self._curr_module.set_states(states, value)

    # -- binding ------------------------------------------------------------------------------------
    def bind(self, data_shapes: list, label_shapes: list | None = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: Any = "write") -> None:
        """Bind the default bucket's module."""
        params = self.get_params() if self.params_initialized else None
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        assert shared_module is None, "shared_module for BucketingModule is not supported"
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True
        self._grad_req = grad_req
        module = self._buckets.get(self._default_bucket_key)
        if module is None:
            module = self._new_module(*self._call_sym_gen(self._default_bucket_key))
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind=False,
                    shared_module=None, grad_req=self._grad_req)
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if params is not None:
            self.set_params(*params)

    def switch_bucket(self, bucket_key: Any, data_shapes: list | None, label_shapes: list | None = None) -> None:
        """Make `bucket_key` current, binding its module (sharing the default's memory) if new."""
        assert self.binded, "call bind before switching bucket"
        module = self._buckets.get(bucket_key)
        if module is None or not module.binded:
            if module is None:
                module = self._new_module(*self._call_sym_gen(bucket_key))
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=self._buckets[self._default_bucket_key], grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        assert self.binded and self.params_initialized
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        for mod in self._buckets.values():
            if mod is not self._curr_module:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # -- computation ---------------------------------------------------------------------------------
    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        assert self.binded and self.params_initialized
        original = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data, data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        assert self.binded and self.params_initialized
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data, data_batch.provide_label)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads: Any = None) -> None:
        assert self.binded and self.params_initialized
        self._curr_module.backward(out_grads=out_grads)

    def update(self) -> None:
        assert self.binded and self.params_initialized and self.optimizer_initialized
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        assert self.binded and self.params_initialized
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        assert self.binded and self.params_initialized and self.inputs_need_grad
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric: Any, labels: list, pre_sliced: bool = False) -> None:
        assert self.binded and self.params_initialized
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        assert self.binded
        self._monitor = mon
        for mod in self._buckets.values():
            mod.install_monitor(mon)

    def save_checkpoint(self, prefix: str, epoch: int, remove_amp_cast: bool = False) -> None:
        """Save `prefix-%04d.params`, one `prefix-<key>-symbol.json` per bucket and
        `prefix.buckets` (the bucket keys), as MXNet does."""
        assert len(self._buckets) > 0, "Empty BucketingModule cannot be saved"
        self.save_params(f"{prefix}-{epoch:04d}.params")
        for bucket_key in self._buckets:
            symbol, _, _ = self._sym_gen(bucket_key)
            symbol.save(f"{prefix}-{bucket_key}-symbol.json", remove_amp_cast=remove_amp_cast)
        nd.save(f"{prefix}.buckets", nd.array(list(self._buckets.keys()), dtype=np.int32))

    @staticmethod
    def load(prefix: str, epoch: int, sym_gen: Callable | None = None, default_bucket_key: Any = None,
             **kwargs: Any) -> "BucketingModule":
        """A BucketingModule from `save_checkpoint` files (integer bucket keys)."""
        assert sym_gen is not None, "sym_gen is required for loading BucketingModule"
        assert default_bucket_key is not None, "default_bucket_key is required for loading BucketingModule"
        buckets = [int(k) for k in nd.load(f"{prefix}.buckets")[0].asnumpy().astype("int32")]
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for bucket_key in buckets:
            _, data_names, label_names = sym_gen(bucket_key)
            symbol = _sym.load(f"{prefix}-{bucket_key}-symbol.json")
            mod._buckets[bucket_key] = Module(symbol, data_names, label_names, **kwargs)
            if bucket_key == default_bucket_key:
                mod._curr_module = mod._buckets[bucket_key]
        arg_params, aux_params = load_params(prefix, epoch)
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
