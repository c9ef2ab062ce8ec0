"""MXNet's `-symbol.json`: write it as MXNet 1.9.1 does, read it from any MXNet.

Writing (`tojson`, `save`) reproduces MXNet 1.9.1's text byte for byte: the
nodes in DFS post-order from the heads, attributes sorted by key, and the
formatting of dmlc's JSONWriter (see `_JSONWriter`). Reading (`load`,
`load_json`) validates the document before building anything, resolves op
names and aliases through the registry, parses attributes with each
operator's schema (keeping the original strings so round trips are exact),
and upgrades older files the way MXNet 1.9.1's `LoadLegacyJSON` pass does
(`src/nnvm/legacy_json_util.cc`; golden/formats.md section 1.5).

Input entries carry a `version` (MXNet's variable-mutation counter). A loaded
graph keeps the versions of its file (side table `_LOADED_VERSIONS`); graphs
built in-process get them the way MXNet's compose does: every variable input
reads the variable's counter, and every aux (mutable) slot first increments it.

This module is the public face; the writer lives in json_write.py, the reader
and the legacy upgrades in json_read.py.
"""
from __future__ import annotations

from .json_read import MXNET_VERSION, compose_var_init, load, load_json
from .json_write import debug_str, save, tojson

__all__ = ["tojson", "save", "load", "load_json", "debug_str", "compose_var_init", "MXNET_VERSION"]
