"""Load models that real MXNet 1.9.1 exported, print their summary and top-5 predictions.

    python examples/load_mxnet_model.py                      # golden lenet + a model-zoo MobileNetV2
    python examples/load_mxnet_model.py --quick              # the same (both are small)
    python examples/load_mxnet_model.py --model bn_net --zoo resnet18_v1
    python examples/load_mxnet_model.py --golden /path/to/shared/golden --zoo none

A model exported by MXNet (`net.export(prefix)` there) is two files,
`prefix-symbol.json` and `prefix-0000.params`; `gluon.SymbolBlock.imports`
turns them into a block without any Python class. Two sources are used:

* the golden set written by MXNet 1.9.1 (`--golden`, default
  ../shared/golden beside the repository): graph, weights, an input and the
  output MXNet computed for it (`NAME-io.npz`);
* a model-zoo architecture exported by MXNet (tests/data/model_zoo/, graphs
  only: the pretrained weights are too large to ship). Its weights are
  written here as an ordinary `.params` file from the deterministic recipe
  MXNet's reference run used, so the outputs can be compared with MXNet's.

For each model the script prints `mx.viz.print_summary` (layer table) or
`Block.summary`, the top-5 classes for the input, and how far the output is
from MXNet's.
"""
from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)

ZOO_DIR = REPO / "tests" / "data" / "model_zoo"


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def top5(scores: np.ndarray) -> list[list[int]]:
    """The five best classes of each row, best first."""
    return [list(map(int, np.argsort(-row, kind="stable")[:5])) for row in scores]


def print_top5(scores: np.ndarray) -> list[list[int]]:
    probs = softmax(scores)
    best = top5(scores)
    for i, classes in enumerate(best):
        ranked = ", ".join(f"class {c} ({probs[i, c]:.3f})" for c in classes)
        print(f"   sample {i}: {ranked}")
    return best


def report(net, sym_file: str, x: np.ndarray, reference: np.ndarray, summary: str) -> dict:
    """Summary, top-5 and the difference from MXNet's output for one loaded model."""
    if summary == "viz":
        mx.viz.print_summary(mx.sym.load(sym_file), shape={"data": x.shape})
    else:
        net.summary(mx.nd.array(x))
    scores = net(mx.nd.array(x)).asnumpy()
    print("top-5 predictions:")
    best = print_top5(scores)
    rel_err = float(np.abs(scores - reference).max() / np.abs(reference).max())
    same = best == top5(reference)
    print(f"max difference from MXNet's output: {rel_err:.2e} (relative to its largest value); "
          f"same top-5 as MXNet: {same}")
    return {"shape": scores.shape, "top5": best, "rel_err": rel_err, "same_top5": same}


def load_golden(golden: Path, name: str) -> dict:
    """A golden-set model: MXNet's files, input and output, used as they are."""
    prefix = golden / "mxnet" / name
    sym_file, params_file = f"{prefix}-symbol.json", f"{prefix}-0000.params"
    print(f"\n== {name}: exported by MXNet 1.9.1 ({sym_file})")
    net = mx.gluon.SymbolBlock.imports(sym_file, ["data"], params_file, ctx=mx.cpu())
    io = np.load(f"{prefix}-io.npz")
    return report(net, sym_file, io["data"], io["out0"], summary="viz")


def write_zoo_files(name: str, out_dir: Path) -> tuple[str, str]:
    """MXNet's exported graph of `name`, and a .params file with the reference weights."""
    sys.path.insert(0, str(ZOO_DIR))
    from zoo_cases import make_param  # the deterministic weights of MXNet's reference run
    sym_file = out_dir / f"{name}-symbol.json"
    with gzip.open(ZOO_DIR / f"{name}-symbol.json.gz", "rb") as src, open(sym_file, "wb") as dst:
        shutil.copyfileobj(src, dst)
    with gzip.open(ZOO_DIR / "params.json.gz", "rt") as f:
        params = json.load(f)[name]           # (structural name, exported name, shape)
    aux = set(mx.sym.load(str(sym_file)).list_auxiliary_states())
    arrays = {("aux:" if exported in aux else "arg:") + exported: mx.nd.array(make_param(key, shape))
              for key, exported, shape in params}
    params_file = out_dir / f"{name}-0000.params"
    mx.nd.save(str(params_file), arrays)
    return str(sym_file), str(params_file)


def load_zoo(name: str, out_dir: Path) -> dict:
    sys.path.insert(0, str(ZOO_DIR))
    from zoo_cases import MODELS, make_input
    sym_file, params_file = write_zoo_files(name, out_dir)
    print(f"\n== {name}: model-zoo architecture exported by MXNet 1.9.1 ({sym_file})")
    net = mx.gluon.SymbolBlock.imports(sym_file, ["data"], params_file, ctx=mx.cpu())
    print(f"{len(mx.sym.load(sym_file).get_internals().list_outputs())} graph entries, "
          f"{sum(p.data().size for p in net.collect_params().values()):,} parameters")
    reference = np.load(ZOO_DIR / "outputs.npz")[name]
    return report(net, sym_file, make_input(MODELS[name]), reference, summary="block")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="accepted for symmetry (the models are small)")
    parser.add_argument("--golden", default=str(REPO.parent / "shared" / "golden"),
                        help="the golden set written by MXNet (default: ../shared/golden beside the repo)")
    parser.add_argument("--model", default="lenet", help="a model of GOLDEN/mxnet (lenet, bn_net, ...)")
    parser.add_argument("--zoo", default="mobilenetv2_0.25",
                        help="a model-zoo architecture of tests/data/model_zoo, or 'none'")
    parser.add_argument("--out", default=None, help="folder for the model-zoo files written here")
    args = parser.parse_args(argv)
    results: dict = {}
    golden = Path(args.golden)
    if (golden / "mxnet" / f"{args.model}-symbol.json").is_file():
        results["golden"] = load_golden(golden, args.model)
    else:
        print(f"golden model {args.model!r} not found under {golden}/mxnet: skipped")
    if args.zoo != "none":
        if (ZOO_DIR / f"{args.zoo}-symbol.json.gz").is_file():
            out_dir = Path(args.out or tempfile.mkdtemp(prefix="load-mxnet-model-"))
            out_dir.mkdir(parents=True, exist_ok=True)
            results["zoo"] = load_zoo(args.zoo, out_dir)
        else:
            print(f"model-zoo files for {args.zoo!r} not found in {ZOO_DIR}: skipped")
    return results


if __name__ == "__main__":
    res = main()
    if not res or not all(r["same_top5"] and r["rel_err"] < 1e-4 for r in res.values()):
        sys.exit("no model loaded, or outputs differ from MXNet's")
