"""Structure-aware mutations of -symbol.json documents and .params files, for the fuzz
tests: hostile attribute strings, counts, ids, types and Unicode in JSON; hostile counts,
shapes, dtype flags and sparse records in the binary NDArray format."""
from __future__ import annotations

import copy
import json
import random
import struct

#: attribute values an attacker would try
HOSTILE_VALUES = [
    "-" * 3000 + "1", "1" * 5000, "(" * 2000 + ")" * 2000, "\ud800", "caf\u00e9", "", " ", "None", "nan",
    "inf", "-inf", "1e400", "-1", "0", "2147483648", "9223372036854775808", "-9223372036854775809",
    "10000000", str(2**31), "(" + ", ".join(["1"] * 8000) + ")", "(1, (2, 3))", "[[1]]", "0x10", "1_000",
    "True", "False", "(2**40, 2**40)", "(1099511627776, 1099511627776)", "(-4, -1, -1)", "(0, -2, -3)",
    "float32", "float1024", "<f4", "bfloat16", "(None,)", "'a'", "lambda: 0", "__import__('os')",
    "(" + "1," * 70000 + ")", "\x00", "\u202e", "12345678901234567890123",
]
OPS = ["FullyConnected", "Convolution", "Reshape", "RNN", "multi_sgd_update", "Concat", "SliceChannel",
       "Pooling", "BatchNorm", "Activation", "Cast", "transpose", "tile", "repeat", "slice", "Embedding",
       "_zeros", "_ones", "broadcast_to", "sum", "split", "Dropout", "elemwise_add", "add_n", "_foreach",
       "UpSampling", "Deconvolution", "LayerNorm", "one_hot", "pad", "SoftmaxOutput", "null", "no_such_op"]
ATTR_KEYS = ["num_hidden", "num_filter", "kernel", "shape", "num_layers", "num_weights", "num_args",
             "num_outputs", "axis", "axes", "dtype", "reps", "repeats", "begin", "end", "step", "state_size",
             "mode", "input_dim", "output_dim", "depth", "pad_width", "scale", "sections", "__shape__",
             "__dtype__", "target_shape", "pool_size", "stride", "dilate", "num_group", "\ud800key"]
HOSTILE_INTS = [-1, 0, 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 10**6, 10**30, 3.5, True, None, "0", [], {}]


