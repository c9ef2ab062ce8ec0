"""Parameters: named, initialisable arrays with gradients (Gluon's Parameter).

A Parameter may start with an unknown shape (0 dims); it is then initialised
on the first forward pass, once shape inference has filled the shape in
(deferred initialisation). While a HybridBlock is being traced, `data()`
returns the parameter's tracer instead of its array.
"""
from __future__ import annotations

import contextvars
import re
import warnings
from collections import OrderedDict
from typing import Any
from collections.abc import Iterable

import numpy as np

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.backend import Context, as_dtype, current_context
from hybridgraph.nd.errors import MXNetError
from hybridgraph.util import is_np_array
from hybridgraph.nd.numpy.multiarray import as_np

from . import initializer

# id(Parameter) -> tracer, set while a HybridBlock is traced
_TRACING: contextvars.ContextVar[dict | None] = contextvars.ContextVar("hybridgraph_param_trace", default=None)


class DeferredInitializationError(MXNetError):
    """A parameter's shape is not known yet; it is initialised on the first forward pass."""


def shape_is_known(shape: tuple | None) -> bool:
    return shape is not None and all(d > 0 for d in shape) if shape is not None else False


class Parameter:
    """A Block's learnable (or constant) array, possibly on several contexts."""

    def __init__(self, name: str, grad_req: str = "write", shape: Any = None, dtype: Any = np.float32,
                 lr_mult: float = 1.0, wd_mult: float = 1.0, init: Any = None,
                 allow_deferred_init: bool = False, differentiable: bool = True,
                 stype: str = "default", grad_stype: str = "default"):
        self.name = name
        self._shape = (shape,) if isinstance(shape, int) else (tuple(shape) if shape is not None else None)
        self.dtype = as_dtype(dtype)
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.init = init
        self.allow_deferred_init = allow_deferred_init
        self._differentiable = differentiable
        self._grad_req = grad_req if differentiable else "null"
        if grad_req not in ("write", "add", "null"):
            raise ValueError(f"grad_req must be one of 'write', 'add', or 'null', but got {grad_req!r}")
        for what, st in (("stype", stype), ("grad_stype", grad_stype)):
            if st not in ("default", "row_sparse", "csr"):
                raise AssertionError(f"{what} for Parameter '{name}' must be one of 'default', 'row_sparse', "
                                     f"or 'csr', but got '{st}'")
        self._stype, self._grad_stype = stype, grad_stype
        self._data: list | None = None
        self._grad: list | None = None
        self._ctx_list: list[Context] | None = None
        self._deferred_init: tuple = ()
        self._var = None
        self._trainer: Any = None  # the Trainer whose kvstore may hold a copy of the value

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # -- shape ------------------------------------------------------------------
    @property
    def shape(self) -> tuple | None:
        return self._shape

    @shape.setter
    def shape(self, new_shape: Any) -> None:
        new_shape = tuple(new_shape) if new_shape is not None else None
        if self._shape is None or new_shape is None:
            self._shape = new_shape
            return
        if len(self._shape) != len(new_shape) or any(
                i != j and i != 0 for i, j in zip(self._shape, new_shape)):
            raise ValueError(f"Expected shape {new_shape} is incompatible with given shape "
                             f"{self._shape} for Parameter {self.name}.")
        self._shape = new_shape

    @property
    def grad_req(self) -> str:
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req not in ("write", "add", "null"):
            raise ValueError(f"grad_req must be one of 'write', 'add', or 'null', but got {req!r}")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if self._data is not None:
            self._init_grad()

    @property
    def stype(self) -> str:
        return self._stype

    # -- initialisation --------------------------------------------------------------
    def initialize(self, init: Any = None, ctx: Any = None, default_init: Any = None,
                   force_reinit: bool = False) -> None:
        """Allocate and fill the data (or defer until the shape is known)."""
        default_init = default_init if default_init is not None else initializer.Uniform()
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        ctx = _ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self._shape):
            if self.allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
                             f"{self._shape}.")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self) -> None:
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        if not shape_is_known(self._shape):
            raise DeferredInitializationError(
                f"Cannot initialize Parameter '{self.name}' because it has invalid shape: {self._shape}. "
                "Please specify in_units, in_channels, etc for `Block`s.")
        self._deferred_init = ()
        with autograd.pause():
            if data is None:
                data = nd.zeros(self._shape, ctx=nd.cpu(), dtype=self.dtype, stype=self._stype)
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {"__init__": init or ""}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data: nd.NDArray, ctx_list: list[Context]) -> None:
        if data.stype != self._stype:
            data = data.tostype(self._stype)
        self._ctx_list = list(ctx_list)
        self._data = _np_mode_arrays([data.copyto(c) if c != data.context else data.copy() for c in self._ctx_list])
        self._init_grad()

    def _init_grad(self) -> None:
        if self._data is None:
            return
        if self._grad_req == "null":
            self._grad = None
            for d in self._data:
                d._ag = None
            return
        self._grad = _np_mode_arrays([nd.zeros(d.shape, ctx=d.context, dtype=d.dtype, stype=self._grad_stype)
                                      for d in self._data])
        for d, g in zip(self._data, self._grad):
            autograd.mark_variables(d, g, self._grad_req)

    # -- access -------------------------------------------------------------------------
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            if ctx is list:
                return list(arr_list)
            for c, a in zip(self._ctx_list, arr_list):
                if c == ctx:
                    return a
            raise RuntimeError(f"Parameter '{self.name}' was not initialized on context {ctx}. It was only "
                               f"initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization was deferred. "
                "Actual initialization happens during the first forward pass. Please pass one batch of data "
                "through the network before accessing Parameters. You can also avoid deferred initialization "
                "by specifying in_units, num_features, etc., for network layers.")
        raise RuntimeError(f"Parameter '{self.name}' has not been initialized. Note that you should initialize "
                           "parameters and create Trainer with Block.collect_params() instead of Block.params "
                           "because the later does not include Parameters of nested child Blocks")

    def data(self, ctx: Context | None = None) -> nd.NDArray:
        """The array on `ctx` (or, while tracing, this parameter's tracer)."""
        tracing = _TRACING.get()
        if tracing is not None and id(self) in tracing:
            return tracing[id(self)]
        if self._stype != "default":
            raise RuntimeError(f"Cannot return a copy of Parameter '{self.name}' on ctx {ctx} via data() because its "
                               f"storage type is {self._stype}. Please use row_sparse_data() instead.")
        return self._check_and_get(self._data, ctx)

    def list_data(self) -> list:
        if self._stype != "default":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all contexts via list_data() "
                               f"because its storage type is {self._stype}. Please use row_sparse_data() instead.")
        return self._check_and_get(self._data, list)

    def row_sparse_data(self, row_id: nd.NDArray) -> nd.NDArray:
        """This row_sparse parameter's array on `row_id`'s context, holding only the rows
        `row_id` (pulled from the Trainer's kvstore, as in MXNet)."""
        return self._get_row_sparse("row_sparse_data", row_id.context, row_id)

    def list_row_sparse_data(self, row_id: nd.NDArray) -> list:
        """`row_sparse_data` on every context, in the order of creation."""
        return self._get_row_sparse("list_row_sparse_data", list, row_id)

    def _get_row_sparse(self, what: str, ctx: Any, row_id: Any) -> Any:
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return a copy of Parameter {self.name} via {what}() because its storage "
                               f"type is {self._stype}. Please use data() instead.")
        if not isinstance(row_id, nd.NDArray):
            raise TypeError(f"row_id must have NDArray type, but {type(row_id)} is given")
        if self._trainer is None:
            raise RuntimeError(f"Cannot get row_sparse data for Parameter '{self.name}' when no Trainer is "
                               "created with it.")
        results = self._check_and_get(self._data, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)
        return results

    def grad(self, ctx: Context | None = None) -> nd.NDArray:
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because grad_req='null'")
        return self._check_and_get(self._grad, ctx)

    def list_grad(self) -> list:
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_ctx(self) -> list:
        if self._data is None:
            if self._deferred_init:
                return list(self._deferred_init[1])
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return list(self._ctx_list)

    def zero_grad(self) -> None:
        if self._grad is None:
            return
        for g in self._grad:
            g[:] = 0

    def set_data(self, data: Any) -> None:
        """Overwrite the value on every context (shape must agree)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
            init, ctx, default_init, _ = self._deferred_init
            self._deferred_init = (init, ctx, default_init,
                                   data if isinstance(data, nd.NDArray) else nd.array(data, dtype=self.dtype))
            return
        trainer = self._trainer
        if trainer is not None and trainer._kv_initialized and trainer._update_on_kvstore \
                and self not in trainer._params_to_init:
            trainer._reset_kvstore()  # the store's copy is stale now, as in MXNet
        for arr in self._data:
            arr[:] = data

    def _reduce(self) -> nd.NDArray:
        """The value to save, on cpu: the average over its contexts; a row_sparse parameter's full
        value is pulled from its Trainer's kvstore (which holds the updated rows), as in MXNet."""
        if self._stype == "default" or self._trainer is None:
            arrays = [a.copyto(nd.cpu()) for a in self._check_and_get(self._data, list)]
            return arrays[0] if len(arrays) == 1 else nd.add_n(*arrays) / len(arrays)  # averaged over contexts
        data = nd.zeros(self.shape, stype=self._stype, ctx=nd.cpu(), dtype=self.dtype)
        self._trainer._row_sparse_pull(self, data, nd.arange(0, self.shape[0], ctx=nd.cpu(), dtype="int64"),
                                       full_idx=True)
        return data

    def _set_trainer(self, trainer: Any) -> None:
        """Remember the Trainer so that `set_data` / `load` can drop its kvstore's copy (a sparse
        parameter lives in one Trainer's kvstore, so a second Trainer is refused, as in MXNet)."""
        if self._stype != "default" and self._trainer is not None and trainer is not None \
                and self._trainer is not trainer:
            raise RuntimeError(f"Failed to set the trainer for Parameter '{self.name}' because it was already set. "
                               f"More than one trainers for a {self._stype} Parameter is not supported.")
        self._trainer = trainer

    def reset_ctx(self, ctx: Any) -> None:
        ctx = _ctx_list(ctx)
        if self._data is not None:
            data = self._data[0]
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter '{self.name}' because it has not been initialized.")

    def cast(self, dtype: Any) -> None:
        self.dtype = as_dtype(dtype)
        if self._data is None:
            return
        with autograd.pause():
            self._data = [d.astype(self.dtype) for d in self._data]
            self._init_grad()

    def var(self):
        """The symbol variable of this parameter (with shape, dtype, lr/wd mults, init)."""
        from hybridgraph import symbol as sym
        if self._var is None:
            self._var = sym.var(self.name, shape=self._shape, dtype=self.dtype, lr_mult=self.lr_mult,
                                wd_mult=self.wd_mult, init=self.init, stype=self._stype)
        return self._var


