"""Block: the base of every Gluon layer and model (nothing symbolic here).

Blocks own Parameters and child Blocks, give them MXNet 1.x names through
name scopes (`hybridsequential0_dense1_weight`), and save/load parameters by
structural path (`0.weight`).
"""
from __future__ import annotations

import contextvars
import threading
import warnings
from collections import OrderedDict
from typing import Any
from collections.abc import Callable

from hybridgraph.symbol.naming import NameManager, Prefix
from hybridgraph.util import is_np_array

from .parameter import Parameter, ParameterDict, load_param_file, load_params_into

_CURRENT_SCOPE: contextvars.ContextVar["_BlockScope | None"] = contextvars.ContextVar(
    "hybridgraph_block_scope", default=None)


class _BlockScope:
    """Names children (`dense0_`, `dense1_`) and symbols inside a Block's scope."""

    def __init__(self, block: "Block"):
        self._block = block
        self._counter: dict[str, int] = {}
        self._tokens: list = []

    @staticmethod
    def create(prefix: str | None, params: ParameterDict | None, hint: str) -> tuple[str, ParameterDict]:
        current = _CURRENT_SCOPE.get()
        if current is None:
            if prefix is None:
                prefix = NameManager.current.get(None, hint) + "_"
            params = ParameterDict(prefix) if params is None else ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self) -> "_BlockScope":
        if self._block._empty_prefix:
            return self
        name_scope = Prefix(self._block.prefix)
        self._tokens.append((_CURRENT_SCOPE.set(self), name_scope))
        name_scope.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._block._empty_prefix:
            return
        token, name_scope = self._tokens.pop()
        name_scope.__exit__(*exc)
        _CURRENT_SCOPE.reset(token)


def _indent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    return "\n".join([lines[0]] + [" " * spaces + ln for ln in lines[1:]])


