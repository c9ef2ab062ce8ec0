"""Operator declarations, one module per family; importing this registers them all.

Every module in this package is imported, so a new family file needs no
registration line anywhere else.
"""
from __future__ import annotations

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_info.name}")
