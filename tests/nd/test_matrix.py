"""Shape-manipulation operators (nd/ops/matrix.py): MXNet 1.9.1 behaviour that the
generic op-spec checks (tests/nd/specs/matrix.py) and the goldens do not pin down.

Expected values marked "MXNet" were read from mxnet 1.9.1 itself.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import AttrError, DTypeError, MXNetError, ShapeError
from hybridgraph.nd.ops.matrix import infer_reshape
from hybridgraph.nd.registry import get_op
from tests.conftest import find_mxnet_python

_FOUND = find_mxnet_python()
MXNET_PYTHON = Path(_FOUND) if _FOUND else Path("/nonexistent/mxnet-python")


def _grad(fn, *xs, head=None):
    """(output as numpy, gradients of sum(head * output) w.r.t. each input)."""
    arrays = [nd.array(x, dtype=np.asarray(x).dtype) for x in xs]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        y = fn(*arrays)
    autograd.backward([y], [nd.ones_like(y) if head is None else nd.array(head, dtype=y.dtype)])
    return y.asnumpy(), [a.grad.asnumpy() for a in arrays]


# -- declarations ------------------------------------------------------------------

@pytest.mark.parametrize("alias,canonical", [
    ("reshape", "Reshape"), ("flatten", "Flatten"), ("swapaxes", "SwapAxis"), ("flip", "reverse"),
    ("concat", "Concat"), ("_sparse_concat", "Concat"), ("split", "SliceChannel"), ("crop", "slice"),
    ("_sparse_slice", "slice"), ("pad", "Pad"), ("cast", "Cast"), ("_sparse_clip", "clip"),
    ("_crop_assign", "_slice_assign"), ("_crop_assign_scalar", "_slice_assign_scalar")])
def test_aliases(alias, canonical):
    assert get_op(alias) is get_op(canonical)


@pytest.mark.parametrize("name,defaults", [  # MXNet: the generated docstrings
    ("Reshape", {"shape": (), "reverse": False, "target_shape": (), "keep_highest": False}),
    ("reshape_like", {"lhs_begin": None, "lhs_end": None, "rhs_begin": None, "rhs_end": None}),
    ("transpose", {"axes": ()}), ("squeeze", {"axis": None}), ("SwapAxis", {"dim1": 0, "dim2": 0}),
    ("repeat", {"axis": None}), ("Concat", {"dim": 1}), ("stack", {"axis": 0}),
    ("SliceChannel", {"axis": 1, "squeeze_axis": False}),
    ("_split_v2", {"axis": 1, "squeeze_axis": False, "sections": 0}), ("slice", {"step": ()}),
    ("slice_like", {"axes": ()}), ("Pad", {"constant_value": 0.0}), ("diag", {"k": 0, "axis1": 0, "axis2": 1})])
def test_attribute_defaults(name, defaults):
    attrs = get_op(name).schema.attrs
    for k, v in defaults.items():
        assert attrs[k].default == v, (name, k)


@pytest.mark.parametrize("name,inputs,outputs", [
    ("Concat", ["arg0", "arg1", "arg2"], ["output"]), ("stack", ["arg0", "arg1", "arg2"], ["output"]),
    ("SliceChannel", ["data"], ["output0", "output1", "output2"]), ("reshape_like", ["lhs", "rhs"], ["output"]),
    ("slice_like", ["data", "shape_like"], ["output"]), ("_slice_assign", ["lhs", "rhs"], ["output"])])
def test_input_and_output_names(name, inputs, outputs):
    op = get_op(name)
    a = op.parse_attrs({"num_args": 3} if name in ("Concat", "stack") else
                       {"num_outputs": 3} if name == "SliceChannel" else
                       {"begin": (0,), "end": (1,)} if name == "_slice_assign" else {})
    assert list(op.input_names(a)) == inputs
    assert list(op.output_names(a)) == outputs


def test_split_v2_output_count():
    op = get_op("_split_v2")
    assert op.num_outputs(op.parse_attrs({"indices": "(0, 2, 3)"})) == 3
    assert op.num_outputs(op.parse_attrs({"indices": "[]", "sections": "4"})) == 4


# -- Reshape: the special codes against MXNet ----------------------------------------

# (input shape, shape, reverse, MXNet's output shape), drawn at random and run through
# mxnet 1.9.1's Symbol.infer_shape
RESHAPE_CASES = [
    ((1, 2), (-1, -2), False, (1, 2)),
    ((3, 2, 1), (3, 2, 0, -2), False, (3, 2, 1)),
    ((1, 1, 2), (0, -3), False, (1, 2)),
    ((3, 1), (-4, 1, -1, 0), False, (1, 3, 1)),
    ((2, 4, 3), (-3, 0), False, (8, 3)),
    ((1, 2, 1), (-2,), False, (1, 2, 1)),
    ((4, 2, 2, 3), (-1, -4, 2, -1, 2, 0), False, (4, 2, 1, 2, 3)),
    ((4, 3, 2, 1), (0, -4, 3, -1, -3), False, (4, 3, 1, 2)),
    ((2, 4, 2), (0, 0, -1), True, (2, 4, 2)),
    ((1,), (-1,), True, (1,)),
    ((3, 1), (-4, -1, 1, -2, -2), False, (3, 1, 1)),
    ((3, 4, 2), (-3, 2), False, (12, 2)),
    ((2, 3, 2, 2), (0, 3, 0, 0), True, (2, 3, 2, 2)),
    ((4, 4, 1), (0, 4, -4, 1, 1), False, (4, 4, 1, 1)),
    ((4, 1, 2), (-3, -1), True, (4, 2)),
    ((2, 4, 1, 2), (-1, 0, 1, 0), False, (2, 4, 1, 2)),
    ((2, 2), (-3,), True, (4,)),
    ((3, 3, 4, 2), (0, 0, 0, -2), False, (3, 3, 4, 2)),
    ((3, 1, 3, 4), (-4, 1, -1, 1, -3), False, (1, 3, 1, 12)),
    ((1, 4, 1), (-4, 1, 1, -1, -4, 1, 1), False, (1, 1, 1, 4, 1)),
    ((1, 4, 1, 1), (-2,), False, (1, 4, 1, 1)),
    ((1, 1, 4, 4), (1, -4, 1, -1, 0, 4), False, (1, 1, 1, 4, 4)),
    ((3, 1), (3, -1), True, (3, 1)),
    ((2, 2), (-2, 1), False, (2, 2, 1)),
    ((2, 2), (0, -1), False, (2, 2)),
    ((2, 1), (-2,), True, (2, 1)),
    ((1, 3, 2, 3), (0, 0, -4, -1, 2, 3), False, (1, 3, 1, 2, 3)),
    ((4, 2, 4), (0, -3, 1), False, (4, 8, 1)),
    ((3, 3, 4), (-3, -4, -1, 1, -2), False, (9, 4, 1)),
    ((2,), (-4, -1, 2), False, (1, 2)),
    ((2, 2, 2), (-3, -1), False, (4, 2)),
    ((3, 2, 2, 3), (-4, 3, 1, -3, 3), False, (3, 1, 4, 3)),
    ((2, 2, 1, 4), (-4, 1, 2, 0, -2), False, (1, 2, 2, 1, 4)),
    ((3, 2, 2), (-3, -2), False, (6, 2)),
    ((4, 1, 2, 3), (0, 1, -1, -4, 3, -1), True, (4, 1, 1, 3, 2)),
    ((3, 1), (-2, -1), True, (3, 1)),
    ((2, 3, 4, 1), (-3, -1, -2), False, (6, 4, 1)),
]

# shape specs MXNet rejects
RESHAPE_ERRORS = [
    ((3,), (-4, -1, 3), True),
    ((4, 3, 4, 3), (0, -3, -4, -1, 1), True),
    ((1,), (-1, 0), False),
    ((2,), (-4, 1, -1, 0), False),
    ((3, 1, 4, 3), (-3, -4, 2, 2, -4, 1, -1), True),
    ((2, 1), (0, -4, 1, -1, 0), False),
    ((4,), (-1, -1), False),
    ((3, 3, 1, 4), (-4, 1, 3, 0, -3), True),
    ((4, 3, 3, 3), (4, -4, -1, 3, 0, -4, 1, -1), True),
    ((1, 2, 4), (-3, -4, 1, -1, 1), True),
    ((3, 3, 2), (0, 3, 0, 0), False),
    ((4, 3), (-4, -1, 2, 0), True),
    ((3,), (-4, 1, 3), True),
    ((1, 2), (-2, 0), False),
]


@pytest.mark.parametrize("dshape,spec,reverse,want", RESHAPE_CASES)
def test_reshape_codes_match_mxnet(dshape, spec, reverse, want):
    assert infer_reshape(spec, dshape, reverse) == want
    x = nd.array(np.arange(np.prod(dshape), dtype=np.float32).reshape(dshape))
    y = nd.Reshape(x, shape=spec, reverse=reverse)
    np.testing.assert_array_equal(y.asnumpy(), np.arange(np.prod(dshape)).reshape(want))


@pytest.mark.parametrize("dshape,spec,reverse", RESHAPE_ERRORS)
def test_reshape_codes_mxnet_rejects(dshape, spec, reverse):
    with pytest.raises(MXNetError):
        nd.Reshape(nd.zeros(dshape), shape=spec, reverse=reverse)


@pytest.mark.parametrize("dshape,spec,reverse,want", [
    # MXNet puts the -1 at its index in `shape`, here a wrong-size result (and heap
    # corruption when run); the -1 goes where it was emitted instead
    ((4, 2, 3), (-2, -1), False, (4, 2, 3, 1)),
    ((3, 3, 4), (-1, -2), True, (1, 3, 3, 4)),
    ((4, 3, 2), (-4, 2, -1, -1, 2), False, (2, 2, 3, 2)),
    # where MXNet's placement still gives the right size, its shape is kept (MXNet)
    ((1, 4, 1), (-4, 1, 1, -1, -4, 1, 1), False, (1, 1, 1, 4, 1)),
    ((3, 1, 2, 2), (0, 1, -4, 2, -1, -1, 1), False, (3, 1, 2, 1, 1, 2)),
])
def test_reshape_inferred_dim_placement(dshape, spec, reverse, want):
    assert infer_reshape(spec, dshape, reverse) == want


def test_reshape_unconsumed_dims_are_an_error():
    """MXNet returns (2, 2, 2, 3) for 24 elements here and corrupts memory; we refuse."""
    with pytest.raises(ShapeError, match="size"):
        nd.Reshape(nd.zeros((2, 1, 2, 3)), shape=(2, -3, 0, 0), reverse=True)


@pytest.mark.skipif(not MXNET_PYTHON.exists(), reason="needs the reference mxnet 1.9.1 venv")
def test_reshape_property_against_live_mxnet(tmp_path):
    """Random specs through mxnet 1.9.1's own InferReshapeShape (Symbol.infer_shape)."""
    rng = np.random.default_rng(0)
    cases = []
    for _ in range(60):
        dshape = tuple(int(d) for d in rng.integers(1, 5, rng.integers(1, 5)))
        spec, src = [], 0
        while src < len(dshape):
            code = int(rng.choice([0, -1, -2, -3, 1]))
            if code == 1:
                code = dshape[src]
            if code == -3 and src + 1 >= len(dshape):
                code = 0
            spec.append(code)
            src = len(dshape) if code == -2 else src + (2 if code == -3 else 1)
        if spec.count(-1) > 1 or (-1 in spec and any(c in (-2, -3) for c in spec[:spec.index(-1)])):
            continue
        cases.append((dshape, tuple(spec), bool(rng.integers(0, 2))))
    script = (
        "import json, sys, mxnet as mx\n"
        "out = []\n"
        "for d, s, r in json.load(open(sys.argv[1])):\n"
        "    try:\n"
        "        out.append(list(mx.sym.Reshape(mx.sym.var('x'), shape=s, reverse=r)"
        ".infer_shape(x=tuple(d))[1][0]))\n"
        "    except Exception:\n"
        "        out.append(None)\n"
        "print(json.dumps(out))\n")
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    (tmp_path / "run.py").write_text(script)
    res = subprocess.run([str(MXNET_PYTHON), str(tmp_path / "run.py"), str(tmp_path / "cases.json")],
                         capture_output=True, text=True, timeout=120, check=True)
    want = json.loads(res.stdout.strip().splitlines()[-1])
    for (dshape, spec, reverse), w in zip(cases, want):
        if w is not None and np.prod(w) == np.prod(dshape):
            assert infer_reshape(spec, dshape, reverse) == tuple(w), (dshape, spec, reverse)
            continue
        try:  # MXNet rejects it or gives a wrong size: an error, or a shape of the right size
            y = nd.Reshape(nd.zeros(dshape), shape=spec, reverse=reverse)
        except MXNetError:
            continue
        assert y.size == np.prod(dshape), (dshape, spec, reverse)


