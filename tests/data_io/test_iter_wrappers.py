"""ResizeIter and PrefetchingIter (over NDArrayIter and CSVIter) give the batches, pads and
renamed descriptions MXNet 1.9.1 gives (recorded by tests/data/gen_iter_wrappers_ref.py)."""
from __future__ import annotations

import json
from pathlib import Path

import hybridgraph as mx
from tests.data.gen_iter_wrappers_ref import run

REF = Path(__file__).resolve().parents[1] / "data" / "data_io_ref" / "iter_wrappers.json"


def test_wrappers_match_mxnet():
    want = json.loads(REF.read_text())
    got = run(mx)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"case {i}"
