"""The MXNet 1.9.1 half of the numpy-mode interop test; run with the MXNet venv's Python.

    python np_mx_side.py DIR

Under `npx.set_np()`: loads hybridgraph's export `hg_np-symbol.json` / `hg_np-0000.params` with
`SymbolBlock.imports`, runs it on `hg_np-io.npz['data']` and writes `hg_np-mx_out.npy`; builds
np_archs' model with MXNet's gluon, exports it as `mx_np` and writes `mx_np-io.npz` (data, out).
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as onp

warnings.filterwarnings("ignore")
import mxnet as mx  # noqa: E402
from mxnet import gluon, np, npx  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from np_archs import INPUT_SHAPE, build  # noqa: E402


def main() -> None:
    folder = Path(sys.argv[1])
    npx.set_np()
    prefix = folder / "hg_np"
    net = gluon.SymbolBlock.imports(f"{prefix}-symbol.json", ["data"], f"{prefix}-0000.params")
    data = onp.load(f"{prefix}-io.npz")["data"]
    onp.save(f"{prefix}-mx_out.npy", net(np.array(data)).asnumpy())

    mx.random.seed(7)
    net = build(gluon)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    data = onp.random.default_rng(7).standard_normal(INPUT_SHAPE).astype(onp.float32)
    out = net(np.array(data)).asnumpy()
    net.export(str(folder / "mx_np"))
    onp.savez(folder / "mx_np-io.npz", data=data, out=out)
    print("ok", mx.__version__)


if __name__ == "__main__":
    main()
