"""`SVRGModule` (MXNet 1.9.1's `mx.contrib.svrg_optimization.svrg_module`): a Module trained with
SVRG. A second Module (`_mod_aux`) runs the same batches on the weights of the last snapshot;
`update()` replaces each gradient ``g(w)`` by ``g(w) - g(w_snapshot) + full_grad`` before the
optimizer step, where ``full_grad`` (per device, in `_param_dict`) is the snapshot's gradient
averaged over the whole data, recomputed every `update_freq` epochs by `update_full_grads`.
"""
from __future__ import annotations

import logging
from typing import Any

from ... import kvstore as kvs, nd
from ...gluon import optimizer as opt
from ...io import DataIter
from ...module import Module
from .svrg_optimizer import _SVRGOptimizer


class SVRGModule(Module):
    """A Module with SVRG updates; the arguments are Module's plus `update_freq` (a positive int:
    the full gradients are recomputed every `update_freq` epochs of `fit`).

    Examples
    --------
    >>> mod = SVRGModule(symbol=lro, data_names=['data'], label_names=['lin_reg_label'], update_freq=2)
    >>> mod.fit(di, eval_metric='mse', optimizer='sgd', optimizer_params=(('learning_rate', 0.025),),
    ...         num_epoch=10, kvstore='local')
    """

    def __init__(self, symbol: Any, data_names: Any = ("data",), label_names: Any = ("softmax_label",),
                 logger: Any = logging, context: Any = None, work_load_list: list | None = None,
                 fixed_param_names: list | None = None, state_names: list | None = None, group2ctxs: Any = None,
                 compression_params: dict | None = None, update_freq: int | None = None):
        super().__init__(symbol, data_names=data_names, label_names=label_names, logger=logger, context=context,
                         work_load_list=work_load_list, fixed_param_names=fixed_param_names,
                         state_names=state_names, group2ctxs=group2ctxs, compression_params=compression_params)
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise TypeError("update_freq in SVRGModule must be an integer to represent the frequency for "
                            f"calculating full gradients, got {update_freq!r}")
        if update_freq <= 0:
            raise ValueError("update_freq in SVRGModule must be a positive integer to represent the frequency for "
                             f"calculating full gradients, got {update_freq}")
        self.update_freq = update_freq
        self._mod_aux = Module(symbol, data_names, label_names, logger, context, work_load_list, fixed_param_names,
                               state_names, group2ctxs, compression_params)
        self._param_dict: list[dict] | None = None
        self._ctx_len = len(self._context)

    # -- binding: both modules ------------------------------------------------------------------------
    def _reset_bind(self) -> None:
        super()._reset_bind()
        self._mod_aux._reset_bind()

    def bind(self, data_shapes: list, label_shapes: list | None = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: Any = "write") -> None:
        """Bind this module and, when training, the snapshot module with the same shapes."""
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind, shared_module,
                     grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                               shared_module, grad_req)

    def reshape(self, data_shapes: list, label_shapes: list | None = None) -> None:
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)

    # -- optimizer ----------------------------------------------------------------------------------------
    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        """Install an `_SVRGOptimizer` wrapping `optimizer`; with a kvstore, also one ``<name>_full``
        key per parameter, where the full gradients are summed over devices and workers."""
        self._param_dict = [{name: nd.zeros(value.shape, ctx=self._context[i])
                             for name, value in self.get_params()[0].items()} for i in range(self._ctx_len)]
        svrg_optimizer = self._create_optimizer(_SVRGOptimizer.__name__, optimizer, kvstore, optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg_optimizer, optimizer_params=optimizer_params,
                               force_init=force_init)
        if self._kvstore:
            for idx, param_on_devs in enumerate(self._exec_group.param_arrays):
                name = self._exec_group.param_names[idx]
                self._kvstore.init(self._full_key(name), nd.zeros(self._arg_params[name].shape))
                if self._update_on_kvstore:
                    # MXNet 1.9.1 pulls the (zero) full gradients into the device weights here; the first
                    # update then brings the store's weights back. Kept, so that training matches MXNet's.
                    self._kvstore.pull(self._full_key(name), param_on_devs, priority=-idx)

    def _full_key(self, name: str) -> int:
        """The kvstore key of parameter `name`'s full gradient: its ``<name>_full`` index in the
        optimizer's table. (Module's store uses int keys; MXNet's uses the names, one key either way.)"""
        for index, key in self._optimizer.idx2name.items():
            if key == name + "_full":
                return index
        raise KeyError(f"SVRGModule: {name!r} is not a parameter of this module ({self._exec_group.param_names})")

    def _create_optimizer(self, optimizer: str, default_opt: Any, kvstore: Any, optimizer_params: Any) -> Any:
        """The `_SVRGOptimizer`, with Module's rescale_grad and index -> name table plus one
        ``<name>_full`` entry per parameter."""
        group = self._exec_group
        batch_size = group.batch_size
        kv, update_on_kvstore = kvs.create_for_trainer(kvstore, self._ctx_len, [w[0] for w in group.param_arrays])
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        if update_on_kvstore:
            idx2name = dict(enumerate(group.param_names))
        else:
            n = self._ctx_len
            idx2name = {i * n + k: name for k in range(n) for i, name in enumerate(group.param_names)}
        for key in self._param_dict[0]:
            idx2name[max(idx2name, default=-1) + 1] = key + "_full"
        params = dict(optimizer_params)
        params.setdefault("rescale_grad", 1.0 / batch_size)
        params["default_optimizer"] = default_opt
        params["param_idx2name"] = idx2name
        return opt.create(optimizer, **params)

    # -- computation -------------------------------------------------------------------------------------
    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Forward on this module; with ``is_train=True`` also on the snapshot module."""
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads: Any = None) -> None:
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self) -> None:
        """Turn the gradients into SVRG gradients, then take the optimizer step."""
        self._update_svrg_gradients()
        super().update()

    def update_full_grads(self, train_data: DataIter) -> None:
        """Snapshot the current weights into the auxiliary module and average its gradients over
        all of `train_data` (a padded last batch counts as the fraction it holds)."""
        param_names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        train_data.reset()
        nbatch, padding = 0, 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for ctx in range(self._ctx_len):
                for index, name in enumerate(param_names):
                    grads = self._mod_aux._exec_group.grad_arrays[index][ctx]
                    self._param_dict[ctx][name] = self._param_dict[ctx][name] + grads
            padding = batch.pad
        true_num_batch = nbatch - padding / train_data.batch_size
        for name in param_names:
            grad_list = []
            for i in range(self._ctx_len):
                self._param_dict[i][name] /= true_num_batch
                grad_list.append(self._param_dict[i][name])
            if self._kvstore:
                self._accumulate_kvstore(name, grad_list)

    def _accumulate_kvstore(self, key: str, value: list) -> None:
        """Sum the full gradients of every device and worker in the kvstore (``<key>_full``) and
        share the mean back to each device."""
        self._kvstore.push(self._full_key(key), value)
        self._kvstore.barrier()
        self._kvstore.pull(self._full_key(key), value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key: str, value: list) -> None:
        for i in range(self._ctx_len):
            self._param_dict[i][key] = value[i] / self._ctx_len

    @staticmethod
    def _svrg_grads_update_rule(g_curr_batch_curr_weight: list, g_curr_batch_special_weight: list,
                                g_special_weight_all_batch: list) -> list:
        """In place: ``g_curr - g_snapshot + full_grad`` for each array of the first list."""
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self) -> None:
        """Apply the SVRG rule to every parameter gradient on every device."""
        for ctx in range(self._ctx_len):
            for index, name in enumerate(self._exec_group.param_names):
                grad = self._exec_group.grad_arrays[index][ctx]
                if grad is None:  # a fixed parameter
                    continue
                grad -= self._mod_aux._exec_group.grad_arrays[index][ctx]
                grad += self._param_dict[ctx][name]

    def _fit_epoch(self, train_data: DataIter, epoch: int, *args: Any) -> None:
        """One epoch of `fit`, after recomputing the full gradients every `update_freq` epochs."""
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)
        train_data.reset()
        super()._fit_epoch(train_data, epoch, *args)