def test_reshape_deprecated_target_shape():
    x = nd.zeros((2, 3, 4))
    assert nd.Reshape(x, target_shape=(0, 4)).shape == (6, 4)  # MXNet
    assert nd.Reshape(x, target_shape=(9, 0, 2), keep_highest=True).shape == (2, 6, 2)  # MXNet
    with pytest.raises(AttrError, match="shape"):
        nd.Reshape(x)


def test_ndarray_reshape_forms():
    x = nd.array(np.arange(24.0).reshape(2, 3, 4))
    assert x.reshape(6, -1).shape == (6, 4)
    assert x.reshape((0, -1)).shape == (2, 12)
    assert x.reshape(shape=(-1, 0), reverse=True).shape == (6, 4)
    assert x.reshape(-4, 1, 2, -2).shape == (1, 2, 3, 4)


def test_reshape_gradient_is_reshape_like():
    _, (g,) = _grad(lambda x: nd.Reshape(x, shape=(0, -3)), np.ones((2, 3, 4)),
                    head=np.arange(24.0).reshape(2, 12))
    np.testing.assert_array_equal(g, np.arange(24.0).reshape(2, 3, 4))


def test_reshape_like_ranges():
    """MXNet's documented examples."""
    def run(lshape, rshape, **kw):
        return nd.reshape_like(nd.zeros(lshape), nd.zeros(rshape), **kw).shape
    assert run((30, 7), (15, 2, 4), lhs_begin=0, lhs_end=1, rhs_begin=0, rhs_end=2) == (15, 2, 7)
    assert run((3, 5), (1, 15, 4), lhs_begin=0, lhs_end=2, rhs_begin=1, rhs_end=2) == (15,)
    assert run((30, 12), (4, 2, 2, 3), lhs_begin=-1, lhs_end=None, rhs_begin=1, rhs_end=None) == (30, 2, 2, 3)
    with pytest.raises(ShapeError):
        run((2, 3), (4, 5))