def mutate_json(doc: dict, rng: random.Random, rounds: int = 3) -> bytes:
    """A mutated copy of a symbol document, as bytes (sometimes not even JSON)."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice([1, 1, 1, 2, rounds])):
        _json_step(doc, rng)
    text = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.05:
        cut = rng.randrange(len(text) + 1)
        text = text[:cut]
    return text.encode("utf-8", "surrogatepass")


def _json_step(doc: dict, rng: random.Random) -> None:
    nodes = doc.get("nodes")
    if not isinstance(nodes, list) or not nodes:
        doc["nodes"] = [{"op": "null", "name": "x", "inputs": []}]
        return
    i = rng.randrange(len(nodes))
    node = nodes[i] if isinstance(nodes[i], dict) else {}
    nodes[i] = node
    kind = rng.randrange(10)
    if kind <= 2:                                   # a hostile attribute value
        attrs = node.setdefault("attrs", {}) if isinstance(node.get("attrs", {}), dict) else {}
        key = rng.choice(list(attrs) or ATTR_KEYS) if rng.random() < 0.6 else rng.choice(ATTR_KEYS)
        attrs[key] = rng.choice(HOSTILE_VALUES)
        node["attrs"] = attrs
    elif kind == 3:                                 # another operator
        node["op"] = rng.choice(OPS)
    elif kind == 4:                                 # hostile input entries
        node["inputs"] = [[rng.choice(HOSTILE_INTS), rng.choice(HOSTILE_INTS), 0]
                          for _ in range(rng.randint(0, 3))]
    elif kind == 5:                                 # rewire an input to another node (maybe a cycle)
        if isinstance(node.get("inputs"), list) and node["inputs"]:
            node["inputs"][0] = [rng.randrange(len(nodes) + 2), rng.randrange(3), 0]
    elif kind == 6:                                 # wrong types for fields
        field = rng.choice(["op", "name", "inputs", "attrs", "control_deps", "subgraphs"])
        node[field] = rng.choice(HOSTILE_INTS + ["x", "\ud800"])
    elif kind == 7:                                 # heads / arg_nodes
        key = rng.choice(["heads", "arg_nodes", "node_row_ptr"])
        doc[key] = [[rng.choice(HOSTILE_INTS), rng.choice(HOSTILE_INTS), 0]] if key == "heads" else \
            [rng.choice(HOSTILE_INTS)]
    elif kind == 8:                                 # many inputs to one node
        node["inputs"] = [[0, 0, 0]] * rng.choice([2, 100, 5000])
    else:                                           # names
        node["name"] = rng.choice(HOSTILE_VALUES)


def generated_json(rng: random.Random) -> dict:
    """A small random graph: variables feeding a chain of random operators."""
    nodes = [{"op": "null", "name": "data", "inputs": []}]
    for k in range(rng.randint(1, 4)):
        op = rng.choice(OPS[:-3])
        attrs = {rng.choice(ATTR_KEYS[:-1]): rng.choice(HOSTILE_VALUES + ["2", "(2, 2)", "1", "relu"])
                 for _ in range(rng.randint(0, 3))}
        nodes.append({"op": op, "name": f"n{k}", "attrs": attrs,
                      "inputs": [[rng.randrange(len(nodes)), 0, 0] for _ in range(rng.randint(1, 3))]})
    return {"nodes": nodes, "arg_nodes": [0], "heads": [[len(nodes) - 1, 0, 0]],
            "attrs": {"mxnet_version": ["int", 10901]}}


# -- .params ----------------------------------------------------------------------------------

_V2 = 0xF993FAC9


def generated_params(rng: random.Random) -> bytes:
    """A file with dense and sparse records whose counts and shapes may be hostile."""
    recs = []
    for _ in range(rng.randint(0, 3)):
        stype = rng.choice([0, 0, 1, 2])
        big = rng.choice([2, 3, 2**30, 2**40, 2**62, -1])
        if stype == 0:
            recs.append(struct.pack("<Iii2q", _V2, 0, 2, big, 2) + struct.pack("<iii", 1, 0, 0)
                        + b"\0" * rng.choice([0, 16, 64]))
        else:
            naux = 1 if stype == 1 else 2
            body = struct.pack("<Iii", _V2, stype, 1) + struct.pack("<q", rng.choice([1, 0, 2**40]))
            body += struct.pack("<i2q", 2, big, 1) + struct.pack("<iii", 1, 0, 0)
            body += b"".join(struct.pack("<ii", 6, 1) + struct.pack("<q", 1) for _ in range(naux))
            body += b"\0" * rng.choice([4, 8, 24])
            recs.append(body)
    out = struct.pack("<QQQ", 0x112, 0, rng.choice([len(recs), len(recs), 2**60]))
    out += b"".join(recs) + struct.pack("<Q", rng.choice([0, len(recs), 2**63]))
    return out


def mutate_params(buf: bytes, rng: random.Random) -> bytes:
    """Field-aligned overwrites with hostile integers, bit flips, cuts and splices."""
    b = bytearray(buf)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(4)
        if kind == 0 and len(b) >= 8:               # an aligned hostile 32/64-bit value
            size = rng.choice([4, 8])
            pos = rng.randrange(0, len(b) - size + 1) // 4 * 4
            val = rng.choice([0, 1, 2, 0xFFFFFFFF, 2**30, 2**31 - 1, 12, 13, 0xF993FAC9, 0xF993FACA, 32, 33])
            b[pos:pos + size] = (val % (1 << (8 * size))).to_bytes(size, "little")
        elif kind == 1 and b:                       # a bit flip
            pos = rng.randrange(len(b))
            b[pos] ^= 1 << rng.randrange(8)
        elif kind == 2:                             # a cut
            del b[rng.randrange(len(b) + 1):]
        elif b:
            a = rng.randrange(len(b))
            b[a:a] = b[rng.randrange(len(b)):][:rng.randint(1, 64)]
    return bytes(b)


# -- optimizer .states (pickles read by a restricted unpickler) ---------------------------------

_STATE_BOMBS = [
    b"cbuiltins\nbytearray\n(I10000000000\ntR.",          # bytearray(n): gigabytes from 30 bytes
    b"(" * 100000 + b".",                                   # deep nesting
    b"cbuiltins\nrange\n(I0\nI99999999999999\ntR.",       # a lazy range: harmless
    b"\x80\x05\x96" + (1 << 40).to_bytes(8, "little") + b"ab.",  # BYTEARRAY8 declaring 1 TiB
    b"\x80\x04\x8e" + (1 << 40).to_bytes(8, "little") + b"ab.",  # BINBYTES8 declaring 1 TiB
    b"\x80\x04\x95" + (1 << 40).to_bytes(8, "little") + b"}.",   # a FRAME declaring 1 TiB
    b"cos\nsystem\n(S'true'\ntR.",                        # a global that must be refused
    b"\x80\x02cnumpy.core.multiarray\n_reconstruct\nq\x00cnumpy\nndarray\nq\x01K\x00\x85q\x02c_codecs"
    b"\nencode\nq\x03X\x01\x00\x00\x00bq\x04X\x06\x00\x00\x00latin1q\x05\x86q\x06Rq\x07\x87q\x08R.",
]


def generated_states(rng: random.Random) -> bytes:
    """A crafted hostile pickle, or a pickled dict of odd values."""
    if rng.random() < 0.5:
        return rng.choice(_STATE_BOMBS)
    import pickle  # noqa: PLC0415 - only the generator needs it
    value = {rng.randrange(5): rng.choice([None, 1.5, (1, 2), [b"x" * 10], "s", {"a": 1}, bytearray(b"ab")])
             for _ in range(rng.randint(0, 3))}
    return pickle.dumps(rng.choice([value, (value, None), [value], 3]), protocol=rng.choice([0, 2, 4]))
