"""Writing MXNet's `-symbol.json` (`tojson`, `save`) byte for byte as MXNet
1.9.1 does, and `debug_str`: nodes in DFS post-order from the heads,
attributes sorted by key, and the formatting of dmlc's JSONWriter (see
`_JSONWriter`). Input-entry versions come from the loader's side table
(json_read.py) or, for graphs built in-process, from MXNet's compose rule.
"""
from __future__ import annotations

import os
from typing import Sequence

from hybridgraph.nd.atomic import atomic_write

from .graph import Node, topo_sort
from .json_read import MXNET_VERSION, _LOADED_VERSIONS
from .symbol import Symbol

_AMP_CAST_OPS = ("amp_cast", "amp_multicast")


# =============================================================================
# writing
# =============================================================================


def _escape(s: str) -> str:
    """A JSON string as dmlc's JSONWriter::WriteString writes it (only `\\r \\n \\\\ \\t "`
    are escaped; other characters, non-ASCII included, are written as they are)."""
    out = s.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n")
    return '"' + out.replace("\t", "\\t") + '"'


class _JSONWriter:
    """dmlc::JSONWriter: every scope (object or array) is one-line or multi-line;
    items are separated by `", "`, and in a multi-line scope each item starts on a
    new line indented by two spaces per open scope."""

    def __init__(self):
        self._out: list[str] = []
        self._scopes: list[list] = []  # [multi_line, item count]

    def text(self) -> str:
        return "".join(self._out)

    def _newline(self) -> None:
        if not self._scopes or self._scopes[-1][0]:
            self._out.append("\n" + "  " * len(self._scopes))

    def begin(self, bracket: str, multi_line: bool) -> None:
        self._out.append(bracket)
        self._scopes.append([multi_line, 0])

    def end(self, bracket: str) -> None:
        multi_line, count = self._scopes.pop()
        if multi_line and count:
            self._newline()
        self._out.append(bracket)

    def _next(self) -> None:
        scope = self._scopes[-1]
        if scope[1]:
            self._out.append(", ")
        scope[1] += 1
        self._newline()

    def key(self, key: str) -> None:
        self._next()
        self._out.append(_escape(key) + ": ")

    def item(self) -> None:
        self._next()

    def raw(self, token: str) -> None:
        self._out.append(token)

    def string(self, s: str) -> None:
        self._out.append(_escape(s))

    def int_array(self, values: Sequence[int]) -> None:
        """A vector of ints (or of the POD entry triples): multi-line above 10 items."""
        self.begin("[", len(values) > 10)
        for v in values:
            self.item()
            self.raw(str(v))
        self.end("]")

    def entry_array(self, entries: Sequence[tuple]) -> None:
        self.begin("[", len(entries) > 10)
        for e in entries:
            self.item()
            self.raw("[" + ", ".join(str(x) for x in e) + "]")
        self.end("]")


def _sorted_attrs(attrs: dict) -> list[tuple[str, str]]:
    """MXNet copies attributes into a std::map: sorted by the bytes of the key."""
    return sorted(((str(k), str(v)) for k, v in attrs.items()), key=lambda kv: kv[0].encode("utf-8"))


def _mutable_positions(node: Node) -> tuple:
    """Input slots the node's op mutates (MXNet's FMutateInputs: the aux states)."""
    if node.op is None:
        return ()
    positions = set(node.aux_input_positions())
    return tuple(sorted(p for p in positions if p < len(node.inputs)))


def _entry_versions(nodes: Sequence[Node]) -> dict[int, tuple]:
    """id(node) -> version of each input entry (see the module docstring)."""
    counter: dict[int, int] = {}
    out: dict[int, tuple] = {}
    for n in nodes:
        if n.op is None:
            continue
        stored = _LOADED_VERSIONS.get(n)
        if stored is not None and len(stored) == len(n.inputs):
            out[id(n)] = stored
            continue
        versions = [counter.get(id(src), 0) if src.op is None else 0 for src, _ in n.inputs]
        for pos in _mutable_positions(n):
            src = n.inputs[pos][0]
            if src.op is None:
                counter[id(src)] = counter.get(id(src), 0) + 1
                versions[pos] = counter[id(src)]
        out[id(n)] = tuple(versions)
    return out


def _without_amp_cast(outputs: list) -> list:
    """MXNet's RemoveAmpCast pass: op inputs read through amp_cast / amp_multicast
    read their sources instead. Heads stay as they are; the graph is copied."""
    nodes = topo_sort(outputs)
    if not any(n.op is not None and n.op.name in _AMP_CAST_OPS for n in nodes):
        return outputs
    new: dict[int, Node] = {}

    def source(entry):
        src, idx = entry
        node = new[id(src)]
        if node.op is not None and node.op.name == "amp_cast":
            return node.inputs[0]
        if node.op is not None and node.op.name == "amp_multicast":
            return node.inputs[idx]
        return (node, idx)

    for n in nodes:
        if n.op is None:
            new[id(n)] = n
            continue
        copy = Node(n.op, n.name, n.attrs, [source(e) for e in n.inputs], n.var_attrs)
        copy.control_deps = tuple(new[id(c)] for c in n.control_deps)
        copy.subgraphs = n.subgraphs
        new[id(n)] = copy
    return [(new[id(n)], i) for n, i in outputs]