def _np_mode_arrays(res: Any) -> Any:
    """A parameter initialised in numpy mode (`npx.set_np()`) holds `mx.np.ndarray`s, as in MXNet
    (which decides at initialisation): the new NDArrays become np arrays in place."""
    if is_np_array():
        as_np(res)
    return res


def arrays_on(params: list, ctx: Context) -> list:
    """`[p.data(ctx) for p in params]`, with the common case (not tracing, each parameter on
    the one context `ctx`) taken without a method call per parameter (hybridized calls)."""
    if _TRACING.get() is None:
        out = []
        for p in params:
            data = p._data
            if data is None or len(data) != 1:
                break
            c = p._ctx_list[0]
            if c is not ctx and c != ctx:   # the identity test spares a Context.__eq__ call
                break
            out.append(data[0])
        else:
            return out
    return [p.data(ctx) for p in params]


def _ctx_list(ctx: Any) -> list[Context]:
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    return list(ctx)


class Constant(Parameter):
    """A parameter whose value is fixed (grad_req='null'), initialised from `value`."""

    def __init__(self, name: str, value: Any):
        if not isinstance(value, nd.NDArray):
            value = nd.array(value)
        self.value = value

        class _Init(initializer.Initializer):
            def _init_weight(self, _, arr):
                value.copyto(arr)

            def dumps(self):
                return initializer.Constant(value.asnumpy().tolist()).dumps()
        init_name = f"Constant_{name}_{id(self)}"
        initializer.alias(init_name)(_Init)
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype, init=init_name)

    def __repr__(self) -> str:
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self) -> str:
        return "null"

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req != "null":
            warnings.warn(f"Constant parameter {self.name!r} does not support grad_req other than 'null', "
                          f"and new value {req!r} is ignored.", stacklevel=2)


