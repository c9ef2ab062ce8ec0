"""symbol.viz: print_summary prints MXNet's table; plot_network draws the right graph."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from hybridgraph import symbol as sym
from hybridgraph.symbol import viz

DATA = Path(__file__).resolve().parent.parent / "data"


def _tutorial_mlp():
    data = sym.var("data")
    fc1 = sym.FullyConnected(data, name="fc1", num_hidden=128)
    act = sym.Activation(fc1, name="relu1", act_type="relu")
    fc2 = sym.FullyConnected(act, name="fc2", num_hidden=10)
    return sym.SoftmaxOutput(fc2, name="softmax")


def test_print_summary_matches_mxnet_text(capsys):
    viz.print_summary(_tutorial_mlp(), shape={"data": (1, 100)})
    assert capsys.readouterr().out == (DATA / "viz_summary_mlp.txt").read_text()


def test_print_summary_rejects_non_symbols():
    with pytest.raises(TypeError, match="Symbol"):
        viz.print_summary("not a symbol")


def _edges(source: str) -> set:
    """(head, tail) pairs of the DOT source; names are quoted by the built-in writer and bare
    (when they are plain identifiers) by the graphviz package."""
    return set(re.findall(r'"?([\w.]+)"? -> "?([\w.]+)"?', source))


def test_plot_network_nodes_and_edges():
    dot = viz.plot_network(_tutorial_mlp(), shape={"data": (1, 100)})
    src = dot.source
    assert _edges(src) == {("fc1", "data"), ("relu1", "fc1"), ("fc2", "relu1"), ("softmax", "fc2"),
                           ("softmax", "softmax_label")}
    assert "fc1_weight" not in src and "FullyConnected\\n128" in src and "Activation\\nrelu" in src
    assert re.search(r'label="?128"?[ \]]', src)  # shapes on edges


def test_plot_network_can_show_weights_as_edges():
    src = viz.plot_network(_tutorial_mlp(), hide_weights=False).source
    assert ("fc1", "fc1_weight") in _edges(src)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_plot_network_renders_png(tmp_path):
    dot = viz.plot_network(_tutorial_mlp(), save_format="png")
    out = dot.render(filename="mlp", directory=str(tmp_path))
    assert Path(out).read_bytes()[:4] == b"\x89PNG"


def test_plot_network_names_the_repeated_nodes():
    net = sym.FullyConnected(sym.var("data"), name="fc", num_hidden=4)
    net = sym.FullyConnected(sym.Activation(net, act_type="relu", name="relu1"), name="fc", num_hidden=2)
    with pytest.warns(RuntimeWarning, match="Repeated names: fc,fc_bias,fc_weight"):
        viz.plot_network(net, shape={"data": (1, 3)})