# -- indexing through slice / Reshape ------------------------------------------------------

def test_basic_indexing_records_slice_with_gradient():
    x = np.arange(24.0).reshape(4, 6)
    y, (g,) = _grad(lambda a: a[1:3, ::2], x, head=np.arange(6.0).reshape(2, 3) + 1)
    np.testing.assert_array_equal(y, x[1:3, ::2])
    want = np.zeros_like(x)
    want[1:3, ::2] = np.arange(6.0).reshape(2, 3) + 1
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("key", [(2,), (slice(None, None, -1), 1), (Ellipsis, slice(-2, None)),
                                 (slice(3, 0, -2), None, slice(1, 5, 3))])
def test_indexing_under_record_matches_numpy(key):
    x = np.arange(24.0).reshape(4, 6)
    want = x[key]
    want = want.reshape(1) if want.ndim == 0 else want
    y, (g,) = _grad(lambda a: a[key], x)
    np.testing.assert_array_equal(y, want)
    ref = np.zeros_like(x)
    ref[tuple(k for k in key if k is not None)] += 1
    np.testing.assert_array_equal(g, ref)


# -- shape inference -------------------------------------------------------------------------

def _infer(name, *shapes, **attrs):
    op = get_op(name)
    return op.infer_shape(op.parse_attrs(attrs), *shapes)


