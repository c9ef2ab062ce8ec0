"""Write MXNet 1.9.1 reference files for tests/hybrid/test_parameter_block.py.

Run with the MXNet venv:  /work/mxvenv/bin/python tests/data/interop/gen_mx_reference.py

- mx_nested.params: `save_parameters` of archs.nested (structural names, `features.0.weight`),
  after two train-mode batches so the BatchNorm running stats are not the initial ones;
- mx_nested-io.npz: `data` and MXNet's inference output `out` with those parameters;
- mx_text.json: `repr()` and `summary()` text of archs.nested / summary_net / two_output.
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
import warnings
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore")
import mxnet as mx  # noqa: E402
from mxnet.gluon import nn  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from archs import nested, summary_net, two_output  # noqa: E402


def _printed(fn) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn()
    return buf.getvalue()


def main() -> None:
    mx.random.seed(5)
    rng = np.random.default_rng(5)
    net = nested(nn, prefix="nested_")
    net.initialize(mx.init.Xavier())
    for _ in range(2):
        with mx.autograd.record():
            net(mx.nd.array(rng.standard_normal((3, 2, 8, 8)).astype(np.float32)))
    data = rng.standard_normal((2, 2, 8, 8)).astype(np.float32)
    out = net(mx.nd.array(data)).asnumpy()
    net.save_parameters(str(HERE / "mx_nested.params"))
    np.savez(HERE / "mx_nested-io.npz", data=data, out=out)

    text = {"nested_repr": repr(nested(nn, prefix="n_")), "summary_net_repr": repr(summary_net(nn))}
    snet = summary_net(nn)
    snet.initialize()
    text["summary_net_summary"] = _printed(lambda: snet.summary(mx.nd.ones((2, 1, 12, 12))))
    tnet = two_output(nn)
    tnet.initialize()
    text["two_output_repr"] = repr(tnet)
    text["two_output_summary"] = _printed(lambda: tnet.summary(mx.nd.ones((3, 4))))
    (HERE / "mx_text.json").write_text(json.dumps(text, indent=1) + "\n")


if __name__ == "__main__":
    main()
