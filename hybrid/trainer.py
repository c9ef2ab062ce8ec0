"""Trainer: applies an Optimizer to a set of Parameters (Gluon's `Trainer`).

`step(batch_size)` sums the gradients over the parameters' contexts (a no-op on
one context), then updates every parameter whose gradient `backward` wrote
since the last step, with ``rescale_grad = 1 / batch_size``.

Freshness is read from the parameter array's autograd leaf (`Leaf.fresh`, set
by `backward`), so the stale-gradient check costs one attribute read per array.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Any

from hybridgraph.nd.serialization import atomic_write

from hybridgraph import kvstore as kvs

from . import optimizer as opt
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]

_STALE = ("Gradient of Parameter `{name}` on context {ctx} has not been updated by backward since last `step`. "
          "This could mean a bug in your model that made it only use a subset of the Parameters (Blocks) for "
          "this iteration. If you are intentionally only using a subset, call step with ignore_stale_grad=True "
          "to suppress this warning and skip updating of Parameters with stale gradient")


class Trainer:
    """Applies an `Optimizer` on a set of Parameters. Trainer should be used
    together with `autograd`.

    Parameters
    ----------
    params : ParameterDict, dict or list of Parameter
        The set of parameters to optimize (a dict is taken in sorted key order).
    optimizer : str or Optimizer
        The optimizer to use, by name (``'sgd'``, ``'adam'``, ...) or instance.
    optimizer_params : dict
        Keyword arguments of the optimizer's constructor, e.g. ``{'learning_rate': 0.1}``.
        Must be empty when `optimizer` is an instance.
    kvstore : str, KVStore or None
        How gradients of parameters on several contexts (and workers) are combined:
        ``'device'`` or ``'local'`` sum them over the contexts, ``'dist_sync'`` also over
        the MPI workers (see hybridgraph/kvstore); None leaves each context on its own
        gradient. A string type is ignored on a single context unless it is distributed
        or some weight is row_sparse (which always lives in a kvstore, as in MXNet).
    compression_params : dict
        Gradient compression; only accepted when no reduction happens (one context).
    update_on_kvstore : bool, default None
        MXNet's switch; when it is on (the default on several contexts), the
        separate `allreduce_grads()` / `update()` calls are refused, as in MXNet.

    Properties
    ----------
    learning_rate : float
        The current learning rate of the optimizer.
    """

    def __init__(self, params: Any, optimizer: Any, optimizer_params: dict | None = None,
                 kvstore: Any = "device", compression_params: dict | None = None,
                 update_on_kvstore: bool | None = None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise ValueError(f"First argument must be a list or dict of Parameters, got {type(params)}.")
        self._params: list[Parameter] = []
        self._param2idx: dict[str, int] = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError(f"First argument must be a list or dict of Parameters, got list of {type(param)}.")
            self._param2idx[param.name] = i
            self._params.append(param)
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params if optimizer_params else {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore: Any = None
        self._update_on_kvstore: bool | None = None
        self._distributed = False
        self._params_to_init: list[Parameter] = list(self._params)
        for param in self._params:
            param._set_trainer(self)
        self._contains_sparse_weight = any(p._stype != "default" for p in self._params)
        self._contains_sparse_grad = any(p._grad_stype != "default" for p in self._params)

    def _check_contexts(self) -> list:
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise AssertionError(f"All Parameters must be initialized on the same set of contexts, but Parameter "
                                     f"{param.name} is initialized on {ctx} while previous Parameters are "
                                     f"initialized on {contexts}.")
            contexts = ctx
        return contexts if contexts is not None else []

    def _init_optimizer(self, optimizer: Any, optimizer_params: dict) -> None:
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise AssertionError("optimizer_params must be None if optimizer is an instance of Optimizer "
                                     "instead of str")
            self._optimizer = optimizer
            # not copied: a changed lr_mult / wd_mult of a Parameter takes effect
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    def _reset_kvstore(self) -> None:
        """Forget the kvstore (after parameters were loaded, its copy of them is stale)."""
        if self._kvstore is not None and "dist" in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = False
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self) -> None:
        """Create the kvstore and decide `update_on_kvstore` (MXNet 1.9.1's rules: sparse weights
        always update on a kvstore; sparse gradients update locally unless distributed)."""
        config = self._kvstore_params
        if self._contains_sparse_weight:
            kvstore, update_on_kvstore = kvs.create_for_sparse_weights(config["kvstore"])
            if config["update_on_kvstore"] is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights are present.")
        else:
            kvstore, update_on_kvstore = kvs.create_for_trainer(config["kvstore"], len(self._contexts),
                                                                self._params)
        self._distributed = kvstore is not None and "dist" in kvstore.type
        if self._contains_sparse_grad and not self._contains_sparse_weight:
            update_on_kvstore = self._distributed
            if config["update_on_kvstore"] is False and self._distributed:
                raise ValueError("Cannot set update_on_kvstore=False on dist kvstore when sparse gradients "
                                 "are present.")
            if kvstore is not None and not isinstance(kvstore, kvs.KVStore):
                raise ValueError(f"Cannot use {type(kvstore)} for multi-device training with sparse gradients")
        if config["update_on_kvstore"] is not None and not self._contains_sparse_weight:
            update_on_kvstore = config["update_on_kvstore"]
        if kvstore is not None and update_on_kvstore and not kvstore.is_capable(kvs.KVStoreBase.OPTIMIZER):
            if config["update_on_kvstore"]:
                raise ValueError(f"Please set update_on_kvstore=False when training with {type(kvstore)}")
            update_on_kvstore = False
        if kvstore is not None:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore, self._update_on_kvstore = kvstore, bool(update_on_kvstore)
        else:
            self._kvstore, self._update_on_kvstore = None, None
        self._kv_initialized = True

    def _init_params(self) -> None:
        """Put the initialized parameters into the kvstore: rank 0's values, broadcast to every
        context (and worker); deferred ones wait for their first step."""
        pending = [p for p in self._params_to_init if p._deferred_init and p._data is None]
        ready = [p for p in self._params_to_init if not (p._deferred_init and p._data is None)]
        if self._kvstore is not None and ready:
            for p in ready:   # a sparse weight lives in the store; its contexts pull the rows they use
                if p._stype != "default":
                    self._kvstore.init(self._param2idx[p.name], p._check_and_get(p._data, list)[0])
            ready = [p for p in ready if p._stype == "default"]
            arrays = [p._check_and_get(p._data, list) for p in ready]
            keys = [self._param2idx[p.name] for p in ready]
            if isinstance(self._kvstore, kvs.KVStore) and ready:
                self._kvstore.broadcast(keys, [a[0] for a in arrays], arrays)
            else:
                for key, arrs in zip(keys, arrays):
                    self._kvstore.broadcast(key, arrs[0], arrs)
        self._params_to_init = pending

    def _row_sparse_pull(self, parameter: Parameter, out: Any, row_id: Any, full_idx: bool = False) -> None:
        """Pull the rows `row_id` of a row_sparse parameter from the kvstore into `out` (all rows
        by `pull` when `full_idx` on a non-distributed store)."""
        self._prepare()
        idx = self._param2idx[parameter.name]
        if full_idx and "dist" not in self._kvstore.type:
            assert row_id.size == out.shape[0]
            self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
        else:
            self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _prepare(self) -> None:
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    # -- learning rate / optimizer ---------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        return self._optimizer.learning_rate

    @property
    def optimizer(self) -> opt.Optimizer:
        return self._optimizer

    def set_learning_rate(self, lr: float) -> None:
        """Set a new learning rate of the optimizer."""
        self._optimizer.set_learning_rate(lr)

    # -- steps --------------------------------------------------------------------------------
    def _check_and_rescale_grad(self, scale: float) -> None:
        if self._update_on_kvstore and self._distributed and self._kv_initialized \
                and self._optimizer.rescale_grad != scale:
            raise UserWarning("Possible change in the `batch_size` from previous `step` detected. Optimizer "
                              "gradient normalizing factor will not change w.r.t new batch_size when "
                              "update_on_kvstore=True and when distributed kvstore is used.")
        self._optimizer.rescale_grad = scale

    def step(self, batch_size: float, ignore_stale_grad: bool = False) -> None:
        """Make one step of parameter update: `allreduce_grads()` then `update()`.
        Call it after `autograd.backward()` and outside of `record()`.

        Parameters
        ----------
        batch_size : int
            Gradients are normalized by ``1/batch_size``. Use 1 if the loss is
            already a mean.
        ignore_stale_grad : bool, optional, default=False
            Skip (instead of raising for) Parameters whose gradient `backward` has not
            written since the last step.
        """
        self._check_and_rescale_grad(self._scale / batch_size)
        self._prepare()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self) -> None:
        """Sum each parameter's gradients over its contexts (then call `update`)."""
        self._prepare()
        self._check_not_on_kvstore("allreduce_grads()")
        self._allreduce_grads()

    def _check_not_on_kvstore(self, what: str) -> None:
        if self._kvstore is not None and self._update_on_kvstore:
            raise AssertionError(f"{what} when parameters are updated on kvstore is not supported. Try setting "
                                 "`update_on_kvstore` to False when creating trainer.")

    def _allreduce_grads(self) -> None:
        """Sum the gradients over contexts and workers through the kvstore: one call for all
        parameters (the store buckets them), or per key for a store of the user's own class.
        With `update_on_kvstore` the store also applies the optimizer and returns the weights."""
        kv = self._kvstore
        if kv is None:
            return
        keys, grads, outs = [], [], []
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            if param._grad_stype != "default":   # MXNet: push, then pull dense weights or gradients
                grad_list = param.list_grad()
                kv.push(i, grad_list, priority=-i)
                if param._stype == "default":
                    pull_list = param.list_data() if self._update_on_kvstore else grad_list
                    kv.pull(i, pull_list, priority=-i, ignore_sparse=self._distributed)
                continue
            keys.append(i)
            grads.append(param.list_grad())
            outs.append(param.list_data() if self._update_on_kvstore else None)
        if not keys:
            return
        if isinstance(kv, kvs.KVStore):
            kv.pushpull(keys, grads, out=outs if self._update_on_kvstore else None)
            return
        for i, grad, out in zip(keys, grads, outs):
            kv.pushpull(i, grad, out=out, priority=-i)

    def update(self, batch_size: float, ignore_stale_grad: bool = False) -> None:
        """Make one step of parameter update without reducing gradients first
        (after `allreduce_grads()`, e.g. to clip the reduced gradients in between).

        Parameters
        ----------
        batch_size : int
            Gradients are normalized by ``1/batch_size``.
        ignore_stale_grad : bool, optional, default=False
            Skip Parameters with stale gradients instead of raising.
        """
        self._prepare()
        self._check_not_on_kvstore("update()")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad: bool = False) -> None:
        loss_scaler = getattr(self, "_amp_loss_scaler", None)
        if loss_scaler is not None and loss_scaler.has_overflow(self._params):
            return  # skip on overflow
        batches = self._fresh_batches(ignore_stale_grad)
        for _, _, weights in batches:   # consumed: stale until the next backward
            for leaf in map(_LEAF, weights):
                leaf.fresh = False
        if self._kvstore is not None and self._update_on_kvstore:
            return  # the kvstore applied the optimizer in _allreduce_grads
        for updater, (indices, grads, weights) in zip(self._updaters, batches):
            if indices:
                updater(indices, grads, weights)

    def _fresh_batches(self, ignore_stale_grad: bool) -> list:
        """Per context, ``(indices, grads, weights)`` of the parameters whose gradient `backward`
        wrote since the last step; a stale one raises unless `ignore_stale_grad`, and
        ``grad_req='null'`` parameters are skipped."""
        updates: list[list] = [[] for _ in self._updaters]
        for i, param in enumerate(self._params):
            if param._grad_req == "null":
                continue
            datas = param._data
            if datas is None:
                datas = param._check_and_get(None, list)  # raises the not-initialized error
            for upd, arr, grad in zip(updates, datas, param._grad):
                leaf = arr._ag
                if leaf is not None and leaf.fresh:
                    upd.append((i, grad, arr))
                elif not ignore_stale_grad:
                    raise UserWarning(_STALE.format(name=param.name, ctx=arr.context))
        return [tuple(map(list, zip(*upd))) if upd else ([], [], []) for upd in updates]

    def compile_step(self, net: Any, loss_fn: Any) -> Any:
        """A callable ``step(data, label, batch_size)`` that runs forward, loss, backward and
        this Trainer's update as one compiled graph (bit-identical to the usual record /
        backward / `step` sequence, which it falls back to when the step cannot be
        compiled: see hybrid/compiled_step.py). Returns the loss."""
        from .compiled_step import CompiledStep
        return CompiledStep(self, net, loss_fn)

    # -- states -----------------------------------------------------------------------------------
    def save_states(self, fname: str) -> None:
        """Save the optimizer and its states (e.g. momentum) to `fname`, written atomically, by
        rank 0 only when training on several workers (the states are the same on all).

        The format is MXNet's (a pickle of ``(states, optimizer)``). `optimizer.param_dict`
        (Parameters' lr_mult / wd_mult) is not saved.
        """
        self._prepare()
        if self._update_on_kvstore:
            assert not self._params_to_init, "Cannot save trainer states when some parameters are not yet " \
                                             "initialized in kvstore."
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
            return
        kv = self._kvstore
        if kv is None or kv.rank == 0:
            atomic_write(fname, self._updaters[0].get_states(dump_optimizer=True))
        if kv is not None and hasattr(kv, "barrier"):
            kv.barrier()

    def load_states(self, fname: str) -> None:
        """Load optimizer and states saved by `save_states` (here or by MXNet 1.x), also when
        they were saved with another number of workers or contexts.

        Only optimizers, lr schedulers, arrays and plain data are unpickled.
        """
        self._prepare()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, "rb") as f:
                states = f.read()
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))


_LEAF = attrgetter("_ag")