class ParameterDict:
    """An ordered name -> Parameter mapping with a shared prefix (Gluon's ParameterDict)."""

    def __init__(self, prefix: str = "", shared: "ParameterDict | None" = None):
        self._prefix = prefix
        self._params: OrderedDict[str, Parameter] = OrderedDict()
        self._shared = shared

    def __repr__(self) -> str:
        body = "\n".join(f"  {p!r}" for p in self._params.values())
        return f"{self._prefix} (\n{body}\n)"

    def __getitem__(self, key: str) -> Parameter:
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __contains__(self, key: str) -> bool:
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self) -> str:
        return self._prefix

    def _get_impl(self, name: str) -> Parameter | None:
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name: str, **kwargs: Any) -> Parameter:
        """The parameter `prefix + name`, created with kwargs if it does not exist."""
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            param = Parameter(full, **kwargs)
            self._params[full] = param
            return param
        for k, v in kwargs.items():
            if k == "shape" and v is not None:
                v = (v,) if isinstance(v, int) else tuple(v)
                if param.shape is None or not shape_is_known(param.shape):
                    param.shape = v if param.shape is None else _merge_param_shape(param, v)
                    continue
                if param.shape != v and _merge_param_shape(param, v) != param.shape:
                    raise AssertionError(f"Cannot retrieve Parameter '{full}' because desired attribute does "
                                         f"not match with stored for attribute 'shape': desired '{v}' vs "
                                         f"stored '{param.shape}'.")
            elif hasattr(param, k) and getattr(param, k) is not None and k not in ("init",) and \
                    v is not None and getattr(param, k) != v and k != "dtype":
                raise AssertionError(f"Cannot retrieve Parameter '{full}' because desired attribute does not "
                                     f"match with stored for attribute '{k}': desired '{v}' vs stored "
                                     f"'{getattr(param, k)}'.")
        return param

    def get_constant(self, name: str, value: Any = None) -> Constant:
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{full}'. Please specify value if you want to create a "
                               "new constant.")
            param = Constant(full, value)
            self._params[full] = param
        return param

    def update(self, other: "ParameterDict") -> None:
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise ValueError(f"Cannot update self with other because they have different Parameters "
                                 f"with the same name '{k}'")
            self._params[k] = v

    def initialize(self, init: Any = None, ctx: Any = None, verbose: bool = False,
                   force_reinit: bool = False) -> None:
        init = init if init is not None else initializer.Uniform()
        if verbose:
            init.set_verbosity(verbose=verbose)
        for p in self.values():
            p.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx: Any) -> None:
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self) -> list:
        out = []
        for p in self.values():
            for c in p.list_ctx():
                if c not in out:
                    out.append(c)
        return out

    def setattr(self, name: str, value: Any) -> None:
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename: str, strip_prefix: str = "") -> None:
        from hybridgraph.nd.serialization import save
        arg_dict = {}
        for p in self.values():
            weight = p._reduce() if hasattr(p, "_reduce") else p.data(p.list_ctx()[0]).copyto(nd.cpu())
            if not p.name.startswith(strip_prefix):
                raise ValueError(f"Prefix '{strip_prefix}' is to be striped before saving, but Parameter's "
                                 f"name '{p.name}' does not start with '{strip_prefix}'.")
            arg_dict[p.name[len(strip_prefix):]] = weight
        save(filename, arg_dict)

    def load(self, filename: str, ctx: Any = None, allow_missing: bool = False, ignore_extra: bool = False,
             restore_prefix: str = "", cast_dtype: bool = False, dtype_source: str = "current") -> None:
        loaded = load_param_file(filename)
        arg_dict = {restore_prefix + _strip_arg_aux(k): v for k, v in loaded.items()}
        load_params_into(self._params, arg_dict, filename, ctx, allow_missing, ignore_extra, cast_dtype,
                         dtype_source)

    def select(self, select: str | None) -> "ParameterDict":
        out = ParameterDict(self._prefix)
        pattern = re.compile(select) if select else None
        for k, v in self._params.items():
            if pattern is None or pattern.match(k):
                out._params[k] = v
        return out