def test_reshape_infers_with_unknown_dims():
    assert _infer("Reshape", (0, 3, 4), shape=(0, -1)) == ([(0, 3, 4)], [(0, 0)])  # MXNet
    assert _infer("Reshape", (0, 3, 4), shape=(-1, 12)) == ([(0, 3, 4)], [(0, 12)])  # MXNet
    assert _infer("Reshape", (2, 0, 4), shape=(0, -3)) == ([(2, 0, 4)], [(2, 0)])  # MXNet
    # a fully known target fixes the one unknown input dim (MXNet's ReverseReshapeInferShape)
    assert _infer("Reshape", (2, 0, 4), shape=(6, 4)) == ([(2, 3, 4)], [(6, 4)])
    assert _infer("Reshape", None, shape=(6, 4)) is None


def test_concat_fills_non_axis_dims():
    ins, outs = _infer("Concat", (2, 3), (0, 0), dim=0, num_args=2)
    assert ins == [(2, 3), (0, 3)] and outs == [(0, 3)]  # MXNet
    ins, outs = _infer("Concat", (2, 0), (3, 4), None, dim=0, num_args=3)
    assert ins == [(2, 4), (3, 4), (0, 4)] and outs == [(0, 4)]
    assert _infer("Concat", (2, 0), (3, 4), dim=0, num_args=2)[1] == [(5, 4)]  # MXNet
    with pytest.raises(ShapeError, match="arg1"):
        _infer("Concat", (2, 3), (2, 4), dim=0, num_args=2)