def _write_graph(w: _JSONWriter, outputs: Sequence[tuple], with_version: bool) -> None:
    """One JSONGraph (the top-level document or a control-flow subgraph)."""
    nodes = topo_sort(outputs)
    nid = {id(n): i for i, n in enumerate(nodes)}
    versions = _entry_versions(nodes)
    row_ptr = [0]
    for n in nodes:
        row_ptr.append(row_ptr[-1] + n.num_outputs())
    w.begin("{", True)
    w.key("nodes")
    w.begin("[", True)  # a vector of objects is always multi-line
    for n in nodes:
        w.item()
        _write_node(w, n, nid, versions.get(id(n), ()))
    w.end("]")
    w.key("arg_nodes")
    w.int_array([i for i, n in enumerate(nodes) if n.op is None])
    w.key("node_row_ptr")
    w.int_array(row_ptr)
    w.key("heads")
    w.entry_array([(nid[id(n)], idx, 0) for n, idx in outputs])
    if with_version:
        from hybridgraph.util import is_np_shape  # noqa: PLC0415 - symbol sits above nd
        np_shape = is_np_shape()   # MXNet marks graphs saved with numpy shape semantics on
        w.key("attrs")
        w.begin("{", np_shape)  # dmlc's writer breaks lines in a map of more than one entry
        if np_shape:  # MXNet marks graphs written under np_shape (0 = a zero-size dimension)
            w.key("is_np_shape")
            w.raw('["int", 1]')
        w.key("mxnet_version")
        w.raw(f'["int", {MXNET_VERSION}]')
        w.end("}")
    w.end("}")


def _write_node(w: _JSONWriter, n: Node, nid: dict, versions: tuple) -> None:
    if n.op is not None and n.op.name == "_while_loop":   # symbol/loop_op.py: its body is not in the node
        raise NotImplementedError(
            f"node {n.name!r}: a symbolic contrib.while_loop cannot be written as MXNet JSON (MXNet's "
            "_while_loop subgraph format is not supported); export the model without the loop, or "
            "unroll it in Python (a for loop over the steps) before export")
    w.begin("{", True)
    w.key("op")
    w.string(n.op_name)
    w.key("name")
    w.string(n.name)
    attrs = _sorted_attrs(n.attr_strings())
    if n.op is None and attrs:
        attrs = _np_shape_unknowns(attrs)
    if attrs:
        w.key("attrs")
        w.begin("{", len(attrs) > 1)
        for k, v in attrs:
            w.key(k)
            w.string(v)
        w.end("}")
    w.key("inputs")
    w.entry_array([(nid[id(src)], idx, versions[i] if i < len(versions) else 0)
                   for i, (src, idx) in enumerate(n.inputs)])
    if n.control_deps:
        w.key("control_deps")
        w.int_array([nid[id(c)] for c in n.control_deps])
    if n.subgraphs:
        w.key("subgraphs")
        w.begin("[", True)
        for sub in n.subgraphs:
            w.item()
            _write_graph(w, sub._outputs, with_version=False)
        w.end("]")
    w.end("}")


def _np_shape_unknowns(attrs: list) -> list:
    """Under numpy shape semantics MXNet writes a variable's unknown dimensions as -1, not 0."""
    from hybridgraph.util import is_np_shape  # noqa: PLC0415 - symbol sits above nd
    if not is_np_shape():
        return attrs
    out = []
    for k, v in attrs:
        if k == "__shape__" and v.startswith("("):
            dims = [d.strip() for d in v.strip("()").split(",") if d.strip()]
            v = "(" + ", ".join("-1" if d == "0" else d for d in dims) + ("," if len(dims) == 1 else "") + ")"
        out.append((k, v))
    return out


def tojson(sym: Symbol, remove_amp_cast: bool = True) -> str:
    """The graph as MXNet 1.9.1's `Symbol.tojson()` writes it (byte-identical)."""
    if not isinstance(sym, Symbol):
        raise TypeError(f"tojson expects a Symbol, got {type(sym).__name__}")
    outputs = _without_amp_cast(sym._outputs) if remove_amp_cast else sym._outputs
    w = _JSONWriter()
    _write_graph(w, outputs, with_version=True)
    return w.text()


def save(sym: Symbol, fname: str | os.PathLike, remove_amp_cast: bool = True) -> None:
    """Write `tojson(sym)` to `fname` atomically (nd/atomic.py), so a crash never
    leaves a half-written file."""
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError("fname need to be string")
    atomic_write(fname, tojson(sym, remove_amp_cast).encode("utf-8"))


def debug_str(sym: Symbol) -> str:
    """MXNet's `Symbol.debug_str()` (nnvm `Symbol::Print`): outputs, then every node in
    DFS post-order with its inputs (variable inputs with their version), sorted
    attributes and control dependencies."""
    outputs = sym._outputs
    if len(outputs) == 1 and not outputs[0][0].inputs and not outputs[0][0].control_deps:
        n = outputs[0][0]
        return f"Variable:{n.name}\n" if n.op is None else f"AtomicFunctor  Op:{n.op.name}\n"
    lines = ["Symbol Outputs:"]
    lines += [f"\toutput[{i}]={n.name}({idx})" for i, (n, idx) in enumerate(outputs)]
    nodes = topo_sort(outputs)
    versions = _entry_versions(nodes)
    for n in nodes:
        if n.op is None:
            lines.append(f"Variable:{n.name}")
            continue
        lines += ["--------------------", f"Op:{n.op.name}, Name={n.name}", "Inputs:"]
        vs = versions.get(id(n), ())
        for i, (src, idx) in enumerate(n.inputs):
            line = f"\targ[{i}]={src.name}({idx})"
            if src.op is None:
                line += f" version={vs[i] if i < len(vs) else 0}"
            lines.append(line)
        attrs = _sorted_attrs(n.attr_strings())
        if attrs:
            lines.append("Attrs:")
            lines += [f"\t{k}={v}" for k, v in attrs]
        if n.control_deps:
            lines.append("Control deps:")
            lines += [f"\tcdep[{i}]={c.name}" for i, c in enumerate(n.control_deps)]
    return "\n".join(lines) + "\n"
