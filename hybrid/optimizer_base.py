"""The optimizer base class (`mx.optimizer.Optimizer`), its name registry
(`register`, `create`), the in-place calls of the registry's update kernels
and the trivial `Test` optimizer.

Concrete optimizers live in optimizer_sgd.py, optimizer_large_batch.py and
optimizer_adaptive.py; hybrid/optimizer.py gathers them into one namespace.
"""
from __future__ import annotations

import warnings
from operator import attrgetter
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.nd.dispatch import parse_cached
from hybridgraph.nd.kernel import input_context, run_kernel
from hybridgraph.nd.ndarray import NDArray
from hybridgraph.nd.registry import get_op
from hybridgraph.nd.writes import note_write


# -- calling the registry's update kernels --------------------------------------------

_DATA = attrgetter("_data")


class _Kernel:
    """An update operator of the registry, called in place on its weight.

    `run(inputs, attrs)` computes the kernel on `inputs` (weight first) and writes
    the result into the weight (or into `out`). The operator's own state inputs
    (momentum, moments) are updated in place by the kernel itself. This skips the
    front end's argument binding: one attribute parse (memoised) and one kernel.
    """

    __slots__ = ("op",)

    def __init__(self, name: str):
        self.op = get_op(name)

    def __call__(self, inputs: list, attrs: dict, out: NDArray | list | None = None) -> NDArray | list:
        op = self.op
        targets = out if isinstance(out, list) else [inputs[0] if out is None else out]
        # a multi_* op writes every weight in place in one call; a single update kernel writes
        # the new weight straight into it (no copy)
        direct = isinstance(out, list) or targets[0] is inputs[0]
        run_kernel(op, parse_cached(op, attrs), list(map(_DATA, inputs)), input_context(op, inputs).xp,
                   out=list(map(_DATA, targets)), direct=direct)
        return out if isinstance(out, list) else targets[0]


def _kernel(name: str) -> _Kernel:
    return _Kernel(name)


def _zeros(weight: NDArray, dtype: Any = None) -> NDArray:
    return nd.zeros(weight.shape, ctx=weight.context, dtype=weight.dtype if dtype is None else dtype)


def _flatten(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


class ImplUpdates:
    """`update` / `update_multi_precision` for optimizers whose `_update_impl(indices, weights,
    grads, states, multi_precision)` takes one index or lists of them (SGD, LARS, LAMB):
    mixed precision when it is on and the (first) weight is float16."""

    multi_precision: bool

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and first.dtype == np.float16)