def test_split_shapes_and_back_filling():
    assert _infer("SliceChannel", (0, 4), num_outputs=2, axis=1)[1] == [(0, 2), (0, 2)]  # MXNet
    assert _infer("SliceChannel", (2, 0), num_outputs=3, squeeze_axis=True)[0] == [(2, 3)]
    assert _infer("_split_v2", (4, 5), indices=(0, 1, 3), axis=1)[1] == [(4, 1), (4, 2), (4, 2)]
    with pytest.raises(ShapeError, match="divide"):
        _infer("SliceChannel", (2, 5), num_outputs=2)


@pytest.mark.parametrize("name,shape,attrs,want", [
    ("transpose", (0, 3, 4), {}, (4, 3, 0)),  # MXNet
    ("expand_dims", (0, 3), {"axis": 1}, (0, 1, 3)),  # MXNet
    ("SwapAxis", (0, 3), {"dim1": 0, "dim2": 1}, (3, 0)),  # MXNet
    ("slice", (5, 0), {"begin": (1,), "end": (3,)}, (2, 0)),  # MXNet
    ("slice_axis", (0, 5), {"axis": 1, "begin": 1, "end": 3}, (0, 2)),  # MXNet
    ("Pad", (0, 1, 2, 2), {"mode": "edge", "pad_width": (0, 0, 0, 0, 1, 1, 1, 1)}, (0, 1, 4, 4)),  # MXNet
    ("tile", (0, 3), {"reps": (2, 2)}, (0, 6)),
    ("repeat", (0, 3), {"repeats": 2, "axis": 1}, (0, 6)),
    ("shape_array", (0, 3, 2), {}, (3,)),
    ("size_array", (0, 3), {}, (1,)),
])
def test_partial_shapes(name, shape, attrs, want):
    assert _infer(name, shape, **attrs)[1] == [want]


def test_stack_unifies_inputs():
    assert _infer("stack", (0, 3), (2, 0), num_args=2, axis=0) == ([(2, 3), (2, 3)], [(2, 2, 3)])


def test_symbolic_infer_and_gradient_through_splits():
    x, y = sym.var("x"), sym.var("y")
    parts = sym.SliceChannel(sym.Concat(x, y, dim=1), num_outputs=3, axis=1)
    out = sym.Reshape(parts[1], shape=(-1,))
    assert out.infer_shape(x=(2, 1), y=(2, 2))[1] == [(2,)]
    ex = out.simple_bind(nd.cpu(), x=(2, 1), y=(2, 2))
    ex.forward(is_train=True, x=nd.array([[1.0], [2.0]]), y=nd.array([[3.0, 4.0], [5.0, 6.0]]))
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [3.0, 5.0])
    ex.backward(nd.array([10.0, 20.0]))
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), [[0.0], [0.0]])
    np.testing.assert_array_equal(ex.grad_dict["y"].asnumpy(), [[10.0, 0.0], [20.0, 0.0]])


