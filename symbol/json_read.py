"""Reading MXNet's `-symbol.json` (`load`, `load_json`), from any MXNet version.

The document is validated into plain records before anything is built; op
names and aliases resolve through the registry; attributes are parsed with
each operator's schema (keeping the original strings so round trips are
exact); older files are upgraded the way MXNet 1.9.1's `LoadLegacyJSON` pass
does (`src/nnvm/legacy_json_util.cc`; golden/formats.md section 1.5). A loaded
graph keeps the input versions of its file in the side table
`_LOADED_VERSIONS`, which the writer (json_write.py) reads back.
"""
from __future__ import annotations

import json
import os
import weakref
from dataclasses import dataclass, field
from typing import Any, Sequence

from hybridgraph.nd.attrs import Attrs, parse_int
from hybridgraph.nd.errors import AttrError, FormatError, MXNetError, OperatorNotFound
from hybridgraph.nd.unsupported_ops import unsupported_reason
from hybridgraph.nd.registry import OpDef, get_op, has_op

from .graph import Node
from .naming import HIDDEN_KEYS
from .symbol import Symbol


#: the version 1.9.1 writes into `attrs.mxnet_version` (major*10000 + minor*100 + patch)
MXNET_VERSION = 10901
_V0_9_0, _V0_9_4, _V0_9_5 = 900, 904, 905
_LEGACY_DEFAULT_VERSION = 800  # files without `mxnet_version` are assumed to be 0.8.0

#: upper bound on a node's declared input or output count (`num_args`, `num_outputs`):
#: a corrupted count must give an error, not a huge allocation
_MAX_FANOUT = 1 << 16
_COUNT_ATTRS = ("num_outputs", "num_args", "sections", "num_weights", "num_layers")

#: input versions of nodes built by the loader (node -> one version per input)
_LOADED_VERSIONS: "weakref.WeakKeyDictionary[Node, tuple]" = weakref.WeakKeyDictionary()

_NODE_KEYS = {"op", "name", "inputs", "attrs", "attr", "param", "control_deps", "subgraphs",
              "backward_source_id"}
_GRAPH_KEYS = {"nodes", "arg_nodes", "heads", "node_row_ptr", "attrs"}


def compose_var_init(op_name: str, index: int) -> str | None:
    """The `__init__` MXNet gives a variable feeding input `index` of `op_name` (or None);
    declared by the operator (`OpDef.var_init`)."""
    return get_op(op_name).var_init.get(index) if has_op(op_name) else None

# =============================================================================
# reading: 1. validate the document into plain records
# =============================================================================


@dataclass
class _RawNode:
    """One node of the document, validated, before it becomes a `Node`."""

    index: int
    op_name: str
    name: str
    attrs: dict
    inputs: list  # [node id, output index, version]
    control_deps: list
    subgraphs: list = field(default_factory=list)
    op: OpDef | None = None
    parsed: Attrs | None = None
    graph_path: str = ""  # "" for the top graph, "nodes[2] ('loop').subgraphs[0]." inside one

    @property
    def is_variable(self) -> bool:
        return self.op_name == "null"

    def where(self) -> str:
        return f"{self.graph_path}node {self.index} ({self.name!r}, op {self.op_name!r})"


@dataclass
class _RawGraph:
    nodes: list
    heads: list
    version: int
    path: str = ""


def _fail(where: str, msg: str) -> FormatError:
    return FormatError(f"invalid symbol JSON: {where}: {msg}")


def _type_name(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null",
            int: "integer", float: "number"}.get(type(v), type(v).__name__)


def _expect(value: Any, kind: type, where: str) -> Any:
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise _fail(where, f"expected {_type_name(kind())}, got {_type_name(value)} {value!r:.60}")
    if kind is str:
        _text(value, where)
    return value