class Optimizer:
    """The base class inherited by all optimizers.

    Parameters
    ----------
    rescale_grad : float, optional, default 1.0
        Multiply the gradient with `rescale_grad` before updating. Often
        chosen to be ``1.0/batch_size``.
    param_idx2name : dict from int to string, optional, default None
        A dictionary that maps int index to string name.
    clip_gradient : float, optional, default None
        Clip the gradient by projecting onto the box ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional, default None
        The initial learning rate. If None, the rate of ``lr_scheduler`` is used;
        if that is None too, 0.01.
    lr_scheduler : LRScheduler, optional, default None
        The learning rate scheduler.
    wd : float, optional, default 0.0
        The weight decay (L2 regularization) coefficient.
    sym : Symbol, optional, default None
        The Symbol this optimizer is applying to (its `__lr_mult__` / `__wd_mult__`
        attributes set the multipliers).
    begin_num_update : int, optional, default 0
        The initial number of updates.
    multi_precision : bool, optional, default False
        Keep a float32 master copy of float16 weights and update that.
    param_dict : dict of int -> gluon.Parameter, default None
        Parameter of each index, whose `lr_mult` / `wd_mult` are used. Not deep copied.

    Properties
    ----------
    learning_rate : float
        The current learning rate of the optimizer.
    """

    opt_registry: dict[str, type] = {}
    # parameter-name endings that keep weight decay by default (set_wd_mult)
    _decayed_suffixes: tuple[str, ...] = ("_weight", "_gamma")

    def __init__(self, rescale_grad: float = 1., param_idx2name: dict | None = None, wd: float = 0.,
                 clip_gradient: float | None = None, learning_rate: float | None = None,
                 lr_scheduler: Any = None, sym: Any = None, begin_num_update: int = 0,
                 multi_precision: bool = False, param_dict: dict | None = None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None \
                and self.lr_scheduler.base_lr != learning_rate:
            print(UserWarning("learning rate from ``lr_scheduler`` has been overwritten by "
                              "``learning_rate`` in optimizer."))
            self.lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult: dict = {}
        self.wd_mult: dict = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts: dict = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError("param_idx2name should be a dict of param indexes to names.")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = False
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry ---------------------------------------------------------------------
    @staticmethod
    def register(klass: type) -> type:
        """Register an optimizer class under its lower-cased name (`@mx.optimizer.register`)."""
        if not isinstance(klass, type):
            raise TypeError(f"register expects a class, got {klass!r}")
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is overriding existing "
                          f"optimizer {old.__module__}.{old.__name__}", stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> "Optimizer":
        """Instantiate a registered optimizer by (case-insensitive) name."""
        if name.lower() in Optimizer.opt_registry:
            return Optimizer.opt_registry[name.lower()](**kwargs)
        raise ValueError(f"Cannot find optimizer {name}")

    # -- learning rate ------------------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr: float) -> None:
        """Set a new learning rate (only when there is no lr_scheduler)."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of the optimizer "
                              "only when the LRScheduler of the optimizer is undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale: dict) -> None:  # noqa: ARG002 - MXNet's deprecated API
        """[DEPRECATED] Sets lr scale. Use set_lr_mult instead."""
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult: dict) -> None:
        """Set a learning rate multiplier per parameter name (or index)."""
        self.lr_mult = self._symbol_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Set a weight decay multiplier per parameter name (or index).

        Names from `param_idx2name` that end in none of `_decayed_suffixes`
        (``_weight`` and ``_gamma``; LARS: ``_weight`` only) get 0 (no weight
        decay on biases), as in MXNet.
        """
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith(self._decayed_suffixes)}
        self.wd_mult.update(self._symbol_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _symbol_mults(self, key: str) -> dict:
        """The multipliers the symbol's arguments carry in attribute `key` (``__lr_mult__``/``__wd_mult__``)."""
        if not self.sym_info:
            return {}
        attr, arg_names = self.sym_info
        return {name: float(attr[name][key]) for name in arg_names if name in attr and key in attr[name]}

    # -- bookkeeping -----------------------------------------------------------------------
    def _set_current_context(self, device_id: int) -> None:
        """Switch the per-device update counters."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index: Any) -> None:
        """Count one more update of `index` (an index or a list of them)."""
        counts = self._index_update_count
        for idx in (index if isinstance(index, (list, tuple)) else (index,)):
            n = counts.get(idx, self.begin_num_update) + 1
            counts[idx] = n
            self.num_update = max(self.num_update, n)

    def _begin_update(self, index: Any) -> tuple:
        """Count one more update of `index`; its (lr, wd, update count) for this step."""
        self._update_count(index)
        return self._get_lr(index), self._get_wd(index), self._index_update_count[index]

    def _get_lrs(self, indices: list) -> list:
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        return self._scaled_lrs(lr, indices)

    def _scaled_lrs(self, lr: float, indices: list) -> list:
        """`lr` times each index's multiplier (Parameter.lr_mult, set_lr_mult, or by name)."""
        return self._scaled(lr, indices, "lr_mult", self.lr_mult)

    def _scaled(self, base: float, indices: list, attr: str, table: dict) -> list:
        """`base` times each index's multiplier: the Parameter's `attr` (param_dict), else the
        `table` entry by index, else by the index's name."""
        out = [base] * len(indices)
        params, names = self.param_dict, self.idx2name
        for i, index in enumerate(indices):
            if index in params:
                out[i] *= getattr(params[index], attr)
            elif index in table:
                out[i] *= table[index]
            elif index in names:
                out[i] *= table.get(names[index], 1.0)
        return out

    def _get_lr(self, index: Any) -> float:
        return self._get_lrs([index])[0]

    def _get_wds(self, indices: list) -> list:
        return self._scaled(self.wd, indices, "wd_mult", self.wd_mult)

    def _get_wd(self, index: Any) -> float:
        return self._get_wds([index])[0]

    # -- states and updates ----------------------------------------------------------------
    def create_state(self, index: Any, weight: NDArray) -> Any:
        """Create the auxiliary state (e.g. momentum) of one weight; None when there is none."""
        return None

    def create_state_multi_precision(self, index: Any, weight: NDArray) -> Any:
        """Like `create_state`, plus a float32 master copy of a float16 weight when
        `multi_precision` is on: returns ``(weight32, state)``."""
        if self.multi_precision and weight.dtype == np.float16:
            weight_master_copy = weight.astype(np.float32)
            return (weight_master_copy, self.create_state(index, weight_master_copy))
        if weight.dtype == np.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                          "convergence. Consider using multi_precision=True option of the optimizer",
                          stacklevel=2)
        return self.create_state(index, weight)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """Update `weight` in place from `grad` and `state`."""
        raise NotImplementedError()

    def update_multi_precision(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """`update`, run on the float32 master copy when the weight is float16 and
        `multi_precision` is on."""
        if self.multi_precision and weight.dtype == np.float16:
            weight_master_copy, original_state = state
            self.update(index, weight_master_copy, grad.astype(np.float32), original_state)
            weight._data[...] = weight_master_copy._data.astype(weight.dtype)
            note_write(weight._data)
        else:
            self.update(index, weight, grad, state)

    # -- pickling (Trainer.save_states) -------------------------------------------------------
    def __getstate__(self) -> dict:
        ret = self.__dict__.copy()
        del ret["param_dict"]  # set again by the trainer that loads it
        return ret

    def __setstate__(self, state: dict) -> None:
        self.__dict__ = state
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer


def _common_kwargs(opt: Optimizer, clip_name: str = "clip_gradient") -> dict:
    """`rescale_grad`, plus the clip bound when set (MXNet tests it for truth)."""
    kwargs = {"rescale_grad": opt.rescale_grad}
    if opt.clip_gradient:
        kwargs[clip_name] = opt.clip_gradient
    return kwargs


def _clip_grad(opt: Optimizer, grad: NDArray) -> NDArray:
    """``clip(grad * rescale_grad)`` with MXNet's `is not None` test of the Python optimizers."""
    grad = grad * opt.rescale_grad
    if opt.clip_gradient is not None:
        grad = nd.clip(grad, -opt.clip_gradient, opt.clip_gradient)
    return grad


@register
class Test(Optimizer):
    """The Test optimizer: ``weight += rescale_grad * grad``; the state copies the weight."""

    def create_state(self, index: Any, weight: NDArray) -> NDArray:
        return nd.zeros(weight.shape, ctx=weight.context)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        weight[:] += grad * self.rescale_grad
        state[:] = weight
