"""Write plan_memory_ref.json: MXNet 1.9.1's "Total N MB allocated" (Executor.debug_str) for
the golden models, inference (grad_req='null') and training (grad_req='write'), at the
golden input shapes and with the batch scaled up (`SCALED`: MXNet prints whole MB).

Recorded twice: with MXNet's default subgraph backend (MKLDNN fuses FC+relu etc.) and with
MXNET_SUBGRAPH_BACKEND=NONE (the graph as written, comparable to hybridgraph's plan).

Run with MXNet's interpreter from the repository root:
    /work/mxvenv/bin/python tests/data/gen_plan_memory_ref.py
"""
import json
import os
import subprocess
import sys
from pathlib import Path

MODELS = ["sym_mlp", "gluon_mlp", "bn_net", "lenet", "conv_net", "sym_convbn"]
#: the scaled batch per model (large enough for whole MB to mean something)
SCALED = {"sym_mlp": 16384, "gluon_mlp": 16384, "bn_net": 1024, "lenet": 1024, "conv_net": 1024,
          "sym_convbn": 1024}
GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "golden" / "mxnet"
OUT = Path(__file__).resolve().parent / "plan_memory_ref.json"

CHILD = r'''
import json, re, sys
import mxnet as mx, numpy as np
golden, name, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
sym = mx.sym.load(f"{golden}/{name}-symbol.json")
z = np.load(f"{golden}/{name}-io.npz")
shapes = {k: z[k].shape for k in z.files if k in sym.list_arguments()}
if batch:
    shapes = {k: (batch,) + tuple(v[1:]) for k, v in shapes.items()}
res = {"shapes": {k: list(v) for k, v in shapes.items()}}
for req in ("null", "write"):
    exe = sym.simple_bind(mx.cpu(), grad_req=req, **shapes)
    text = exe.debug_str()
    res[req] = int(re.search(r"Total (\d+) MB allocated", text).group(1))
print(json.dumps(res))
'''


def run(name: str, batch: int, backend: str | None) -> dict:
    env = dict(os.environ)
    if backend is not None:
        env["MXNET_SUBGRAPH_BACKEND"] = backend
    out = subprocess.run([sys.executable, "-c", CHILD, str(GOLDEN), name, str(batch)], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    import mxnet as mx
    table = {"mxnet_version": mx.__version__, "unit": "MB (MXNet prints total_bytes >> 20)",
             "models": {}}
    for name in MODELS:
        entry = {}
        for batch in (0, SCALED[name]):
            key = "golden_shapes" if batch == 0 else "scaled"
            entry[key] = {"default": run(name, batch, None), "subgraph_none": run(name, batch, "NONE")}
        table["models"][name] = entry
        print(name, json.dumps(entry))
    OUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
