"""`mx.onnx`: export to ONNX (MXNet 1.9.1's `export_model`), import from ONNX, and side-by-side verification.

The onnx package is needed only when one of these runs (`pip install 'hybridgraph[onnx]'`);
onnxruntime only for `verify`.
"""
from __future__ import annotations

from hybridgraph.onnx.export import DEFAULT_OPSET, OPSETS, build_model, export_model, get_operator_support
from hybridgraph.onnx.writer import ExportError

__all__ = ["DEFAULT_OPSET", "OPSETS", "ExportError", "build_model", "export_model", "get_operator_support",
           "import_model", "import_to_gluon", "verify"]


def import_model(model_file):
    """(sym, arg_params, aux_params) of an ONNX file (see hybridgraph.onnx.importer)."""
    from hybridgraph.onnx.importer import import_model as _import
    return _import(model_file)


def import_to_gluon(model_file, ctx=None):
    """A gluon SymbolBlock of an ONNX file, parameters loaded."""
    from hybridgraph.onnx.importer import import_to_gluon as _import
    return _import(model_file, ctx)


def verify(onnx_path, sym, params, inputs, per_node=False, rtol=1e-4, atol=1e-4):
    """Run the ONNX model in onnxruntime and the symbol in hybridgraph (see hybridgraph.onnx.verification)."""
    from hybridgraph.onnx.verification import verify as _verify
    return _verify(onnx_path, sym, params, inputs, per_node, rtol, atol)
