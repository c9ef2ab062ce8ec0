"""Network pictures and summaries (`mx.viz`): plot_network and print_summary.

`plot_network` returns a `graphviz.Digraph` when the optional graphviz package
is installed, and otherwise a small `Dot` object with the same DOT source that
can be saved, and rendered when Graphviz's `dot` program exists.
"""
from __future__ import annotations

import json
import functools
import os
import re
import shutil
import subprocess
import warnings
from typing import Any

from hybridgraph.nd.atomic import atomic_write

from .symbol import Symbol

_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69", "#fccde5")
_WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean", "_running_var",
                    "_running_mean")


def _dims(text: str) -> list[str]:
    return re.findall(r"\d+", text)


def _output_shapes(symbol: Symbol, shape: dict | None) -> dict | None:
    """Output name -> shape of every internal output, from the given input shapes."""
    if shape is None:
        return None
    internals = symbol.get_internals()
    _, out_shapes, _ = internals.infer_shape(**shape)
    if out_shapes is None:
        raise ValueError("Input shape is incomplete")
    return dict(zip(internals.list_outputs(), out_shapes))


# -- print_summary ------------------------------------------------------------------

def print_summary(symbol: Symbol, shape: dict | None = None, line_length: int = 120,
                  positions: tuple = (.44, .64, .74, 1.)) -> None:
    """Print MXNet's layer table: layer (type), output shape, parameter count, previous layer."""
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be Symbol")
    shapes = _output_shapes(symbol, shape)
    conf = json.loads(symbol.tojson())
    nodes = conf["nodes"]
    # MXNet takes the set of the first head's [node, index, version] numbers, so node 0
    # (usually `data`) counts as a head; mirrored for identical tables
    heads = set(conf["heads"][0])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    print("_" * line_length)
    _print_row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"], positions)
    print("=" * line_length)
    total = 0
    for i, node in enumerate(nodes):
        if node["op"] == "null" and i > 0:
            continue
        out_shape = []
        if shapes is not None and (node["op"] != "null" or i in heads):
            key = node["name"] + "_output" if node["op"] != "null" else node["name"]
            out_shape = list(shapes.get(key, ()))[1:]
        total += _layer_row(node, nodes, heads, shapes, out_shape, positions)
        print(("=" if i == len(nodes) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)


def _print_row(fields: list, positions: list) -> None:
    line = ""
    for i, field in enumerate(fields):
        line += str(field)
        line = line[:positions[i]]
        line += " " * (positions[i] - len(line))
    print(line)


def _layer_row(node: dict, nodes: list, heads: set, shapes: dict | None, out_shape: list,
               positions: list) -> int:
    previous, fan_in = [], 0
    for src, _, _ in node.get("inputs", []):
        inp = nodes[src]
        if inp["op"] != "null" or src in heads:
            previous.append(inp["name"])
            if shapes is not None:
                key = inp["name"] + "_output" if inp["op"] != "null" else inp["name"]
                if key in shapes:
                    fan_in += int(shapes[key][1:][0])
    params = _param_count(node, fan_in, shapes)
    _print_row([f"{node['name']}({node['op']})", "x".join(str(x) for x in out_shape), params,
                previous[0] if previous else ""], positions)
    for name in previous[1:]:
        _print_row(["", "", "", name], positions)
    return params


def _param_count(node: dict, fan_in: int, shapes: dict | None) -> int:
    """MXNet's parameter count of a layer (from its attributes and input width)."""
    op, attrs = node["op"], node.get("attrs", {})
    no_bias = attrs.get("no_bias") == "True"
    if op == "Convolution":
        count = fan_in * int(attrs["num_filter"]) // int(attrs.get("num_group", "1"))
        for k in _dims(attrs["kernel"]):
            count *= int(k)
        return count if no_bias else count + int(attrs["num_filter"])
    if op == "FullyConnected":
        return (fan_in if no_bias else fan_in + 1) * int(attrs["num_hidden"])
    if op == "BatchNorm" and shapes is not None:
        return int(shapes[node["name"] + "_output"][1]) * 2
    if op == "Embedding":
        return int(attrs["input_dim"]) * int(attrs["output_dim"])
    return 0


# -- plot_network -------------------------------------------------------------------

class Dot:
    """A minimal stand-in for graphviz.Digraph: DOT source, save and render."""

    def __init__(self, name: str, format: str = "pdf"):  # noqa: A002 - graphviz's name
        self.name = name
        self.format = format
        self.body: list[str] = []

    @staticmethod
    def _attrs(attrs: dict) -> str:
        return " ".join(f'{k}="{v}"' for k, v in attrs.items())

    def node(self, name: str, label: str | None = None, **attrs: str) -> None:
        if label is not None:
            attrs = {"label": label, **attrs}
        self.body.append(f'\t"{name}" [{self._attrs(attrs)}]')

    def edge(self, tail_name: str, head_name: str, **attrs: str) -> None:
        self.body.append(f'\t"{tail_name}" -> "{head_name}" [{self._attrs(attrs)}]')

    @property
    def source(self) -> str:
        return f'digraph "{self.name}" {{\n' + "\n".join(self.body) + "\n}\n"

    def save(self, filename: str | None = None, directory: str | None = None) -> str:
        path = os.path.join(directory or ".", filename or f"{self.name}.gv")
        atomic_write(path, self.source.encode("utf-8"))
        return path

    def render(self, filename: str | None = None, directory: str | None = None, cleanup: bool = False,
               format: str | None = None) -> str:  # noqa: A002
        """Write the DOT file and run Graphviz's `dot` on it; returns the picture's path."""
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError("rendering needs Graphviz's `dot` program (apt-get install graphviz); "
                               "use .source or .save() for the DOT text")
        src = self.save(filename, directory)
        out = f"{src}.{format or self.format}"
        subprocess.run([dot, f"-T{format or self.format}", "-o", out, src], check=True)
        if cleanup:
            os.remove(src)
        return out


def _node_style(node: dict, base: dict) -> tuple[str, dict]:
    """The label and fill colour MXNet gives a node of each operator type."""
    op, name, attrs = node["op"], node["name"], node.get("attrs", {})
    style = dict(base)
    label = name
    stride = "x".join(_dims(attrs["stride"])) if "stride" in attrs else "1"
    if op == "null":
        style["shape"], style["fillcolor"] = "oval", _COLORS[0]
    elif op == "Convolution":
        label = f"Convolution\\n{'x'.join(_dims(attrs['kernel']))}/{stride}, {attrs['num_filter']}"
        style["fillcolor"] = _COLORS[1]
    elif op == "FullyConnected":
        label, style["fillcolor"] = f"FullyConnected\\n{attrs['num_hidden']}", _COLORS[1]
    elif op == "BatchNorm":
        style["fillcolor"] = _COLORS[3]
    elif op in ("Activation", "LeakyReLU"):
        label, style["fillcolor"] = f"{op}\\n{attrs.get('act_type', '')}", _COLORS[2]
    elif op == "Pooling":
        label = f"Pooling\\n{attrs.get('pool_type', 'max')}, {'x'.join(_dims(attrs.get('kernel', '')))}/{stride}"
        style["fillcolor"] = _COLORS[4]
    elif op in ("Concat", "Flatten", "Reshape"):
        style["fillcolor"] = _COLORS[5]
    elif op == "Softmax":
        style["fillcolor"] = _COLORS[6]
    else:
        style["fillcolor"] = _COLORS[7]
    return label, style


def plot_network(symbol: Symbol, title: str = "plot", save_format: str = "pdf", shape: dict | None = None,
                 dtype: Any = None, node_attrs: dict | None = None, hide_weights: bool = True) -> Any:
    """A Graphviz digraph of the network (graphviz.Digraph if installed, else `Dot`).

    With `shape`, edges are labelled with the shapes flowing along them.
    """
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be a Symbol")
    shapes = _output_shapes(symbol, shape)
    nodes = json.loads(symbol.tojson())["nodes"]
    names = [n["name"] for n in nodes]
    if len(names) != len(set(names)):
        repeated = sorted({n for n in names if names.count(n) > 1})
        warnings.warn("There are multiple variables with the same name in your graph, this may result in "
                      f"cyclic graph. Repeated names: {','.join(repeated)}", RuntimeWarning, stacklevel=2)
    base = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034", "style": "filled",
            **(node_attrs or {})}
    dot = _new_digraph(title, save_format)
    hidden = set()
    for node in nodes:
        if node["op"] == "null" and node["name"].endswith(_WEIGHT_SUFFIXES):
            if hide_weights:
                hidden.add(node["name"])
            continue
        label, style = _node_style(node, base)
        dot.node(name=node["name"], label=label, **style)
    for node in nodes:
        if node["op"] == "null":
            continue
        for src, idx, _ in node["inputs"]:
            inp = nodes[src]
            if inp["name"] in hidden:
                continue
            attrs = {"dir": "back", "arrowtail": "open"}
            if shapes is not None:
                key = inp["name"] if inp["op"] == "null" else f"{inp['name']}_output"
                if key not in shapes:
                    key = f"{key}{idx}"
                if key in shapes:
                    attrs["label"] = "x".join(str(x) for x in shapes[key][1:])
            dot.edge(tail_name=node["name"], head_name=inp["name"], **attrs)
    return dot


def _new_digraph(title: str, save_format: str) -> Any:
    try:
        from graphviz import Digraph  # noqa: PLC0415 - optional dependency
    except ImportError:
        return Dot(title, format=save_format)
    return _atomic_digraph_class(Digraph)(name=title, format=save_format)


@functools.cache
def _atomic_digraph_class(base: type) -> type:
    """graphviz.Digraph whose DOT file (from save() and render()) is written to a temporary
    name and renamed into place, like every file hybridgraph writes: graphviz writes in place,
    so a crash mid-write would leave a torn file."""

    class AtomicDigraph(base):
        def save(self, filename: str | None = None, directory: str | None = None, **_: Any) -> str:
            if filename is not None:
                self.filename = filename
            if directory is not None:
                self.directory = directory
            path = self.filepath
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            atomic_write(path, self.source.encode(self.encoding or "utf-8"))
            return path

    AtomicDigraph.__name__ = AtomicDigraph.__qualname__ = "Digraph"
    return AtomicDigraph
