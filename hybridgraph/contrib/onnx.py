"""`mx.contrib.onnx`: MXNet 1.9.1's older home of the ONNX functions (export, import, import_to_gluon)."""
from __future__ import annotations

from hybridgraph.onnx import export_model, get_operator_support, import_model, import_to_gluon  # noqa: F401

__all__ = ["export_model", "get_operator_support", "import_model", "import_to_gluon"]
