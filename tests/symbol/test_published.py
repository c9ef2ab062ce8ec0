"""Published MXNet files (0.8-era through 1.4) run to the outputs MXNet 1.9.1 computed.

../shared/golden/published holds real files from public repositories; derived/
has MXNet 1.9.1's outputs for the published MTCNN weights and for seeded weights
of the RetinaFace (M25) and save_000800 graphs.
"""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph import symbol as sym

CASES = [  # (graph, params, io file, extra inputs)
    ("pangyupo_mtcnn_det1-symbol.json", "pangyupo_mtcnn_det1-0001.params", "mtcnn_det1-io.npz"),
    ("arcface_mtcnn_det1-symbol.json", "pangyupo_mtcnn_det1-0001.params", "mtcnn_det1-io.npz"),
    ("arcface_retinaface_M25-symbol.json", "derived/M25-random-0000.params", "M25-io.npz"),
    ("apache_mxnet_save_000800.json", "derived/save_000800-random-0000.params", "save_000800-io.npz"),
]


def _run(golden, graph_file: str, params_file: str, io_file: str):
    published = golden / "published"
    graph = sym.load(str(published / graph_file))
    loaded = nd.load(str(published / params_file))
    io = np.load(published / "derived" / io_file)
    data = io["data"]
    shapes = {"data": data.shape}
    if "softmax_label" in graph.list_arguments():
        shapes["softmax_label"] = (data.shape[0],)
    exe = graph.simple_bind(nd.cpu(), grad_req="null", **shapes)
    args = {k[4:]: v for k, v in loaded.items() if k.startswith("arg:")}
    aux = {k[4:]: v for k, v in loaded.items() if k.startswith("aux:")}
    exe.copy_params_from(args, aux, allow_extra_params=True)
    outs = exe.forward(is_train=False, data=nd.array(data))
    return outs, io


@pytest.mark.parametrize("graph_file,params_file,io_file", CASES, ids=[c[0] for c in CASES])
def test_published_graph_runs_to_mxnet_outputs(golden, graph_file, params_file, io_file):
    outs, io = _run(golden, graph_file, params_file, io_file)
    wanted = sorted((k for k in io.files if k.startswith("out")), key=lambda k: int(k[3:]))
    assert len(outs) == len(wanted)
    for got, key in zip(outs, wanted):
        want = io[key]
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(want).max()),
                                   err_msg=f"{graph_file} {key}")
