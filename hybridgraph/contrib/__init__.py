"""`mx.contrib`: MXNet 1.9.1's contrib namespace (`mx.contrib.onnx`, `mx.contrib.io`, `mx.contrib.nd`,
`mx.contrib.sym`, `mx.contrib.autograd`, `mx.contrib.amp`, `mx.contrib.text`)."""
from __future__ import annotations

import importlib

# name -> (module, attribute of it or None)
_LAZY = {"onnx": ("hybridgraph.contrib.onnx", None), "io": ("hybridgraph.contrib.io", None),
         "text": ("hybridgraph.contrib.text", None),
         "autograd": ("hybridgraph.contrib.autograd", None), "amp": ("hybridgraph.contrib.amp", None),
         "ndarray": ("hybridgraph.nd", "contrib"), "nd": ("hybridgraph.nd", "contrib"),
         "symbol": ("hybridgraph.symbol", "contrib"), "sym": ("hybridgraph.symbol", "contrib")}


def __getattr__(name: str):
    if name in _LAZY:
        module_name, attr = _LAZY[name]
        value = importlib.import_module(module_name)
        value = getattr(value, attr) if attr else value
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hybridgraph.contrib' has no attribute {name!r}")