def _merge_param_shape(param: Parameter, v: tuple) -> tuple:
    if param.shape is None or len(param.shape) != len(v):
        return v
    return tuple(a if a != 0 else b for a, b in zip(param.shape, v))


def load_param_file(filename: str) -> dict:
    """The name -> NDArray dict of a parameter file; a file saved from a list (no names)
    is refused with the one message every parameter loader gives."""
    from hybridgraph.nd.serialization import load
    loaded = load(filename)
    if isinstance(loaded, list):
        raise MXNetError(f"{filename} holds an unnamed list of {len(loaded)} arrays (saved from a list); "
                         "expected a parameter file saved from a dict of name -> array, as "
                         "save_parameters, export and nd.save(fname, dict) write")
    return loaded


def _strip_arg_aux(key: str) -> str:
    return key[4:] if key.startswith(("arg:", "aux:")) else key


def load_params_into(params: dict, arg_dict: dict, filename: str, ctx: Any, allow_missing: bool,
                     ignore_extra: bool, cast_dtype: bool, dtype_source: str) -> None:
    """Copy loaded arrays into parameters by name, with MXNet's missing/extra rules."""
    if not allow_missing:
        missing = [n for n in params if n not in arg_dict]
        if missing:
            raise AssertionError(f"Parameter '{missing[0]}' is missing in file '{filename}', which contains "
                                 f"parameters: {_brief(arg_dict)}. Please make sure source and target networks "
                                 "have the same prefix.")
    for name, value in arg_dict.items():
        if name not in params:
            if ignore_extra:
                continue
            raise AssertionError(f"Parameter '{name}' loaded from file '{filename}' is not present in "
                                 f"ParameterDict, which contains parameters {_brief(params)}. Set "
                                 "ignore_extra=True to ignore.")
        _load_one(params[name], value, ctx, cast_dtype, dtype_source)


def _load_one(param: Parameter, value: nd.NDArray, ctx: Any, cast_dtype: bool, dtype_source: str) -> None:
    if cast_dtype:
        if dtype_source == "current":
            value = value.astype(param.dtype)
        else:
            param.dtype = value.dtype
    elif value.dtype != param.dtype:
        raise AssertionError(f"Failed loading Parameter '{param.name}' from saved params: dtype incompatible "
                             f"expected {param.dtype} vs saved {value.dtype}. Set cast_dtype=True to cast the "
                             "dtype of saved params.")
    if param.shape is not None and shape_is_known(param.shape) and tuple(param.shape) != value.shape:
        raise AssertionError(f"Failed loading Parameter '{param.name}' from saved params: shape incompatible "
                             f"expected {param.shape} vs saved {value.shape}")
    param.shape = value.shape
    if param._data is None or ctx is not None:
        ctxs = _ctx_list(ctx) if ctx is not None else (
            param._deferred_init[1] if param._deferred_init else [current_context()])
        param._deferred_init = ()
        with autograd.pause():
            param._init_impl(value.as_in_context(ctxs[0]).copy(), ctxs)
    else:
        param.set_data(value)


def _brief(names: Iterable[str]) -> str:
    names = list(names)
    return ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
