"""Reference files for the model-zoo tests, written by MXNet 1.9.1.

Run with MXNet's venv (``/work/mxvenv/bin/python tests/data/gen_model_zoo_ref.py``).
For every architecture of ``mx.gluon.model_zoo.vision`` (or those given with
``--models``), MXNet builds the model with ``pretrained=False``, sets the
deterministic weights and BatchNorm statistics of ``model_zoo/zoo_cases.py``,
runs it hybridized in predict mode on the deterministic input, and

* into ``--cache`` (default ``$HYBRIDGRAPH_ZOO_CACHE`` or ``~/.cache/hybridgraph-zoo``; large,
  never committed): ``<name>-symbol.json`` / ``<name>-0000.params`` from ``export()``,
  ``<name>.params`` from ``save_parameters()`` and ``<name>-out.npy``, the output;
* unless ``--cache-only``, into ``tests/data/model_zoo/`` (small, committed):
  ``<name>-symbol.json.gz`` (the exported graph), ``params.json.gz`` (structural name,
  full name and shape of every parameter), ``reprs.json.gz`` (the printed model) and
  ``outputs.npz``.

``--run-exported PREFIX --shape N,C,H,W --out FILE.npy`` instead loads
``PREFIX-symbol.json`` / ``PREFIX-0000.params`` (written by hybridgraph) with
``SymbolBlock.imports`` and saves its output on the deterministic input.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "model_zoo"))
from zoo_cases import MODELS, make_input, make_param  # noqa: E402

REF_DIR = os.path.join(HERE, "model_zoo")


def default_cache() -> str:
    return os.environ.get("HYBRIDGRAPH_ZOO_CACHE") or os.path.expanduser("~/.cache/hybridgraph-zoo")


def build(mx, name: str):
    """MXNet's model `name` with the case weights, hybridized, and its output on the case input."""
    from mxnet.gluon.model_zoo import vision
    with mx.name.NameManager():
        net = vision.get_model(name, pretrained=False)
    x = mx.nd.array(make_input(MODELS[name]))
    net.initialize()
    net.hybridize()  # before the first call, so that the graph is composed once (see variable versions)
    net(x)  # finishes deferred initialisation
    for key, p in net._collect_params_with_prefix().items():
        p.set_data(mx.nd.array(make_param(key, p.shape)))
    out = net(x).asnumpy()
    if not np.isfinite(out).all():
        raise RuntimeError(f"{name}: non-finite output")
    return net, out


def write_model(mx, name: str, cache: str, ref: dict | None) -> None:
    net, out = build(mx, name)
    prefix = os.path.join(cache, name)
    net.export(prefix)
    net.save_parameters(prefix + ".params")
    np.save(prefix + "-out.npy", out)
    if ref is None:
        return
    with open(prefix + "-symbol.json", "rb") as src, gzip.GzipFile(
            os.path.join(REF_DIR, name + "-symbol.json.gz"), "wb", mtime=0) as dst:
        shutil.copyfileobj(src, dst)
    ref["params"][name] = [[key, p.name, list(p.shape)] for key, p in net._collect_params_with_prefix().items()]
    ref["outputs"][name] = out
    ref["reprs"][name] = repr(net)
    print(f"{name}: {len(ref['params'][name])} parameters, output {out.shape}, |out| max {abs(out).max():.3g}")


def run_exported(mx, prefix: str, shape: tuple, out_file: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    np.save(out_file, net(mx.nd.array(make_input(shape))).asnumpy())


def _merge_json(file_name: str, new: dict) -> None:
    path = os.path.join(REF_DIR, file_name)
    old = json.load(gzip.open(path, "rt")) if os.path.exists(path) else {}
    old.update(new)
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(json.dumps({k: old[k] for k in MODELS if k in old}, indent=0).encode() + b"\n")


def _merge_refs(ref: dict) -> None:
    """Update (not replace) the committed params.json.gz, reprs.json.gz and outputs.npz with this run's models."""
    _merge_json("params.json.gz", ref["params"])
    _merge_json("reprs.json.gz", ref["reprs"])
    outputs_file = os.path.join(REF_DIR, "outputs.npz")
    outputs = dict(np.load(outputs_file)) if os.path.exists(outputs_file) else {}
    outputs.update(ref["outputs"])
    np.savez_compressed(outputs_file, **{k: outputs[k] for k in MODELS if k in outputs})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    parser.add_argument("--cache", default=default_cache(), help="directory for the large files")
    parser.add_argument("--cache-only", action="store_true", help="do not touch the committed references")
    parser.add_argument("--run-exported", metavar="PREFIX")
    parser.add_argument("--shape")
    parser.add_argument("--out")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import mxnet as mx
    if args.run_exported:
        run_exported(mx, args.run_exported, tuple(int(s) for s in args.shape.split(",")), args.out)
        return
    os.makedirs(args.cache, exist_ok=True)
    ref = None if args.cache_only else {"params": {}, "outputs": {}, "reprs": {}}
    for name in args.models.split(","):
        write_model(mx, name, args.cache, ref)
    if ref is not None:
        _merge_refs(ref)


if __name__ == "__main__":
    main()