class HookHandle:
    """Returned by register_forward_(pre_)hook; `detach()` removes the hook."""

    _ids = iter(range(1 << 62))
    _lock = threading.Lock()

    def __init__(self, hooks: OrderedDict, hook: Callable):
        with HookHandle._lock:
            self._id = next(HookHandle._ids)
        self._hooks = hooks
        hooks[self._id] = hook

    def detach(self) -> None:
        self._hooks.pop(self._id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


class Block:
    """Base class for all neural network layers and models (Gluon's Block)."""

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children: OrderedDict[str, Block] = OrderedDict()
        self._reg_params: dict[str, Parameter] = {}
        self._forward_hooks: OrderedDict = OrderedDict()
        self._forward_pre_hooks: OrderedDict = OrderedDict()

    def _alias(self) -> str:
        return self.__class__.__name__.lower()

    def __repr__(self) -> str:
        mods = "\n".join(f"  ({key}): {_indent(repr(block), 2)}" for key, block in self.__dict__.items()
                         if isinstance(block, Block))
        return f"{self.__class__.__name__}(\n{mods}\n)"

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to {type(value)}"
                                "is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise AssertionError(f"Overriding Parameter attribute {name} is not allowed. If you want to "
                                     "share parameters between blocks, please set 'params' at Block "
                                     "construction instead.")
            self._reg_params[name] = value
        super().__setattr__(name, value)

    # -- naming ---------------------------------------------------------------------
    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def name(self) -> str:
        return self._name

    def name_scope(self) -> _BlockScope:
        """Scope under which child blocks and symbols get this block's prefix."""
        return self._scope

    @property
    def params(self) -> ParameterDict:
        """This block's own parameters (children's are in collect_params())."""
        return self._params

    def collect_params(self, select: str | None = None) -> ParameterDict:
        """This block's and its children's parameters, optionally filtered by a regex."""
        _warn_unregistered_blocks(self)
        ret = ParameterDict(self._params.prefix)
        ret.update(self.params.select(select) if select else self.params)
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix: str = "") -> dict[str, Parameter]:
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def register_child(self, block: "Block", name: str | None = None) -> None:
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    # -- parameters ----------------------------------------------------------------------
    def initialize(self, init: Any = None, ctx: Any = None, verbose: bool = False,
                   force_reinit: bool = False) -> None:
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """Save parameters by structural name (`0.weight`), MXNet's save_parameters format."""
        from hybridgraph.nd.serialization import save
        params = self._collect_params_with_prefix()
        if deduplicate:
            seen: dict[int, str] = {}
            params = {k: v for k, v in params.items() if seen.setdefault(id(v), k) == k}
        arrays = {}
        for key, p in params.items():
            if p._data is None:
                raise RuntimeError(f"Parameter '{p.name}' has not been initialized; run a forward pass first")
            arrays[key] = p._reduce()   # a row_sparse one is pulled in full from its Trainer
        save(filename, arrays)

    def load_parameters(self, filename: str, ctx: Any = None, allow_missing: bool = False,
                        ignore_extra: bool = False, cast_dtype: bool = False, dtype_source: str = "current") -> None:
        """Load parameters saved by save_parameters (or by full name, as older files are)."""
        loaded = load_param_file(filename)
        self.load_dict(loaded, ctx, allow_missing, ignore_extra, cast_dtype, dtype_source, filename)

    def save_params(self, filename: str) -> None:
        """[Deprecated] Save parameters by full name without this block's prefix (MXNet 1.x's
        `save_params`); use save_parameters, or export() to load them into a SymbolBlock."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you want load "
                      "from SymbolBlock later, please use export instead.", stacklevel=2)
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(self, filename: str, ctx: Any = None, allow_missing: bool = False,
                    ignore_extra: bool = False) -> None:
        """[Deprecated] load_parameters under its MXNet 1.x name (reads save_params files too)."""
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def load_dict(self, param_dict: dict, ctx: Any = None, allow_missing: bool = False,
                  ignore_extra: bool = False, cast_dtype: bool = False, dtype_source: str = "current",
                  filename: str = "<dict>") -> None:
        params = self._collect_params_with_prefix()
        if not param_dict and not params:
            return
        if not any("." in k for k in param_dict):
            # legacy files use full names, without this block's prefix
            full = {self.prefix + (k[4:] if k.startswith(("arg:", "aux:")) else k): v for k, v in param_dict.items()}
            load_params_into(dict(self.collect_params().items()), full, filename, ctx, allow_missing,
                             ignore_extra, cast_dtype, dtype_source)
            return
        if not allow_missing:
            saved = {id(params[k]) for k in param_dict if k in params}   # a shared parameter is
            for name in params:                                           # saved once (deduplicate)
                if name not in param_dict and id(params[name]) not in saved:
                    raise AssertionError(f"Parameter '{name}' is missing in file '{filename}', which contains "
                                         f"parameters: {', '.join(list(param_dict)[:10])}. Set allow_missing=True "
                                         "to ignore missing parameters.")
        load_params_into(params, {k: v for k, v in param_dict.items() if k in params or not ignore_extra},
                         filename, ctx, True, ignore_extra, cast_dtype, dtype_source)

    def share_parameters(self, shared: dict) -> "Block":
        """Use the given Parameters (by structural name) in place of this block's."""
        if shared is None:
            return self
        for name, param in shared.items():
            self._share_one(name.split("."), param)
        return self

    def _share_one(self, path: list[str], param: Parameter) -> None:
        if len(path) == 1:
            if path[0] in self._reg_params:
                object.__setattr__(self, path[0], param)
                self._reg_params[path[0]] = param
                self._params._params[param.name] = param
            return
        child = self._children.get(path[0])
        if child is not None:
            child._share_one(path[1:], param)

    def cast(self, dtype: Any) -> None:
        for child in self._children.values():
            child.cast(dtype)
        for p in self.params.values():
            p.cast(dtype)

    def zero_grad(self) -> None:
        self.collect_params().zero_grad()

    def reset_ctx(self, ctx: Any) -> None:
        self.collect_params().reset_ctx(ctx)

    def apply(self, fn: Callable[["Block"], Any]) -> "Block":
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    # -- hooks and calling ------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable) -> HookHandle:
        return HookHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook: Callable) -> HookHandle:
        return HookHandle(self._forward_hooks, hook)

    def register_op_hook(self, callback: Callable, monitor_all: bool = False) -> None:
        """Install `callback(name, op_name, array)` on the HybridBlocks below (MXNet 1.9.1):
        it sees every operator output (and with monitor_all every input) of their hybridized
        calls. Names are `str` (MXNet passes bytes: `base.py_str` reads both) and arrays
        NDArrays (MXNet passes raw handles)."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        if is_np_array():   # numpy mode: mx.np arrays out only (MXNet's TypeError)
            from .call_checks import check_np_outputs  # noqa: PLC0415 - call_checks imports the tracer
            check_np_outputs(out)
        return out

    def forward(self, *args: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    def summary(self, *inputs: Any) -> None:
        from .summary import summary
        summary(self, *inputs)


def _holds_block(data: Any, children: set) -> bool:
    if isinstance(data, (list, tuple)):
        return any(_holds_block(x, children) for x in data)
    if isinstance(data, dict):
        return any(_holds_block(x, children) for x in data.values())
    return isinstance(data, Block) and id(data) not in children


def _warn_unregistered_blocks(block: Block) -> None:
    """MXNet's warning for Blocks kept in a plain list/tuple/dict attribute: they are not children,
    so their parameters are not collected, initialized or saved."""
    children = {id(c) for c in block._children.values()}
    for k, v in vars(block).items():
        if isinstance(v, (list, tuple, dict)) and not k.startswith("__") and k != "_children" \
                and _holds_block(v, children):
            warnings.warn(f'"{type(block).__name__}.{k}" is an unregistered container with Blocks. Note that '
                          "Blocks inside the list, tuple or dict will not be registered automatically. Make "
                          "sure to register them using register_child() or switching to "
                          "nn.Sequential/nn.HybridSequential instead.", stacklevel=3)
