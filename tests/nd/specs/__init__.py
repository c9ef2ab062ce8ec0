"""Per-family operator specs (see tests/op_specs.py); every module here is collected."""
from __future__ import annotations

import importlib
import pkgutil


def all_specs() -> list:
    specs = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        specs.extend(importlib.import_module(f"{__name__}.{info.name}").SPECS)
    return specs
