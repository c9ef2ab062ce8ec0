"""Generate tests/data/monitor_names_ref.json: the names MXNet 1.9.1's executor monitor reports
for one node of each operator (read by tests/symbol/test_monitor.py).

MXNet names a node's inputs from the op's FListInputNames (input0, input1, ... when the op has
none), not from its documented arguments, and reports hidden outputs too; this records those
names op by op. Two steps, because the cases come from hybridgraph's operator specs
(tests/nd/specs, hypothesis draws) and the names from real MXNet:

    PYTHONPATH=. /work/main/.venv/bin/python tests/data/gen_monitor_names_ref.py cases /tmp/mon_cases.json
    until /work/main/.mxvenv/bin/python tests/data/gen_monitor_names_ref.py mxnet /tmp/mon_cases.json; do :; done

Ops whose drawn case MXNet cannot bind (shape or type inference fails), or whose kernel aborts
the process on the zero-filled inputs, are left out.
"""
from __future__ import annotations

import json
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "monitor_names_ref.json")
OP_NAMES = "/work/wt/issues/mxnet_1.9.1_op_names.txt"


def graph_json(op: str, attrs: dict, n_inputs: int) -> str:
    """MXNet symbol JSON of one node `node` of `op` over variables in0, in1, ..."""
    nodes = [{"op": "null", "name": f"in{i}", "inputs": []} for i in range(n_inputs)]
    nodes.append({"op": op, "name": "node", "attrs": attrs, "inputs": [[i, 0, 0] for i in range(n_inputs)]})
    return json.dumps({"nodes": nodes, "arg_nodes": list(range(n_inputs)),
                       "node_row_ptr": list(range(n_inputs + 2)), "heads": [[n_inputs, 0, 0]],
                       "attrs": {"mxnet_version": ["int", 10901]}})


def draw_cases(path: str) -> None:
    import numpy as np
    from hypothesis import strategies as st

    from hybridgraph import symbol as sym
    from hybridgraph.nd.registry import get_op
    from hybridgraph.symbol.symbol import create
    from tests.nd.specs import all_specs

    names = set(open(OP_NAMES).read().split())
    cases = {}
    for spec in all_specs():
        if spec.name not in names:
            continue

        @st.composite
        def case(draw, spec=spec):
            return spec.case(draw)
        inputs, attrs = case().example()
        try:
            node = create(get_op(spec.name), [sym.var(f"in{i}") for i in range(len(inputs))], dict(attrs),
                          name="node")
            written = json.loads(node.tojson())["nodes"][-1]
        except Exception:   # noqa: BLE001 - not writable as MXNet JSON (a subgraph op)
            continue
        if any(np.ndim(x) == 0 or 0 in np.shape(x) for x in inputs):
            continue   # simple_bind reads 0 and () as unknown shapes (MXNet's legacy shape semantics)
        cases[spec.name] = {"attrs": written.get("attrs", {}),
                            "shapes": [list(np.shape(x)) for x in inputs],
                            "dtypes": [str(np.asarray(x).dtype) for x in inputs]}
    with open(path, "w") as f:
        json.dump(cases, f)


def record_mxnet(path: str) -> None:
    os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"
    import mxnet as mx
    import numpy as np

    cases = json.load(open(path))
    partial = path + ".partial"   # survives a kernel that aborts the process (ROIAlign on zero boxes)
    ref = json.load(open(partial)) if os.path.exists(partial) else {}
    for op, c in sorted(cases.items()):
        if op in ref:
            continue
        ref[op] = {"crashed": True}
        with open(partial, "w") as f:
            json.dump(ref, f)
        try:
            sym = mx.sym.load_json(graph_json(op, c["attrs"], len(c["shapes"])))
        except mx.base.MXNetError:   # Custom: the op_type is registered in hybridgraph's process only
            del ref[op]
            continue
        shapes = {f"in{i}": tuple(s) for i, s in enumerate(c["shapes"])}
        exe = None
        for as_f32 in (False, True):   # legacy ops take float32 only
            dtypes = [("float32" if as_f32 and np.dtype(d).kind == "f" else d) for d in c["dtypes"]]
            try:
                exe = sym.simple_bind(ctx=mx.cpu(), grad_req="null",
                                      type_dict={f"in{i}": np.dtype(d) for i, d in enumerate(dtypes)}, **shapes)
                break
            except Exception:   # noqa: BLE001 - MXNet's simple_bind raises ValueError or MXNetError
                continue
        if exe is None:
            del ref[op]
            continue
        entry = dict(c, dtypes=dtypes)
        for key, monitor_all in (("all", True), ("out", False)):
            seen = []
            exe.set_monitor_callback(lambda name, arr: seen.append(mx.base.py_str(name)), monitor_all=monitor_all)
            try:
                exe.forward(is_train=False)
                mx.nd.waitall()
                entry["failed"] = False
            except mx.base.MXNetError:
                entry["failed"] = True
            entry[key] = seen
        ref[op] = entry
    ref = {op: e for op, e in ref.items() if "crashed" not in e}
    with open(OUT, "w") as f:
        json.dump(ref, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    {"cases": draw_cases, "mxnet": record_mxnet}[sys.argv[1]](sys.argv[2])
