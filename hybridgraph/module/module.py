"""Module: a Symbol bound to executors on one or more contexts, with parameters and
an optimizer (MXNet 1.9.1's `mxnet.module.Module`)."""
from __future__ import annotations

import logging
import warnings
from typing import Any

from hybridgraph import kvstore as kvs
from hybridgraph import nd
from hybridgraph.gluon import optimizer as opt
from hybridgraph.gluon.initializer import InitDesc
from hybridgraph.nd.atomic import atomic_write
from hybridgraph.nd.backend import Context, cpu

from ..io import DataBatch, DataDesc
from ..model import load_checkpoint
from .base_module import DEFAULT_INITIALIZER, BaseModule, _check_input_names, _parse_data_desc
from .executor_group import ExecutorGroup


class Module(BaseModule):
    """A module over a Symbol: bind, initialize, train and predict.

    Parameters
    ----------
    symbol : Symbol
        The network.
    data_names : list of str
        The data inputs (default ``('data',)``).
    label_names : list of str
        The label inputs (default ``('softmax_label',)``).
    logger : Logger
        Default: the `logging` module.
    context : Context or list of Context
        Where to run (default cpu); with several, each runs a slice of the batch.
    work_load_list : list of number
        Relative batch share of each context (default equal).
    fixed_param_names : list of str
        Parameters that are not updated.
    state_names : list of str
        Inputs that are states (set with `set_states`, not parameters).
    group2ctxs : dict of str to Context, optional
        Accepted for compatibility; model parallelism is not supported.
    compression_params : dict, optional
        Accepted for compatibility (gradient compression needs a kvstore).

    Examples
    --------
    >>> mod = mx.mod.Module(net, context=mx.cpu())
    >>> mod.fit(train_iter, num_epoch=10, optimizer='sgd', eval_metric='acc')
    """

    def __init__(self, symbol: Any, data_names: Any = ("data",), label_names: Any = ("softmax_label",),
                 logger: Any = logging, context: Any = None, work_load_list: list | None = None,
                 fixed_param_names: list | None = None, state_names: list | None = None,
                 group2ctxs: Any = None, compression_params: dict | None = None):
        super().__init__(logger=logger)
        context = cpu() if context is None else context
        self._context = [context] if isinstance(context, Context) else list(context)
        work_load_list = [1] * len(self._context) if work_load_list is None else work_load_list
        assert len(work_load_list) == len(self._context)
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in symbol.list_arguments() if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()
        self._arg_params: dict | None = None
        self._aux_params: dict | None = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer: Any = None
        self._kvstore: Any = None
        self._update_on_kvstore = False
        self._updater: Any = None
        self._preload_opt_states: str | None = None
        self._grad_req: Any = None
        self._exec_group: ExecutorGroup | None = None
        self._data_shapes: list | None = None
        self._label_shapes: list | None = None

    # -- checkpoints ------------------------------------------------------------------------------
    @staticmethod
    def load(prefix: str, epoch: int, load_optimizer_states: bool = False, **kwargs: Any) -> "Module":
        """A Module from a checkpoint (`prefix-symbol.json`, `prefix-%04d.params`).

        The parameters are assigned when the module is bound, so `fit` resumes
        from them. With `load_optimizer_states`, `prefix-%04d.states` is loaded
        by `init_optimizer`. `kwargs` go to the constructor (data_names, context, ...).
        """
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{epoch:04d}.states"
        return mod

    def save_checkpoint(self, prefix: str, epoch: int, save_optimizer_states: bool = False,
                        remove_amp_cast: bool = True) -> None:
        """Write `prefix-%04d.params` (and `.states` if asked), then `prefix-symbol.json`.

        Each file is written atomically; the symbol goes last so that a kill midway
        leaves the old symbol beside new weights of the same graph, never a new
        graph beside old weights (SymbolBlock.imports / load_checkpoint detect
        a pair whose names or shapes do not match)."""
        param_name = f"{prefix}-{epoch:04d}.params"
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = f"{prefix}-{epoch:04d}.states"
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)
        self._symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)

    # -- properties -------------------------------------------------------------------------------
    @property
    def data_names(self) -> list:
        return self._data_names

    @property
    def label_names(self) -> list:
        return self._label_names

    @property
    def output_names(self) -> list:
        return self._output_names

    @property
    def data_shapes(self) -> list:
        """The DataDescs of the bound data inputs."""
        assert self.binded
        return self._data_shapes

    @property
    def label_shapes(self) -> list | None:
        """The DataDescs of the bound labels (None when bound without labels)."""
        assert self.binded
        return self._label_shapes

    @property
    def output_shapes(self) -> list:
        """(name, shape) of every output, for the whole batch."""
        assert self.binded
        return self._exec_group.get_output_shapes()

    # -- parameters -----------------------------------------------------------------------------------
    def get_params(self) -> tuple[dict, dict]:
        """The current (arg_params, aux_params), copied from the devices when stale."""
        assert self.params_initialized
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer: Any = DEFAULT_INITIALIZER, arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        """Initialize the parameters: values from `arg_params` / `aux_params`, the rest
        from `initializer` (missing ones raise unless `allow_missing`).

        Parameters
        ----------
        initializer : Initializer
        arg_params, aux_params : dict of str to NDArray, optional
        allow_missing : bool
        force_init : bool
            Reinitialize even if already initialized.
        allow_extra : bool
            Ignore names in `arg_params` that the symbol does not have.
        """
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. init_params call ignored.",
                          stacklevel=2)
            return
        assert self.binded, "call bind before initializing the parameters"

        def _impl(name: InitDesc, arr: Any, cache: dict | None) -> None:
            if cache is not None:
                if name in cache:
                    if cache[name] is not arr:
                        arr[:] = cache[name].as_in_context(arr.context)
                    return
                if not allow_missing:
                    raise RuntimeError(f"{name} is not presented")
                if initializer is not None:
                    initializer(name, arr)
            else:
                initializer(name, arr)

        attrs = self._symbol.attr_dict()
        for name, arr in sorted(self._arg_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def set_params(self, arg_params: dict, aux_params: dict, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        """Assign parameter values (see `init_params`)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params call ignored.",
                          stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def _sync_params_from_devices(self) -> None:
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # -- binding -------------------------------------------------------------------------------------
    def _reset_bind(self) -> None:
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    def bind(self, data_shapes: list, label_shapes: list | None = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: "Module | None" = None,
             grad_req: Any = "write") -> None:
        """Allocate the executors for the given input shapes.

        Parameters
        ----------
        data_shapes : list of (str, tuple) or DataDesc
        label_shapes : list of (str, tuple) or DataDesc, optional
        for_training : bool
            Allocate gradients (needed for `backward`).
        inputs_need_grad : bool
            Also compute gradients of the data inputs (`get_input_grads`).
        force_rebind : bool
            Rebind even if already bound.
        shared_module : Module, optional
            Share parameters (and optimizer) with this bound module.
        grad_req : str, list or dict
            'write', 'add' or 'null'.
        """
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        if not for_training:
            assert not inputs_need_grad
        self._data_shapes, self._label_shapes = _parse_data_desc(self.data_names, self.label_names,
                                                                 data_shapes, label_shapes)
        shared_group = None
        if shared_module is not None:
            assert isinstance(shared_module, Module) and shared_module.binded and \
                shared_module.params_initialized
            shared_group = shared_module._exec_group
        self._exec_group = ExecutorGroup(self._symbol, self._context, self._work_load_list, self._data_shapes,
                                         self._label_shapes, self._param_names, for_training, inputs_need_grad,
                                         shared_group, logger=self.logger,
                                         fixed_param_names=self._fixed_param_names, grad_req=grad_req,
                                         state_names=self._state_names, group2ctxs=self._group2ctxs)
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            assert self._arg_params is None and self._aux_params is None
            self._arg_params = {name: nd.zeros(x[0].shape, dtype=x[0].dtype)
                                for name, x in zip(self._param_names, self._exec_group.param_arrays)}
            self._aux_params = {name: nd.zeros(x[0].shape, dtype=x[0].dtype)
                                for name, x in zip(self._aux_names, self._exec_group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes: list, label_shapes: list | None = None) -> None:
        """Rebind for new input shapes (e.g. another batch size), keeping the parameters."""
        assert self.binded
        self._data_shapes, self._label_shapes = _parse_data_desc(self.data_names, self.label_names,
                                                                 data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # -- optimizer ---------------------------------------------------------------------------------------
    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        """Create the optimizer and its updater.

        A string `optimizer` is created with `optimizer_params` and
        ``rescale_grad = 1 / batch_size`` unless given (times the number of
        workers on a ``dist_sync`` store). With several contexts or workers the
        gradients go through the kvstore (`mx.kv.create_for_trainer` rules): it
        sums them and, with ``update_on_kvstore``, applies the optimizer once
        and hands the weights back; rank 0's initial parameters are broadcast.
        """
        assert self.binded and self.params_initialized
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        group = self._exec_group
        kv, self._update_on_kvstore = kvs.create_for_trainer(
            kvstore, len(self._context), [w[0] for w in group.param_arrays])
        batch_size = group.batch_size
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers  # gradients are summed over the workers' batches
        rescale_grad = 1.0 / batch_size
        if self._update_on_kvstore:
            idx2name = dict(enumerate(group.param_names))
        else:
            n = len(self._context)
            idx2name = {i * n + k: name for k in range(n) for i, name in enumerate(group.param_names)}
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            optimizer_params.setdefault("rescale_grad", rescale_grad)
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name, **optimizer_params)
        else:
            assert isinstance(optimizer, opt.Optimizer)
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn("Optimizer created manually outside Module but rescale_grad is not normalized "
                              f"to 1.0/batch_size/num_workers ({optimizer.rescale_grad} vs. {rescale_grad}). "
                              "Is this intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        self._optimizer = optimizer
        self._kvstore = kv
        self._updater = opt.get_updater(optimizer)
        if kv is not None:
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            keys = list(range(len(group.param_names)))
            kv.broadcast(keys, [w[0] for w in group.param_arrays], list(group.param_arrays))  # rank 0's values
            if self._update_on_kvstore:
                kv.set_optimizer(optimizer)
                self._updater = kv._updater
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module: "Module") -> None:
        """Use the optimizer (and its states) of another module."""
        assert shared_module.optimizer_initialized
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname: str) -> None:
        """Write the optimizer states (the updater's pickled states) to `fname`, atomically, by
        rank 0 only when training on several workers."""
        assert self.optimizer_initialized
        kv = self._kvstore
        if kv is None or kv.rank == 0:
            atomic_write(fname, self._updater.get_states())
        if kv is not None:
            kv.barrier()

    def load_optimizer_states(self, fname: str) -> None:
        """Read optimizer states written by `save_optimizer_states`."""
        assert self.optimizer_initialized
        if self._kvstore is not None:
            self._kvstore.barrier()  # rank 0 may still be writing
        with open(fname, "rb") as fin:
            self._updater.set_states(fin.read())

    # -- computation ------------------------------------------------------------------------------------
    def forward(self, data_batch: DataBatch, is_train: bool | None = None) -> None:
        """Run forward on a batch (training mode by default when bound for training).

        A batch whose shapes differ from the bound ones rebinds (reshapes) first.
        """
        assert self.binded and self.params_initialized
        curr = tuple(d.shape for d in self._data_shapes)
        new = tuple(d.shape for d in data_batch.data)
        if curr != new:
            if getattr(data_batch, "provide_data", None):
                new_dshape = data_batch.provide_data
            else:
                new_dshape = [DataDesc(d.name, s, d.dtype, d.layout) for d, s in zip(self._data_shapes, new)]
            if getattr(data_batch, "provide_label", None):
                new_lshape = data_batch.provide_label
            elif getattr(data_batch, "label", None) and self._label_shapes:
                new_lshape = [DataDesc(d.name, j.shape, d.dtype, d.layout)
                              for d, j in zip(self._label_shapes, data_batch.label)]
            else:
                new_lshape = None
            self.reshape(new_dshape, new_lshape)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads: Any = None) -> None:
        """Backward from the last forward (`out_grads` for non-loss outputs)."""
        assert self.binded and self.params_initialized
        self._exec_group.backward(out_grads=out_grads)

    def update(self) -> None:
        """Apply the optimizer to every non-fixed parameter with its gradient."""
        assert self.binded and self.params_initialized and self.optimizer_initialized
        self._params_dirty = True
        group = self._exec_group
        kv = self._kvstore
        live = [i for i, gs in enumerate(group.grad_arrays) if gs[0] is not None]
        if kv is not None and live:
            grads = [group.grad_arrays[i] for i in live]
            if self._update_on_kvstore:  # the store sums, updates its copy, and hands the weights back
                kv.pushpull(live, grads, out=[group.param_arrays[i] for i in live])
                return
            kv.pushpull(live, grads)  # summed over devices and workers, then updated on each device
        n = len(self._context)
        updates: list[list] = [[] for _ in range(n)]
        for i in live:
            for k, (w, g) in enumerate(zip(group.param_arrays[i], group.grad_arrays[i])):
                updates[k].append((i * n + k, g, w))
        for dev_updates in updates:
            if dev_updates:
                idx, grads_, weights_ = zip(*dev_updates)
                self._updater(list(idx), list(grads_), list(weights_))

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        """The outputs of the last forward (merged over devices by default)."""
        assert self.binded and self.params_initialized
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        """The gradients of the data inputs (needs `bind(inputs_need_grad=True)`)."""
        assert self.binded and self.params_initialized and self.inputs_need_grad
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context: bool = True) -> list:
        assert self.binded and self.params_initialized
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states: Any = None, value: Any = None) -> None:
        assert self.binded and self.params_initialized
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric: Any, labels: list, pre_sliced: bool = False) -> None:
        """Update `eval_metric` with the last outputs and `labels`."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        """Install a monitor (`mon.install(executor)`) on every executor."""
        assert self.binded
        self._exec_group.install_monitor(mon)
