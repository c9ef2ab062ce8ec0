"""`mx.onnx.verify`: run an exported model in onnxruntime and the symbol in hybridgraph, side by side.

Every graph output is compared (max absolute and relative error); with
`per_node=True` every intermediate tensor the exporter named after an MXNet
entry (export.tensor_name) is compared too, in graph order, and the first node
whose output leaves the tolerance is reported: where a mis-export starts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hybridgraph.onnx.export import load_inputs, tensor_name


@dataclass
class Divergence:
    """One compared tensor: the MXNet node and output, and the errors."""

    node: str
    op: str
    tensor: str
    max_abs: float
    max_rel: float
    ok: bool


@dataclass
class VerifyReport:
    """Per-output errors, and with per_node the first diverging node (None when all agree)."""

    outputs: list[Divergence]
    first_divergence: Divergence | None = None
    nodes_compared: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs) and self.first_divergence is None

    def __str__(self) -> str:
        lines = [f"{'output':30} {'max abs err':>12} {'max rel err':>12}  ok"]
        for o in self.outputs:
            lines.append(f"{o.tensor:30} {o.max_abs:12.3e} {o.max_rel:12.3e}  {'yes' if o.ok else 'NO'}")
        if self.nodes_compared:
            if self.first_divergence is None:
                lines.append(f"all {self.nodes_compared} compared node outputs agree")
            else:
                d = self.first_divergence
                lines.append(f"first diverging node: {d.node} ({d.op}), tensor {d.tensor}: "
                             f"max abs err {d.max_abs:.3e}, max rel err {d.max_rel:.3e}")
        lines.extend(self.notes)
        return "\n".join(lines)


def _compare(node: str, op: str, tensor: str, got: np.ndarray, want: np.ndarray, rtol: float,
             atol: float) -> Divergence:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return Divergence(node, op, tensor, float("inf"), float("inf"), False)
    if got.size == 0:
        return Divergence(node, op, tensor, 0.0, 0.0, True)
    g64, w64 = got.astype(np.float64), want.astype(np.float64)
    diff = np.abs(g64 - w64)
    both_nan = np.isnan(g64) & np.isnan(w64)
    diff[both_nan] = 0.0
    rel = diff / np.maximum(np.abs(w64), 1e-12)
    ok = bool(np.all((diff <= atol + rtol * np.abs(w64)) | both_nan))
    return Divergence(node, op, tensor, float(np.nanmax(diff)), float(np.nanmax(rel)), ok)


def _session(model):
    try:
        import onnxruntime as ort
    except ImportError:
        raise ImportError("verify needs onnxruntime: pip install onnxruntime") from None
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _feeds(model, inputs: Any) -> dict[str, np.ndarray]:
    init = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init]
    if isinstance(inputs, dict):
        missing = [n for n in names if n not in inputs]
        if missing:
            raise ValueError(f"verify: inputs lack {missing}; the model's inputs are {names}")
        arrs = {n: inputs[n] for n in names}
    else:
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(inputs) != len(names):
            raise ValueError(f"verify: got {len(inputs)} inputs, the model has {len(names)}: {names}")
        arrs = dict(zip(names, inputs))
    return {k: v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v) for k, v in arrs.items()}


def _run_hybridgraph(sym, params: dict, feeds: dict) -> list[np.ndarray]:
    from hybridgraph import nd

    args = {k: nd.array(v, dtype=v.dtype) for k, v in {**params, **feeds}.items()}
    arg_names, aux_names = sym.list_arguments(), sym.list_auxiliary_states()
    missing = [n for n in arg_names if n not in args]
    for n in missing:  # a loss's label: unused at inference; zeros of the inferred shape
        shapes, _, _ = sym.infer_shape_partial(**{k: v.shape for k, v in args.items()})
        args[n] = nd.zeros(shapes[arg_names.index(n)] or (1,))
    exe = sym.bind(nd.cpu(), {n: args[n] for n in arg_names}, aux_states={n: args[n] for n in aux_names},
                   grad_req="null")
    return [o.asnumpy() for o in exe.forward(is_train=False)]


def verify(onnx_path: Any, sym: Any, params: Any, inputs: Any, per_node: bool = False, rtol: float = 1e-4,
           atol: float = 1e-4) -> VerifyReport:
    """Run `onnx_path` (a file or ModelProto) in onnxruntime and `sym` with `params` in hybridgraph.

    `inputs`: arrays in the ONNX model's input order, or a dict by input name. Returns a
    VerifyReport (`report.ok`, `print(report)`); with `per_node=True` it also names the first
    node whose output diverges beyond `atol + rtol * |expected|`.
    """
    import onnx

    model = onnx.load(onnx_path) if not isinstance(onnx_path, onnx.ModelProto) else onnx_path
    sym, params = load_inputs(sym, params)
    feeds = _feeds(model, inputs)
    ort_names = [o.name for o in model.graph.output]
    want = _run_hybridgraph(sym, params, feeds)
    got = _session(model).run(None, feeds)
    if len(got) != len(want):
        raise ValueError(f"verify: the ONNX model has {len(got)} outputs, the symbol {len(want)}")
    outs = [_compare("(output)", "", n, g, w, rtol, atol) for n, g, w in zip(ort_names, got, want)]
    report = VerifyReport(outs)
    if per_node:
        _per_node(report, model, sym, params, feeds, rtol, atol)
    return report


def _per_node(report: VerifyReport, model, sym, params: dict, feeds: dict, rtol: float, atol: float) -> None:
    from onnx import helper

    internals = sym.get_internals()
    listed = internals.list_outputs()
    index = {n: i for i, n in enumerate(listed)}
    produced = {o for n in model.graph.node for o in n.output}
    pairs = []  # (MXNet node, internal output name, ONNX tensor), in graph order
    for node in sym._graph().nodes:
        if node.op is None:
            continue
        for name in node.output_names():
            if name in index and tensor_name(name) in produced:
                pairs.append((node, name, tensor_name(name)))
    probe = type(model)()
    probe.CopyFrom(model)  # the caller's model stays as it is
    existing = {o.name for o in probe.graph.output}
    for _, _, t in pairs:
        if t not in existing:
            probe.graph.output.append(helper.ValueInfoProto(name=t))
    names = [o.name for o in probe.graph.output]
    values = dict(zip(names, _session(probe).run(None, feeds)))
    mx_vals = _run_hybridgraph(internals, params, feeds)
    for node, name, t in pairs:
        d = _compare(node.name, node.op.name, t, values[t], mx_vals[index[name]], rtol, atol)
        report.nodes_compared += 1
        if not d.ok:
            report.first_divergence = d
            return