def _text(value: str, where: str) -> str:
    """Refuse text that is not valid Unicode (a lone surrogate from a `\\ud800` escape):
    it would load, then fail in `tojson()` / `save()` / `export`."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail(where, f"invalid Unicode text {value!r:.60} ({exc.reason} at character {exc.start})") from None
    return value


def _uint(value: Any, where: str) -> int:
    _expect(value, int, where)
    if not 0 <= value < 1 << 32:
        raise _fail(where, f"expected a non-negative 32-bit integer, got {value}")
    return value


def _str_dict(value: Any, where: str) -> dict:
    _expect(value, dict, where)
    for k, v in value.items():
        _text(k, f"{where} key")
        _expect(v, str, f"{where}[{k!r}]")
    return dict(value)


def _entry(value: Any, where: str) -> list:
    """`[node id, output index, version]`, or the older `[node id, output index]`."""
    _expect(value, list, where)
    if len(value) not in (2, 3):
        raise _fail(where, f"an entry is [node id, output index(, version)], got {value!r:.60}")
    out = [_uint(x, f"{where}[{i}]") for i, x in enumerate(value)]
    return out if len(out) == 3 else out + [0]


def _check_keys(obj: dict, allowed: set, required: Sequence[str], where: str) -> None:
    for k in required:
        if k not in obj:
            raise _fail(where, f"missing field {k!r}")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise _fail(where, f"unknown field(s) {unknown}; expected some of {sorted(allowed)}")


def _read_node(index: int, obj: Any, prefix: str) -> _RawNode:
    where = f"{prefix}nodes[{index}]"
    _expect(obj, dict, where)
    _check_keys(obj, _NODE_KEYS, ("op", "name", "inputs"), where)
    op_name = _expect(obj["op"], str, f"{where}.op")
    name = _expect(obj["name"], str, f"{where}.name")
    where = f"{where} ({name!r})"
    # "attrs" and "attr" fill one dict (the later one in the file wins, as dmlc's
    # reader clears the map); "param" (pre-NNVM files) adds keys not already there
    attrs: dict = {}
    for key in obj:
        if key in ("attrs", "attr"):
            attrs = _str_dict(obj[key], f"{where}.{key}")
    for k, v in _str_dict(obj.get("param", {}), f"{where}.param").items():
        attrs.setdefault(k, v)
    inputs = [_entry(e, f"{where}.inputs[{i}]")
              for i, e in enumerate(_expect(obj["inputs"], list, f"{where}.inputs"))]
    deps = [_uint(c, f"{where}.control_deps[{i}]")
            for i, c in enumerate(_expect(obj.get("control_deps", []), list, f"{where}.control_deps"))]
    if "backward_source_id" in obj:
        _expect(obj["backward_source_id"], int, f"{where}.backward_source_id")
    subs = [_read_graph(g, f"{where}.subgraphs[{i}].", top=False)
            for i, g in enumerate(_expect(obj.get("subgraphs", []), list, f"{where}.subgraphs"))]
    if op_name == "null" and (inputs or deps or subs):
        raise _fail(where, "a variable (op 'null') cannot have inputs, control_deps or subgraphs")
    return _RawNode(index, op_name, name, attrs, inputs, deps, subs, graph_path=prefix)


def _read_version(attrs: Any, where: str) -> int:
    _expect(attrs, dict, f"{where}attrs")
    for k, v in attrs.items():
        _text(k, f"{where}attrs key")
        _expect(v, list, f"{where}attrs[{k!r}]")
        if len(v) != 2 or not isinstance(v[0], str):
            raise _fail(f"{where}attrs[{k!r}]", f"expected a typed value [type name, value], got {v!r:.60}")
    if "mxnet_version" not in attrs:
        return _LEGACY_DEFAULT_VERSION
    kind, value = attrs["mxnet_version"]
    if kind != "int":
        raise _fail(f"{where}attrs['mxnet_version']", f"expected [\"int\", version], got {[kind, value]!r:.60}")
    return _uint(value, f"{where}attrs['mxnet_version'][1]")


def _read_graph(doc: Any, where: str = "", top: bool = True) -> _RawGraph:
    """Check the structure of a (sub)graph document; every id is checked to be in range."""
    _expect(doc, dict, where or "document")
    _check_keys(doc, _GRAPH_KEYS, ("nodes", "arg_nodes", "heads"), where or "document")
    version = _read_version(doc["attrs"], where) if "attrs" in doc else (
        _LEGACY_DEFAULT_VERSION if top else MXNET_VERSION)
    nodes = [_read_node(i, n, where) for i, n in enumerate(_expect(doc["nodes"], list, f"{where}nodes"))]
    if not nodes:
        raise _fail(f"{where}nodes", "the graph has no nodes")
    for n in nodes:
        for i, (src, _, _) in enumerate(n.inputs):
            if src >= len(nodes):
                raise _fail(n.where(), f"input {i} refers to node {src}, but there are only {len(nodes)} nodes")
        for c in n.control_deps:
            if c >= len(nodes):
                raise _fail(n.where(), f"control dependency on node {c}, but there are only {len(nodes)} nodes")
    for i, a in enumerate(_expect(doc["arg_nodes"], list, f"{where}arg_nodes")):
        a = _uint(a, f"{where}arg_nodes[{i}]")
        if a >= len(nodes) or not nodes[a].is_variable:
            raise _fail(f"{where}arg_nodes[{i}]", f"node {a} is not a variable node")
    if "node_row_ptr" in doc:  # recomputed on writing; only its type is checked
        for i, r in enumerate(_expect(doc["node_row_ptr"], list, f"{where}node_row_ptr")):
            _uint(r, f"{where}node_row_ptr[{i}]")
    heads = [_entry(h, f"{where}heads[{i}]") for i, h in enumerate(_expect(doc["heads"], list, f"{where}heads"))]
    if not heads:
        raise _fail(f"{where}heads", "the graph has no outputs")
    for i, (h, _, _) in enumerate(heads):
        if h >= len(nodes):
            raise _fail(f"{where}heads[{i}]", f"refers to node {h}, but there are only {len(nodes)} nodes")
    return _RawGraph(nodes, heads, version, where)


def _parse_text(text: str | bytes) -> Any:
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"invalid symbol JSON: not UTF-8 text ({exc})") from None
    if not isinstance(text, str):
        raise TypeError(f"load_json expects a JSON string, got {type(text).__name__}")
    try:
        # strict=False: MXNet writes control characters inside strings unescaped
        return json.loads(text, strict=False)
    except ValueError as exc:
        raise FormatError(f"invalid symbol JSON: not JSON ({exc})") from None
    except RecursionError:
        raise FormatError("invalid symbol JSON: nested too deeply") from None


# =============================================================================
# reading: 2. operators, order, upgrades, attributes
# =============================================================================

def _unknown_ops(graph: _RawGraph, where: str, found: dict) -> dict:
    """op name -> names of the nodes using it, for every op the registry lacks."""
    for n in graph.nodes:
        if not n.is_variable and not has_op(n.op_name):
            found.setdefault(n.op_name, []).append(f"{where}{n.name}")
        for i, sub in enumerate(n.subgraphs):
            _unknown_ops(sub, f"{where}{n.name}.subgraphs[{i}]/", found)
    return found


def _raise_unknown(found: dict) -> None:
    parts = []
    for op, users in found.items():
        shown = ", ".join(repr(u) for u in users[:5]) + (f" and {len(users) - 5} more" if len(users) > 5 else "")
        parts.append(f"{op!r} (used by {shown})")
    reasons = [r for r in map(unsupported_reason, found) if r is not None]
    cls = OperatorNotFound
    if reasons:  # MXNet operators hybridgraph does not provide: say why and what to use instead
        from hybridgraph.unsupported import UnsupportedOperator as cls  # noqa: PLC0415, N813
    err = cls(f"cannot load the symbol: {len(found)} operator(s) not registered in "
              f"hybridgraph: " + "; ".join(parts) + "".join(" " + r for r in reasons))
    err.missing = {op: list(users) for op, users in found.items()}
    raise err


def _dfs_order(graph: _RawGraph) -> list[_RawNode]:
    """Nodes reachable from the heads in DFS post-order (inputs, then control deps),
    as nnvm's DFSVisit; iterative, and a cycle is a FormatError naming a node on it."""
    nodes = graph.nodes
    state = [0] * len(nodes)  # 0 new, 1 on the stack, 2 done
    order = []

    def deps_of(nid: int) -> list:
        return [e[0] for e in nodes[nid].inputs] + nodes[nid].control_deps

    for head, _, _ in graph.heads:
        if state[head]:
            continue
        stack = [(head, 0, deps_of(head))]
        state[head] = 1
        while stack:
            nid, k, deps = stack[-1]
            if k < len(deps):
                stack[-1] = (nid, k + 1, deps)
                child = deps[k]
                if state[child] == 0:
                    state[child] = 1
                    stack.append((child, 0, deps_of(child)))
                elif state[child] == 1:
                    raise _fail(nodes[nid].where(), f"its inputs form a cycle through node {child} "
                                                    f"({nodes[child].name!r})")
            else:
                stack.pop()
                state[nid] = 2
                order.append(nodes[nid])
    return order


