"""The `hybridgraph` command line (`python -m hybridgraph`): inspect, convert, verify, upgrade, summary.

Exit codes: 0 success; 1 a verification found outputs that differ; 2 bad usage or a file
that cannot be read (the message names the file and what was wrong).
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


class CliError(Exception):
    """A user-facing error: printed as `hybridgraph: error: ...`, exit code 2."""


def _parse_input(text: str) -> tuple[str, tuple[int, ...]]:
    """`data:1x3x224x224` -> ("data", (1, 3, 224, 224))."""
    name, sep, dims = text.rpartition(":")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--input {text!r}: expected NAME:D1xD2x... like data:1x3x224x224")
    try:
        shape = tuple(int(d) for d in dims.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--input {text!r}: dims must be integers joined by 'x'") from None
    if any(d < 1 for d in shape):
        raise argparse.ArgumentTypeError(f"--input {text!r}: dims must be positive")
    return name, shape


def _kind(path: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise CliError(f"{path}: no such file")
    if p.suffix == ".onnx":
        return "onnx"
    if p.suffix == ".json":
        return "symbol"
    if p.suffix == ".params":
        return "params"
    head = p.read_bytes()[:8]
    if head[:1] in (b"{", b" ", b"\n"):
        return "symbol"
    raise CliError(f"{path}: unknown file type (expected -symbol.json, .params or .onnx)")


def _load_symbol(path: str):
    from hybridgraph import symbol
    try:
        return symbol.load(path)
    except Exception as exc:  # noqa: BLE001 - reported to the user with the file name
        raise CliError(f"{path}: not a readable MXNet symbol file: {exc}") from None


def _load_params(path: str) -> dict:
    from hybridgraph import nd
    try:
        params = nd.load(path)
    except Exception as exc:  # noqa: BLE001
        raise CliError(f"{path}: not a readable .params file: {exc}") from None
    return params if isinstance(params, dict) else {f"[{i}]": v for i, v in enumerate(params)}


def _load_onnx(path: str):
    try:
        import onnx
    except ImportError:
        raise CliError("reading .onnx files needs the onnx package: pip install 'hybridgraph[onnx]'") from None
    try:
        return onnx.load(path)
    except Exception as exc:  # noqa: BLE001
        raise CliError(f"{path}: not a readable ONNX model: {exc}") from None


def _histogram(names) -> str:
    counts = collections.Counter(names)
    return "\n".join(f"  {n:32} {c}" for n, c in sorted(counts.items(), key=lambda x: (-x[1], x[0])))


def cmd_inspect(args) -> int:
    kind = _kind(args.file)
    out = []
    if kind == "symbol":
        sym = _load_symbol(args.file)
        nodes = json.loads(sym.tojson())["nodes"]
        out += [f"symbol file {args.file}", f"arguments: {', '.join(sym.list_arguments())}",
                f"auxiliary states: {', '.join(sym.list_auxiliary_states()) or '-'}",
                f"outputs: {', '.join(sym.list_outputs())}", "operators:",
                _histogram(n["op"] for n in nodes if n["op"] != "null")]
    elif kind == "params":
        params = _load_params(args.file)
        count = sum(int(np.prod(v.shape)) for v in params.values())
        size = sum(v.asnumpy().nbytes for v in params.values())
        out += [f"params file {args.file}: {len(params)} arrays, {count:,} values, {size:,} bytes"]
        out += [f"  {k:40} {str(tuple(v.shape)):20} {np.dtype(v.dtype).name}" for k, v in params.items()]
    else:
        from onnx import helper
        m = _load_onnx(args.file)
        init = {t.name for t in m.graph.initializer}

        def desc(v):
            t = v.type.tensor_type
            dims = [d.dim_param or (d.dim_value if d.HasField("dim_value") else "?") for d in t.shape.dim]
            return f"  {v.name:32} {helper.tensor_dtype_to_np_dtype(t.elem_type)} {dims}"
        count = sum(int(np.prod(t.dims)) for t in m.graph.initializer)
        size = sum(len(t.raw_data) for t in m.graph.initializer)
        out += [f"ONNX model {args.file} (opset {', '.join(str(o.version) for o in m.opset_import)}, "
                f"IR {m.ir_version}, producer {m.producer_name or '?'})", "inputs:"]
        out += [desc(v) for v in m.graph.input if v.name not in init]
        out += ["outputs:"] + [desc(v) for v in m.graph.output]
        out += [f"initializers: {len(init)}, {count:,} values, {size:,} bytes", "operators:",
                _histogram(n.op_type for n in m.graph.node)]
    print("\n".join(out))
    return 0


def _inputs(items: list) -> tuple[list[str], list[tuple]]:
    if not items:
        raise CliError("give the shape of each input: --input data:1x3x224x224")
    return [n for n, _ in items], [s for _, s in items]


def _model_inputs(sym, params: dict, names: list[str]) -> list[str]:
    wanted = [n for n in sym.list_inputs() if n not in {k.split(":", 1)[-1] for k in params}]
    extra = [n for n in names if n not in wanted]
    if extra:
        raise CliError(f"--input names {extra} are not inputs of the model; its inputs are {wanted}")
    return wanted


def cmd_convert(args) -> int:
    if args.to != "onnx":
        raise CliError(f"--to {args.to}: only 'onnx' is supported")
    from hybridgraph.onnx import export_model
    sym, params = _load_symbol(args.symbol), _load_params(args.params)
    names, shapes = _inputs(args.input)
    order = _model_inputs(sym, params, names)
    by_name = dict(zip(names, shapes))
    missing = [n for n in order if n not in by_name and not n.endswith("_label")]
    if missing:
        raise CliError(f"missing --input for {missing}")
    shapes = [by_name[n] for n in order if n in by_name]
    out = args.output or str(Path(args.symbol).name).replace("-symbol.json", "").replace(".json", "") + ".onnx"
    dyn = [("batch", *s[1:]) for s in shapes] if args.dynamic_batch else None
    export_model(sym, params, shapes, np.dtype(args.dtype), out, dynamic=args.dynamic_batch,
                 dynamic_input_shapes=dyn, opset_version=args.opset)
    print(f"wrote {out}")
    return 0


def cmd_verify(args) -> int:
    from hybridgraph.onnx import verify
    model = _load_onnx(args.onnx)
    sym, params = _load_symbol(args.symbol), _load_params(args.params)
    init = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(args.seed)
    given = dict(args.input or [])
    feeds = {}
    from onnx import helper
    for v in model.graph.input:
        if v.name in init:
            continue
        t = v.type.tensor_type
        dims = given.get(v.name) or tuple(d.dim_value if d.HasField("dim_value") else 1 for d in t.shape.dim)
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
        feeds[v.name] = rng.uniform(-1, 1, dims).astype(dtype)
    report = verify(model, sym, params, feeds, per_node=args.per_node, rtol=args.rtol, atol=args.atol)
    print(report)
    return 0 if report.ok else 1


def cmd_upgrade(args) -> int:
    from hybridgraph.symbol.json_io import save
    sym = _load_symbol(args.file)
    out = args.output or args.file
    save(sym, out)
    print(f"wrote {out} (MXNet 1.9 JSON)")
    return 0


def cmd_summary(args) -> int:
    from hybridgraph.symbol.viz import print_summary
    sym = _load_symbol(args.file)
    print_summary(sym, shape=dict(args.input) if args.input else None)
    return 0


def cmd_doctor(args) -> int:
    from hybridgraph import doctor
    facts = doctor.gather()
    print(doctor.report(facts))
    if args.gemm:
        print(f"\nfloat32 GEMM {args.size}x{args.size}, fresh process each:")
        for label, cores, rate in doctor.gemm_rates(facts, args.size):
            shown = f"{rate:8.1f} GFLOP/s" if isinstance(rate, float) else rate
            print(f"  {label:<28} kernels {cores:<12} {shown}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hybridgraph", description="Inspect, convert and verify MXNet models; "
                                "check what sets this machine's speed.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("inspect", help="inputs, outputs, op histogram and parameter sizes of a model file")
    s.add_argument("file", help="-symbol.json, .params or .onnx")
    s.set_defaults(fn=cmd_inspect)
    s = sub.add_parser("convert", help="-symbol.json + .params -> ONNX")
    s.add_argument("symbol")
    s.add_argument("params")
    s.add_argument("--to", default="onnx")
    s.add_argument("--input", action="append", type=_parse_input, metavar="NAME:SHAPE", help="e.g. data:1x3x224x224")
    s.add_argument("--dynamic-batch", action="store_true", help="make the first dim of every input symbolic")
    s.add_argument("--opset", type=int, default=17)
    s.add_argument("--dtype", default="float32")
    s.add_argument("-o", "--output")
    s.set_defaults(fn=cmd_convert)
    s = sub.add_parser("verify", help="run an ONNX model in onnxruntime beside the MXNet model in hybridgraph")
    s.add_argument("onnx")
    s.add_argument("symbol")
    s.add_argument("params")
    s.add_argument("--input", action="append", type=_parse_input, metavar="NAME:SHAPE")
    s.add_argument("--per-node", action="store_true", help="also find the first diverging node")
    s.add_argument("--rtol", type=float, default=1e-4)
    s.add_argument("--atol", type=float, default=1e-4)
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(fn=cmd_verify)
    s = sub.add_parser("upgrade", help="re-save a legacy (0.8-1.x) symbol JSON in MXNet 1.9's format")
    s.add_argument("file")
    s.add_argument("-o", "--output")
    s.set_defaults(fn=cmd_upgrade)
    s = sub.add_parser("summary", help="print_summary of a symbol file")
    s.add_argument("file")
    s.add_argument("--input", action="append", type=_parse_input, metavar="NAME:SHAPE")
    s.set_defaults(fn=cmd_summary)
    s = sub.add_parser("doctor", help="what sets this machine's speed (BLAS kernels and threads, the [jit] extra)")
    s.add_argument("--gemm", action="store_true", help="also time a GEMM under each OpenBLAS kernel set")
    s.add_argument("--size", type=int, default=2048, help="the GEMM's size (--gemm)")
    s.set_defaults(fn=cmd_doctor)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except CliError as exc:
        print(f"hybridgraph: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, NotImplementedError, TypeError, KeyError) as exc:
        print(f"hybridgraph: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


def _entry() -> Any:  # console script
    sys.exit(main())
