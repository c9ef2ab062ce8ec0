"""`mx.onnx`: export to ONNX (MXNet 1.9.1's `export_model`), import from ONNX, and side-by-side verification.

The onnx package is needed only when one of these runs (`pip install 'hybridgraph[onnx]'`);
onnxruntime only for `verify`.
"""
from __future__ import annotations

from hybridgraph.onnx.export import DEFAULT_OPSET, OPSETS, build_model, export_model, get_operator_support
from hybridgraph.onnx.writer import ExportError

__all__ = ["DEFAULT_OPSET", "OPSETS", "ExportError", "build_model", "export_model", "get_operator_support"]
