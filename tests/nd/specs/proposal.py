"""Specs for nd/ops/proposal.py: shapes and the four paths (values: MXNet 1.9.1's own outputs in
tests/nd/ops/test_roi_ops.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec


def _case(multi: bool):
    def case(draw):
        scales = draw(st.sampled_from([(2.0,), (2.0, 4.0)]))
        ratios = draw(st.sampled_from([(1.0,), (0.5, 2.0)]))
        a = len(scales) * len(ratios)
        n, h, w, fs = (draw(st.integers(1, 2)) if multi else 1), draw(st.integers(1, 4)), draw(st.integers(1, 4)), 8
        rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
        cls = rng.random((n, 2 * a, h, w)).astype(np.float32)
        bbox = ((rng.random((n, 4 * a, h, w)) - 0.5) * 0.4).astype(np.float32)
        info = np.array([[h * fs, w * fs, 1.0]] * n, dtype=np.float32)
        attrs = {"feature_stride": fs, "scales": scales, "ratios": ratios,
                 "rpn_min_size": draw(st.sampled_from([1, 8])),
                 "rpn_pre_nms_top_n": draw(st.sampled_from([-1, 3])), "rpn_post_nms_top_n": draw(st.integers(1, 5)),
                 "threshold": draw(st.sampled_from([0.3, 0.7])), "output_score": True}
        return [cls, bbox, info], attrs
    return case


_ZERO = "zero gradient for every input, as MXNet"

SPECS = [
    OpSpec("_contrib_Proposal", case=_case(False), golden=True, nondiff=_ZERO),
    OpSpec("_contrib_MultiProposal", case=_case(True), golden=True, nondiff=_ZERO),
]