# -- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("call,error,match", [
    (lambda: nd.Reshape(nd.zeros((2, 3)), shape=(4, -1)), ShapeError, "size"),
    (lambda: nd.Reshape(nd.zeros((2, 3)), shape=(-1, -1)), ShapeError, "more than one -1"),
    (lambda: nd.Reshape(nd.zeros((2, 3)), shape=(-5,)), AttrError, "invalid code"),
    (lambda: nd.slice_axis(nd.zeros((3, 4)), axis=1, begin=2, end=1), ShapeError, "invalid begin"),  # MXNet
    (lambda: nd.slice_axis(nd.zeros((3, 4)), axis=1, begin=-10, end=10), ShapeError, "invalid"),  # MXNet
    (lambda: nd.slice(nd.zeros((3, 4)), begin=(0,), end=(1, 2)), AttrError, "same length"),
    (lambda: nd.slice(nd.zeros((3, 4)), begin=(0,), end=(1,), step=(0,)), AttrError, "cannot be 0"),
    (lambda: nd.squeeze(nd.zeros((2, 1)), axis=0), ShapeError, "not 1"),  # MXNet
    (lambda: nd.Pad(nd.zeros((3, 4)), mode="constant", pad_width=(1, 1, 1, 1)), ShapeError, "4-D"),  # MXNet
    (lambda: nd.Pad(nd.zeros((1, 1, 3, 4)), mode="constant", pad_width=(1, 1, 1, 1, 1, 1, 1, 1)),
     AttrError, "first two axes"),  # MXNet
    (lambda: nd.Pad(nd.zeros((1, 1, 1, 4), dtype="int32"), mode="edge", pad_width=(0, 0, 0, 0, 0, 0, 1, 1)),
     DTypeError, "floating point"),  # MXNet
    (lambda: nd.Pad(nd.zeros((1, 1, 1, 4)), mode="reflect", pad_width=(0, 0, 0, 0, 0, 0, 4, 4)),
     ShapeError, "smaller"),  # MXNet
    (lambda: nd.Pad(nd.zeros((1, 1, 1, 4)), mode="wrap", pad_width=(0,) * 8), AttrError, "mode"),
    (lambda: nd.SliceChannel(nd.zeros((2, 5)), num_outputs=2), ShapeError, "divide"),
    (lambda: nd.SliceChannel(nd.zeros((2, 4)), num_outputs=2, squeeze_axis=True), ShapeError, "squeeze"),
    (lambda: nd._internal._split_v2(nd.zeros((10,)), indices=(2, 5), axis=0), ShapeError, "start at 0"),  # MXNet
    (lambda: nd._internal._split_v2(nd.zeros((10,)), indices=(0, 5, 3), axis=0), ShapeError, "must not decrease"),
    (lambda: nd.concat(nd.zeros((2, 3)), nd.zeros((2, 3), dtype="float64"), dim=0), DTypeError, "got float64"),
    (lambda: nd.concat(nd.zeros((2, 3)), nd.zeros((3, 3)), dim=1), ShapeError, "arg1"),
    (lambda: nd.Cast(nd.zeros((2,)), dtype="bfloat16"), AttrError, "bfloat16"),
    (lambda: nd.Cast(nd.zeros((2,)), dtype="complex64"), AttrError, "dtype"),
    (lambda: nd.tile(nd.zeros((2,)), reps=(0, 2)), AttrError, "positive"),  # MXNet
    (lambda: nd.repeat(nd.zeros((2,)), repeats=-1), AttrError, ">= 0"),
    (lambda: nd.diag(nd.zeros((3, 4)), k=5), ShapeError, "does not exist"),  # MXNet
    (lambda: nd.diag(nd.zeros((3, 4)), axis1=1, axis2=-1), ShapeError, "same axis"),
    (lambda: nd.transpose(nd.zeros((2, 3)), axes=(0, 0)), ShapeError, "permutation"),
    (lambda: nd.expand_dims(nd.zeros((2, 3)), axis=4), ShapeError, "out of range"),
    (lambda: nd.slice_like(nd.zeros((3, 4)), nd.zeros((1, 2, 3))), ShapeError, "dims"),  # MXNet
    (lambda: nd.depth_to_space(nd.zeros((1, 3, 2, 2)), block_size=2), ShapeError, "multiple"),
    (lambda: nd.depth_to_space(nd.empty((1, 4, 0, 2)), block_size=2), ShapeError, "cannot be 0"),
    (lambda: nd.space_to_depth(nd.empty((1, 0, 2, 2)), block_size=2), ShapeError, "cannot be 0"),
    (lambda: nd.space_to_depth(nd.zeros((1, 1, 3, 4)), block_size=2), ShapeError, "multiples"),
])
def test_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- values MXNet gives -------------------------------------------------------------------------