def _is_legacy_hidden(key: str) -> bool:
    """MXNet's test: the key starts with a hidden key (`lr_mult`) or ends with one
    (`weight_lr_mult`), judged by the last occurrence (`rfind`)."""
    for hk in HIDDEN_KEYS:
        pos = key.rfind(hk)
        if pos == 0 or (pos != -1 and pos == len(key) - len(hk)):
            return True
    return False


def _hidden_target(key: str) -> tuple[str, str | None] | None:
    """Where a legacy hidden key goes back: `(hk, None)` = `__hk__` on the node itself,
    `(hk, argname)` = `__hk__` on the variable feeding input `argname`, None = unchanged."""
    for hk in HIDDEN_KEYS:
        pos = key.rfind(hk)
        if pos == 0 and len(key) == len(hk):
            return hk, None
        if pos > 1 and pos == len(key) - len(hk):
            return hk, key[:pos - 1]
    return None


def _lenient_input_names(n: _RawNode) -> tuple:
    try:
        return tuple(n.op.input_names(n.op.schema.parse_lenient(n.attrs)))
    except (MXNetError, ValueError, TypeError, KeyError, AttributeError, IndexError):
        return ()


def _upgrade_hidden_keys(order: list[_RawNode], nodes: list[_RawNode]) -> None:
    """Files older than 1.9.1: `lr_mult` -> `__lr_mult__`, and `weight_lr_mult` on an op
    -> `__lr_mult__` on the variable feeding its `weight` input (UpgradeJSON_FixParsing).
    Other keys matching the rule (`weight_lr_mult` on a variable) stay as they are."""
    for n in order:
        hidden = [(k, v) for k, v in n.attrs.items() if _is_legacy_hidden(k)]
        for k, _ in hidden:
            del n.attrs[k]
        for k, v in hidden:
            target = _hidden_target(k)
            if target is not None and target[1] is None:
                n.attrs[f"__{target[0]}__"] = v
                continue
            if target is not None and not n.is_variable:
                names = _lenient_input_names(n)
                if target[1] in names:
                    pos = names.index(target[1])
                    if pos < len(n.inputs) and nodes[n.inputs[pos][0]].is_variable:
                        nodes[n.inputs[pos][0]].attrs[f"__{target[0]}__"] = v
                        continue
            n.attrs[k] = v


