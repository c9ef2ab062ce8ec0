"""Random ops export to ONNX's random ops (or an inverse-CDF form of a uniform draw) and import back.

The runtime draws other values than hybridgraph, so each case checks what must hold for any
draw: shape, dtype, support, and mean/std (or class frequencies) within 6 standard errors
of the distribution's, on 20,000 draws. Both onnxruntime's run of the export and
hybridgraph's run of the re-imported model are checked.
"""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="ONNX export needs the onnx package (hybridgraph[onnx])")
ort = pytest.importorskip("onnxruntime", reason="checking exports needs onnxruntime (a test dependency)")

from hybridgraph import symbol  # noqa: E402
from hybridgraph.nd.lowering import exportable_ops  # noqa: E402
from hybridgraph.nd.registry import get_op  # noqa: E402
from hybridgraph.onnx import build_model  # noqa: E402
from hybridgraph.onnx.importer import import_model  # noqa: E402
from hybridgraph.onnx.verification import _run_hybridgraph  # noqa: E402
from hybridgraph.symbol.symbol import create  # noqa: E402

N = (200, 100)
LIKE = np.zeros(N, dtype=np.float32)


def _moments(mean, std, lo=-np.inf, hi=np.inf):
    def check(y):
        n = y.size
        assert lo <= y.min() and y.max() <= hi, (y.min(), y.max())
        assert abs(y.mean() - mean) < 6 * std / np.sqrt(n), (y.mean(), mean)
        assert abs(y.std() - std) < 6 * std / np.sqrt(n / 2), (y.std(), std)
    return check


def _rows(*checks):
    def check(y):
        for row, c in zip(y, checks):
            c(row)
    return check


def _randint(y):
    assert set(np.unique(y)) == set(range(-3, 5)), np.unique(y)
    _moments(0.5, np.sqrt((8 ** 2 - 1) / 12))(y.astype(np.float64))


PROBS = np.asarray([[0.2, 0.8, 0.0], [0.5, 0.25, 0.25]], dtype=np.float32)


def _multinomial(y, logp=None):
    for row, p in zip(y, PROBS):
        freq = np.bincount(row, minlength=3) / row.size
        assert np.all(np.abs(freq - p) < 6 * np.sqrt(p * (1 - p) / row.size) + 1e-12), (freq, p)
    if logp is not None:
        np.testing.assert_allclose(logp, np.log(np.take_along_axis(PROBS, y.astype(np.int64), axis=1)), rtol=1e-5)


# (op, attrs, feeds, output dtype, output shape, check)
CASES = [
    ("_random_uniform", {"low": -2.0, "high": 3.0, "shape": N}, {}, "float32", N,
     _moments(0.5, 5 / np.sqrt(12), -2, 3)),
    ("_random_uniform", {"low": 0.0, "high": 1.0, "shape": N, "dtype": "float64"}, {}, "float64", N,
     _moments(0.5, 1 / np.sqrt(12), 0, 1)),
    ("_random_uniform", {"shape": N, "dtype": "float16"}, {}, "float16", N, _moments(0.5, 1 / np.sqrt(12), 0, 1)),
    ("_random_normal", {"loc": 1.0, "scale": 2.0, "shape": N}, {}, "float32", N, _moments(1.0, 2.0)),
    ("_random_uniform_like", {"low": 1.0, "high": 2.0}, {"data": LIKE}, "float32", N,
     _moments(1.5, 1 / np.sqrt(12), 1, 2)),
    ("_random_normal_like", {"loc": -1.0, "scale": 0.5}, {"data": LIKE}, "float32", N, _moments(-1.0, 0.5)),
    ("_random_exponential", {"lam": 2.0, "shape": N}, {}, "float32", N, _moments(0.5, 0.5, 0)),
    ("_random_exponential_like", {"lam": 4.0}, {"data": LIKE}, "float32", N, _moments(0.25, 0.25, 0)),
    ("_random_randint", {"low": -3, "high": 5, "shape": N}, {}, "int32", N, _randint),
    ("_sample_uniform", {"shape": (10000,)}, {"low": np.asarray([0, 10], "f"), "high": np.asarray([1, 20], "f")},
     "float32", (2, 10000), _rows(_moments(0.5, 1 / np.sqrt(12), 0, 1), _moments(15, 10 / np.sqrt(12), 10, 20))),
    ("_sample_normal", {"shape": (10000,)}, {"mu": np.asarray([0, 5], "f"), "sigma": np.asarray([1, 0.1], "f")},
     "float32", (2, 10000), _rows(_moments(0, 1), _moments(5, 0.1))),
    ("_sample_exponential", {"shape": (10000,)}, {"lam": np.asarray([1, 4], "f")}, "float32", (2, 10000),
     _rows(_moments(1, 1, 0), _moments(0.25, 0.25, 0))),
    ("_sample_multinomial", {"shape": (10000,)}, {"data": PROBS}, "int32", (2, 10000), _multinomial),
]


def test_every_exportable_random_op_has_a_case():
    random_ops = {o.name for o in exportable_ops() if o.name.startswith(("_random_", "_sample_"))}
    assert random_ops - {c[0] for c in CASES} == set()


def _graph(name: str, attrs: dict, feeds: dict):
    op = get_op(name)
    slots = op.input_names(op.parse_attrs(dict(attrs)))
    sym = create(op, [symbol.var(s) for s in slots], dict(attrs), name="draw")
    return sym, {s: feeds[s] for s in slots}


@pytest.mark.parametrize("name,attrs,feeds,dtype,shape,check", CASES,
                         ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_random_op_distribution(name, attrs, feeds, dtype, shape, check):
    sym, feeds = _graph(name, attrs, feeds)
    model = build_model(sym, {}, [v.shape for v in feeds.values()], [v.dtype for v in feeds.values()])
    onnx.checker.check_model(model, full_check=True)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    back, arg, aux = import_model(model)
    for y in (sess.run(None, feeds)[0], _run_hybridgraph(back, {**arg, **aux}, feeds)[0]):
        y = np.asarray(y)
        assert y.shape == shape and y.dtype == np.dtype(dtype), (y.shape, y.dtype)
        check(y.astype(np.float64) if y.dtype == np.float16 else y)


def test_multinomial_log_probabilities():
    sym, feeds = _graph("_sample_multinomial", {"shape": (10000,), "get_prob": True}, {"data": PROBS})
    sym = symbol.Group([sym[0], sym[1]])
    model = build_model(sym, {}, [PROBS.shape])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    sample, logp = sess.run(None, feeds)
    assert sample.shape == logp.shape == (2, 10000) and logp.dtype == np.float32
    _multinomial(sample, logp)
