"""Generate the public `nd.X` functions and NDArray methods from the registry."""
from __future__ import annotations

import types

from .dispatch import make_nd_function
from .registry import all_names
from .unsupported_ops import module_getattr

# method names an NDArray gets from the registry (MXNet's fluent methods), when
# the op exists; `reshape`, `astype` and friends are written by hand in ndarray.py
_NOT_FLUENT = {"zeros", "ones", "full", "empty", "arange", "linspace", "eye", "identity"}


def install(namespace: dict, internal: types.ModuleType, array_cls: type, factory=make_nd_function) -> None:
    """Put a function made by `factory(op, name)` for every registered name into
    `namespace` (public names), `internal` (every name, as `nd._internal`), and fluent
    methods on the array class. The symbol front end calls it with its own factory."""
    for name, op in all_names().items():
        fn = factory(op, name)
        setattr(internal, name, fn)
        if name.startswith("_"):
            continue
        namespace.setdefault(name, fn)
        if op.fluent and name.islower() and name not in _NOT_FLUENT and not hasattr(array_cls, name):
            setattr(array_cls, name, _method(fn))


# MXNet's sub-namespaces: `_linalg_gemm2` is also `nd.linalg.gemm2`, `_contrib_X` is `nd.contrib.X`
SUB_NAMESPACES = {"linalg": "_linalg_", "contrib": "_contrib_", "image": "_image_"}


def install_sub_namespaces(parent_name: str, namespace: dict, factory, extra: dict | None = None) -> None:
    """Create `<parent>.linalg`, `<parent>.contrib`, ... modules of prefixed operators."""
    for sub_name, prefix in {**SUB_NAMESPACES, **(extra or {})}.items():
        module = namespace.get(sub_name)
        if module is None:
            module = types.ModuleType(f"{parent_name}.{sub_name}", f"MXNet's {sub_name} operators.")
            namespace[sub_name] = module
        if "__getattr__" not in vars(module):   # an MXNet operator hybridgraph lacks: a clear error
            module.__getattr__ = module_getattr(module.__name__, sub_name)
        for name, op in all_names().items():
            if name.startswith(prefix):
                short = name[len(prefix):]
                if short not in vars(module):
                    setattr(module, short, factory(op, short))


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method
