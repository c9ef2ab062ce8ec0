"""Automatic names and attribute scopes (MXNet's NameManager, Prefix, AttrScope).

The current manager and scope live in ContextVars so threads and tasks do not
share counters by accident. As in MXNet, `NameManager.current` and `AttrScope.current`
are class properties, per thread, that may also be assigned
(`NameManager.current = NameManager()` replaces the calling thread's manager only).
"""
from __future__ import annotations

import collections
import contextvars


class _CurrentMeta(type):
    """`cls.current`: a class property over the class's ContextVar `_current_var`; a thread
    that has none yet gets a fresh ``cls._current_default()`` (MXNet's thread-local
    NameManager: each thread counts names from 0)."""

    @property
    def current(cls):
        value = cls._current_var.get()
        if value is None:
            value = cls._current_default()
            cls._current_var.set(value)
        return value

    @current.setter
    def current(cls, value) -> None:
        cls._current_var.set(value)


class _Current:
    """Instances are callable and return themselves, so hybridgraph's older spelling
    `NameManager.current()` keeps working beside MXNet's `NameManager.current`."""

    def __call__(self):
        return self


class NameManager(_Current, metaclass=_CurrentMeta):
    """Gives `<hint><k>` names with one counter per hint (`fullyconnected0`)."""

    def __init__(self):
        self._counter: dict[str, int] = {}
        self._token = None

    def get(self, name: str | None, hint: str) -> str:
        if name:
            return name
        k = self._counter.get(hint, 0)
        self._counter[hint] = k + 1
        return f"{hint}{k}"

    def __enter__(self):
        self._token = _current_nm.set(self)
        return self

    def __exit__(self, *exc):
        _current_nm.reset(self._token)


class Prefix(NameManager):
    """A name manager that prepends a prefix to every name."""

    def __init__(self, prefix: str):
        super().__init__()
        self._prefix = prefix

    def get(self, name: str | None, hint: str) -> str:
        return self._prefix + super().get(name, hint)


_current_nm: contextvars.ContextVar[NameManager | None] = contextvars.ContextVar("hybridgraph_name_manager",
                                                                                 default=None)
NameManager._current_var, NameManager._current_default = _current_nm, NameManager

# MXNet's hidden keys: given as `ctx_group=...`, stored as `__ctx_group__`
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")


class AttrScope(_Current, metaclass=_CurrentMeta):
    """Attributes attached to every symbol created inside the scope.

    `_subgraph_names` counts the control-flow subgraphs made per name (MXNet's class
    attribute of the same name: `unique_subgraph_name` numbers them from it)."""

    _subgraph_names: collections.defaultdict = collections.defaultdict(int)

    def __init__(self, **kwargs: str):
        for v in kwargs.values():
            if not isinstance(v, str):
                raise ValueError("Attributes need to be string")
        self._attr = {(f"__{k}__" if k in HIDDEN_KEYS else k): v for k, v in kwargs.items()}
        self._token = None

    def get(self, attr: dict | None) -> dict:
        if not self._attr:
            return dict(attr or {})
        out = dict(self._attr)
        out.update(attr or {})
        return out

    def __enter__(self):
        parent = _current_scope.get()
        merged = AttrScope()
        merged._attr = {**parent._attr, **self._attr}
        self._token = _current_scope.set(merged)
        return self

    def __exit__(self, *exc):
        _current_scope.reset(self._token)


def unique_subgraph_name(name: str) -> str:
    """`name` numbered by how many subgraphs of that name were made (MXNet's
    `_get_unique_subgraph_name`); inside another subgraph, prefixed by its name and `$`."""
    outer = AttrScope.current()._attr.get("__subgraph_name__", "")
    if outer:
        name = f"{outer}${name}"
    AttrScope._subgraph_names[name] += 1
    return f"{name}{AttrScope._subgraph_names[name] - 1}"


_current_scope: contextvars.ContextVar[AttrScope] = contextvars.ContextVar("hybridgraph_attr_scope",
                                                                           default=AttrScope())  # noqa: B039 - scopes are never mutated in place
AttrScope._current_var, AttrScope._current_default = _current_scope, AttrScope