def _fanout_guard(n: _RawNode, attrs: dict) -> None:
    """Refuse absurd input/output counts before the op builds name tuples of that size."""
    keys = set(_COUNT_ATTRS) | ({n.op.key_var_num_args} if n.op.key_var_num_args else set())
    for k in keys:
        if k in attrs:
            try:
                value = parse_int(attrs[k])
            except (ValueError, TypeError, OverflowError):
                continue  # the schema reports unparsable values
            if value > _MAX_FANOUT:
                raise _fail(n.where(), f"attribute {k}={value} exceeds the supported {_MAX_FANOUT}")


def _parse_attrs(n: _RawNode) -> None:
    """Parse the op's attributes with its schema; hidden `__x__` keys are kept aside."""
    params = {k: v for k, v in n.attrs.items() if not _is_hidden(k)}
    try:
        n.parsed = n.op.parse_attrs(params)
    except AttrError as exc:
        raise AttrError(f"{exc} (while loading {n.where()})") from None


def _is_hidden(key: str) -> bool:
    return len(key) >= 4 and key.startswith("__") and key.endswith("__")


def _expected_inputs(n: _RawNode) -> tuple:
    try:
        return tuple(n.op.input_names(n.parsed))
    except (MXNetError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        raise _fail(n.where(), f"cannot determine the inputs of {n.op.name}: {exc}") from None


def _add_missing_inputs(order: list[_RawNode], graph: _RawGraph) -> None:
    """Files before 0.9: aux states were not graph inputs; append the missing trailing
    inputs as variables `<op name>_<input name>` copying the op's attrs."""
    for n in order:
        if n.is_variable:
            continue
        names = _expected_inputs(n)
        for name in names[len(n.inputs):]:
            var = _RawNode(len(graph.nodes), "null", f"{n.name}_{name}", dict(n.attrs), [], [],
                           graph_path=graph.path)
            graph.nodes.append(var)
            n.inputs.append([var.index, 0, 0])


def _set_compose_var_attrs(order: list[_RawNode], nodes: list[_RawNode]) -> None:
    """Files before 0.9.4: FSetInputVarAttrOnCompose again (BatchNorm aux `__init__`...)."""
    for n in order:
        if n.is_variable:
            continue
        for i, (src, _, _) in enumerate(n.inputs):
            init = compose_var_init(n.op.name, i)
            if init is not None and nodes[src].is_variable:
                nodes[src].attrs.setdefault("__init__", init)


def _drop_argmax_axis(order: list[_RawNode]) -> None:
    """Files before 0.9.5: argmax/argmin axis=-1 meant "flatten" (axis None now)."""
    for n in order:
        if n.op is not None and n.op.name in ("argmax", "argmin") and n.attrs.get("axis") == "-1":
            del n.attrs["axis"]
            _parse_attrs(n)


def _check_inputs(n: _RawNode, nodes: list[_RawNode]) -> None:
    names = _expected_inputs(n)
    if len(names) != len(n.inputs):
        raise _fail(n.where(), f"{n.op.name} takes {len(names)} inputs {list(names)}, "
                               f"the file gives {len(n.inputs)}")


def _num_outputs(n: _RawNode) -> int:
    if n.is_variable:
        return 1
    try:
        return n.op.num_outputs(n.parsed)
    except (MXNetError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        raise _fail(n.where(), f"cannot determine the outputs of {n.op.name}: {exc}") from None


def _build(graph: _RawGraph) -> Symbol:
    """Resolve, upgrade and parse a validated graph, then make the Nodes."""
    order = _dfs_order(graph)
    for n in order:
        if not n.is_variable:
            n.op = get_op(n.op_name)
            _fanout_guard(n, n.attrs)
    if graph.version < MXNET_VERSION:
        _upgrade_hidden_keys(order, graph.nodes)
    for n in order:
        if not n.is_variable:
            _parse_attrs(n)
    if graph.version < _V0_9_0:
        _add_missing_inputs(order, graph)
    if graph.version < _V0_9_4:
        _set_compose_var_attrs(order, graph.nodes)
    if graph.version < _V0_9_5:
        _drop_argmax_axis(order)
    order = _dfs_order(graph)  # the upgrade may have added variables
    built: dict[int, Node] = {}
    for n in order:
        built[n.index] = _make_node(n, graph.nodes, built)
    outputs = []
    for i, (h, idx, _) in enumerate(graph.heads):
        if idx >= _num_outputs(graph.nodes[h]):
            raise _fail(f"{graph.path}heads[{i}]", f"output {idx} of {graph.nodes[h].where()}, which has "
                                       f"{_num_outputs(graph.nodes[h])} output(s)")
        outputs.append((built[h], idx))
    return Symbol(outputs)


def _make_node(n: _RawNode, nodes: list[_RawNode], built: dict) -> Node:
    if n.is_variable:
        return Node(None, n.name, None, (), dict(n.attrs))
    _check_inputs(n, nodes)
    entries = []
    for i, (src, idx, _) in enumerate(n.inputs):
        if idx >= _num_outputs(nodes[src]):
            raise _fail(n.where(), f"input {i} reads output {idx} of {nodes[src].where()}, which has "
                                   f"{_num_outputs(nodes[src])} output(s)")
        entries.append((built[src], idx))
    hidden = {k: v for k, v in n.attrs.items() if _is_hidden(k)}
    node = Node(n.op, n.name, n.parsed, entries, hidden)
    node.control_deps = tuple(built[c] for c in n.control_deps)
    node.subgraphs = tuple(_build(sub) for sub in n.subgraphs)
    if n.op.name == "_foreach":   # its body is its subgraph (symbol/foreach_op.py)
        from .foreach_op import bind_loaded  # noqa: PLC0415 - loaded only for such graphs
        bind_loaded(node)
    _LOADED_VERSIONS[node] = tuple(e[2] for e in n.inputs)
    return node


# =============================================================================
# reading: public functions
# =============================================================================

def load_json(text: str | bytes) -> Symbol:
    """A Symbol from MXNet's JSON text (any MXNet version; see the module docstring).

    Raises FormatError for a malformed document, OperatorNotFound (listing every
    unknown operator and the nodes using it) and AttrError for bad attributes.
    """
    graph = _read_graph(_parse_text(text))
    missing = _unknown_ops(graph, "", {})
    if missing:
        _raise_unknown(missing)
    return _build(graph)


def load(fname: str | os.PathLike) -> Symbol:
    """A Symbol from a `-symbol.json` file (MXNet's `mx.sym.load`)."""
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError("fname need to be string")
    with open(fname, "rb") as f:
        data = f.read()
    try:
        return load_json(data)
    except MXNetError as exc:  # name the file, keep the error (and its fields)
        if exc.args and isinstance(exc.args[0], str):
            exc.args = (f"{os.fspath(fname)}: {exc.args[0]}", *exc.args[1:])
        raise
