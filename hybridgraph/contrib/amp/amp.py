"""`mx.contrib.amp.amp`: every name raises NotImplementedError (see the package docstring)."""
from __future__ import annotations

from hybridgraph.unsupported import MISSING_MODULES, UnsupportedAttribute, _message


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedAttribute(_message(f"automatic mixed precision (mx.contrib.amp.{name})",
                                        MISSING_MODULES["contrib.amp"]))
