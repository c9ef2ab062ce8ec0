"""The MXNet 1.9.1 half of the interop tests; run with the MXNet venv's Python.

    python mx_side.py DIR NAME [NAME ...]

For each architecture NAME (see archs.py), in DIR:
- loads hybridgraph's export `hg_NAME-symbol.json` / `hg_NAME-0000.params` with
  `mx.gluon.SymbolBlock.imports`, runs it on `hg_NAME-io.npz['data']` and writes
  the output to `hg_NAME-mx_out.npy`;
- builds NAME with MXNet's gluon (seeded), runs two train-mode batches so BatchNorm
  running stats move, exports it as `mx_NAME` and writes `mx_NAME-io.npz`
  (`data`, `out` = inference-mode output of the hybridized block).
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore")
import mxnet as mx  # noqa: E402
from mxnet.gluon import nn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from archs import INPUT_SHAPES, build  # noqa: E402


def run_hybridgraph_export(folder: Path, name: str) -> None:
    prefix = folder / f"hg_{name}"
    net = mx.gluon.SymbolBlock.imports(f"{prefix}-symbol.json", ["data"], f"{prefix}-0000.params")
    data = np.load(f"{prefix}-io.npz")["data"]
    np.save(f"{prefix}-mx_out.npy", net(mx.nd.array(data)).asnumpy())


def export_mxnet_model(folder: Path, name: str) -> None:
    mx.random.seed(7)
    rng = np.random.default_rng(7)
    net = build(nn, name)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    for _ in range(2):
        batch = mx.nd.array(rng.standard_normal(INPUT_SHAPES[name]).astype(np.float32))
        with mx.autograd.record():
            net(batch)
    data = rng.standard_normal(INPUT_SHAPES[name]).astype(np.float32)
    out = net(mx.nd.array(data)).asnumpy()
    net.export(str(folder / f"mx_{name}"))
    np.savez(folder / f"mx_{name}-io.npz", data=data, out=out)


def main() -> None:
    folder = Path(sys.argv[1])
    for name in sys.argv[2:]:
        run_hybridgraph_export(folder, name)
        export_mxnet_model(folder, name)
    print("ok", mx.__version__)


if __name__ == "__main__":
    main()