def test_cast_wraps_like_c():
    x = nd.array([300, 11.1, 10.9, -1, -3, -1.7, -0.5])
    np.testing.assert_array_equal(nd.Cast(x, dtype="uint8").asnumpy(), [44, 11, 10, 255, 253, 255, 0])  # MXNet
    np.testing.assert_array_equal(nd.Cast(x, dtype="int8").asnumpy(), [44, 11, 10, -1, -3, -1, 0])  # MXNet
    b = nd.Cast(nd.array([0.5, -0.5, np.nan, 0.0]), dtype="bool")
    assert b.dtype == np.bool_ and b.asnumpy().tolist() == [True, True, True, False]  # MXNet


def test_cast_gradient_returns_to_input_dtype():
    _, (g,) = _grad(lambda x: nd.Cast(x, dtype="float64"), np.ones(3, dtype=np.float32))
    assert g.dtype == np.float32


def test_clip_semantics():
    np.testing.assert_array_equal(nd.clip(nd.array([0, 1.5, 3]), a_min=2, a_max=1).asnumpy(), [2, 1, 1])  # MXNet
    y = nd.clip(nd.array([0, 1, 2, 3], dtype="int32"), a_min=0.5, a_max=2.5)
    assert y.dtype == np.int32 and y.asnumpy().tolist() == [0, 1, 2, 2]  # MXNet
    # the bounds are float32 (MXNet's real_t), also for float64 data
    y = nd.clip(nd.array([2.0], dtype="float64"), a_min=0.0, a_max=1.1).asnumpy()
    assert y[0] == float(np.float32(1.1))
    _, (g,) = _grad(lambda x: nd.clip(x, a_min=1, a_max=2), np.array([0.0, 1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g, [0, 1, 1, 0])  # MXNet: the bounds pass the gradient


def test_shape_and_size_array():
    x = nd.zeros((2, 3, 4), dtype="float16")
    assert nd.shape_array(x).dtype == np.int64 and nd.shape_array(x).asnumpy().tolist() == [2, 3, 4]
    assert nd.size_array(x).asnumpy().tolist() == [24]
    _, (g,) = _grad(lambda a: nd.Cast(nd.shape_array(a), dtype="float32"), np.ones((2, 3)))
    np.testing.assert_array_equal(g, np.zeros((2, 3)))  # MXNet: zero gradient, not an error


def test_repeat_zero_times_is_flat_and_empty():
    y, (g,) = _grad(lambda a: nd.repeat(a, repeats=0, axis=1), np.ones((2, 3)))
    assert y.shape == (0,)  # MXNet
    np.testing.assert_array_equal(g, np.zeros((2, 3)))  # MXNet


def test_squeeze_everything_keeps_one_dim():
    assert nd.squeeze(nd.zeros((1, 1))).shape == (1,)  # MXNet


def test_pad_modes_match_numpy():
    x = np.arange(12.0).reshape(1, 1, 1, 12)
    y = nd.Pad(nd.array(x), mode="reflect", pad_width=(0, 0, 0, 0, 0, 0, 3, 4)).asnumpy()
    np.testing.assert_array_equal(y.ravel()[:8], [3, 2, 1, 0, 1, 2, 3, 4])  # MXNet
    y = nd.Pad(nd.array(x[..., :4]), mode="edge", pad_width=(0, 0, 0, 0, 0, 0, 6, 6)).asnumpy()
    assert y.shape == (1, 1, 1, 16) and y.ravel()[:7].tolist() == [0] * 7  # MXNet


def test_depth_space_round_trip():
    x = nd.array(np.arange(16.0).reshape(1, 4, 2, 2))
    y = nd.depth_to_space(x, block_size=2)
    assert y.asnumpy().ravel()[:8].tolist() == [0, 4, 1, 5, 8, 12, 9, 13]  # MXNet
    np.testing.assert_array_equal(nd.space_to_depth(y, block_size=2).asnumpy(), x.asnumpy())


def test_diag_on_axes():
    x = nd.array(np.arange(24.0).reshape(2, 3, 4))
    assert nd.diag(x).shape == (4, 2)  # MXNet
    y = nd.diag(x, k=1, axis1=-1, axis2=0)
    assert y.shape == (3, 1) and y.asnumpy().ravel().tolist() == [12, 16, 20]  # MXNet
    assert nd.diag(nd.zeros((3, 4)), k=4).shape == (0,)  # MXNet


def test_outputs_never_alias_inputs():
    x = nd.array(np.arange(6.0).reshape(2, 3))
    for y in (nd.Reshape(x, shape=(3, 2)), nd.transpose(x), nd.slice(x, begin=(0,), end=(1,)),
              nd.expand_dims(x, axis=0), nd.Flatten(x), *nd.split(x, num_outputs=3)):
        y[:] = -1
    np.testing.assert_array_equal(x.asnumpy(), np.arange(6.0).reshape(2, 3))


def test_second_order_through_hidden_backward_ops():
    """The gradients of the hidden backward ops (here `_backward_tile`) are recorded too."""
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        t = nd.tile(x, reps=(3,))
        y = nd.elemwise_mul(t, t)
        (dx,) = [autograd.grad(y, [x], head_grads=[nd.ones((6,))], create_graph=True)[0]]
    dx.backward()
    np.testing.assert_allclose(dx.asnumpy(), [6.0, 12.0])  # d/dx sum(3 x^2) = 6 x
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, 6.0])


