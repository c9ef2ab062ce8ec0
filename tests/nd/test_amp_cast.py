"""amp_cast against MXNet 1.9.1 (tests/data/amp_cast_ref.json from tests/data/gen_amp_cast_ref.py):
float16/float32 are cast, other dtypes pass through; the gradient comes back in the input's dtype."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd

REF = json.loads((pathlib.Path(__file__).parent.parent / "data" / "amp_cast_ref.json").read_text())


@pytest.mark.parametrize("case", REF, ids=[f"{c['in']}->{c['dtype']}" for c in REF])
def test_matches_mxnet(case):
    x = nd.array(case["x"], dtype=case["in"])
    x.attach_grad()
    with autograd.record():
        y = nd.amp_cast(x, dtype=case["dtype"])
    y.backward(nd.ones(y.shape, dtype=y.dtype) * 2)
    assert np.dtype(y.dtype).name == case["out_dtype"] and np.dtype(x.grad.dtype).name == case["grad_dtype"]
    assert y.asnumpy().tolist() == case["out"] and x.grad.asnumpy().tolist() == case["grad"]


def test_symbol_type_inference():
    sym = mx.sym.amp_cast(mx.sym.var("x"), dtype="float16")
    assert sym.infer_type(x=np.float32)[1] == [np.float16]
    assert sym.infer_type(x=np.int32)[1] == [np.int32]