@pytest.mark.parametrize("name,make", [
    ("slice", lambda a: nd.slice(a, begin=(None, 1), end=(None, None), step=(1, 2))),
    ("slice_axis", lambda a: nd.slice_axis(a, axis=-1, begin=1, end=None)),
    ("Pad", lambda a: nd.Pad(nd.Reshape(a, shape=(1, 1, 3, 4)), mode="reflect",
                             pad_width=(0, 0, 0, 0, 1, 1, 2, 1))),
    ("diag", lambda a: nd.diag(a, k=1)),
    ("Concat", lambda a: nd.concat(a, nd.elemwise_mul(a, a), dim=0)),
    ("repeat", lambda a: nd.repeat(a, repeats=2, axis=0)),
])
def test_second_order_matches_finite_differences(name, make):
    """d/dx <v, d/dx <h, f(x)*f(x)>> against central differences of the first gradient."""
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((3, 4))
    v = rng.standard_normal((3, 4))

    def first(xv, create):
        x = nd.array(xv, dtype="float64")
        x.attach_grad()
        with autograd.record():
            y = make(x)
            y = nd.elemwise_mul(y, y)
            head = nd.array(np.linspace(0.5, 1.5, y.size).reshape(y.shape), dtype="float64")
            g = autograd.grad(y, [x], head_grads=[head], create_graph=create)[0]
        return x, g
    x, g = first(x0, True)
    g.backward(nd.array(v, dtype="float64"))
    eps = 1e-6
    numeric = (first(x0 + eps * v, False)[1].asnumpy() - first(x0 - eps * v, False)[1].asnumpy()) / (2 * eps)
    np.testing.assert_allclose(x.grad.asnumpy(), numeric, rtol=1e-5, atol=1e-6)
