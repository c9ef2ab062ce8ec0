"""Specs for nd/ops/box_nms.py, multibox.py, interleaved.py and box_encode: the detection ops'
values are checked against MXNet 1.9.1's own outputs in tests/nd/ops/test_boxops_mxnet.py (golden);
the interleaved attention matmuls against a reshape/transpose/matmul reference here."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec

_MX = "values checked against MXNet 1.9.1 in tests/nd/ops/test_boxops_mxnet.py"


def _rng(draw):
    return np.random.RandomState(draw(st.integers(0, 2 ** 16)))


def _boxes(rng, shape):
    xy = rng.uniform(0, 0.6, shape + (2,))
    return np.concatenate([xy, xy + rng.uniform(0.05, 0.4, shape + (2,))], -1)


def _nms_case(draw):
    rng = _rng(draw)
    lead = draw(st.sampled_from([(), (2,), (2, 2)]))
    n = draw(st.integers(1, 6))
    x = np.concatenate([rng.randint(0, 3, lead + (n, 1)), rng.uniform(0, 1, lead + (n, 1)),
                        _boxes(rng, lead + (n,))], -1)
    attrs = {"overlap_thresh": draw(st.sampled_from([0.1, 0.5])), "id_index": draw(st.sampled_from([-1, 0])),
             "topk": draw(st.sampled_from([-1, 0, 2])), "force_suppress": draw(st.booleans())}
    if attrs["id_index"] == 0:
        # class-aware suppression compares ids for equality, which the finite-difference step
        # breaks (1 + 1e-6 d1 != 1 + 1e-6 d2): with ids read, suppress across classes; the
        # class-aware case is in the MXNet comparison (tests/nd/ops/test_boxops_mxnet.py)
        attrs["force_suppress"] = True
    # out_format != in_format is left to the MXNet comparison: MXNet's gradient copies the head
    # gradient through the format conversion unchanged, which finite differences do not see
    return [x], attrs


def _nms_backward_case(draw):
    rng = _rng(draw)
    n = draw(st.integers(1, 5))
    rec = np.full((2, n, 1), -1.0)
    for b in range(2):
        k = rng.randint(0, n + 1)
        rec[b, :k, 0] = rng.permutation(n)[:k] + b * n
    return [rng.uniform(-1, 1, (2, n, 6)), rec], {}


def _iou_case(draw):
    rng = _rng(draw)
    return [_boxes(rng, (draw(st.integers(1, 3)),)), _boxes(rng, (2, draw(st.integers(1, 3))))], \
        {"format": draw(st.sampled_from(["corner", "center"]))}


def _match_case(draw):
    rng = _rng(draw)
    return [rng.uniform(0, 1, draw(st.sampled_from([(3, 2), (2, 3, 4)])))], \
        {"threshold": 0.3, "is_ascend": draw(st.booleans())}


def _prior_case(draw):
    return [np.zeros((1, 2, draw(st.integers(1, 4)), draw(st.integers(1, 4))))], \
        {"sizes": (0.5, 0.25), "ratios": draw(st.sampled_from([(1.0,), (1.0, 2.0)])), "clip": draw(st.booleans())}


def _target_case(draw):
    rng = _rng(draw)
    a = draw(st.integers(2, 6))
    label = np.full((2, 2, 5), -1.0)
    label[:, 0] = np.concatenate([[1.0], _boxes(rng, ())])
    return [_boxes(rng, (1, a)), label, rng.uniform(-1, 1, (2, 3, a))], \
        {"negative_mining_ratio": draw(st.sampled_from([-1.0, 1.0]))}


def _detection_case(draw):
    rng = _rng(draw)
    a = draw(st.integers(1, 5))
    return [rng.uniform(0, 1, (2, 3, a)), rng.uniform(-.5, .5, (2, 4 * a)), _boxes(rng, (1, a))], \
        {"nms_topk": draw(st.sampled_from([-1, 2])), "clip": draw(st.booleans())}


def _encode_case(draw):
    rng = _rng(draw)
    n, m = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    return [rng.choice([-1.0, 1.0], (2, n)), rng.randint(0, m, (2, n)).astype(np.float64), _boxes(rng, (2, n)),
            _boxes(rng, (2, m)), np.zeros(4), np.full(4, 0.1)], {}


# -- interleaved attention ------------------------------------------------------------------

def _heads(x, heads, parts):
    s, b, e = x.shape
    return x.reshape(s, b, heads, parts, e // (heads * parts)).transpose(1, 2, 0, 3, 4)   # (b, h, s, parts, d)


def _ref_qk(q, k):   # (b, h, sq, d), (b, h, sk, d)
    return (q / np.sqrt(q.shape[-1])) @ k.swapaxes(-1, -2)


def _ref_val(att, v, heads):   # att (b*h, sq, sk), v (b, h, sk, d) -> (sq, b, h*d)
    b, h, sk, d = v.shape
    out = att.reshape(b, h, -1, sk) @ v
    return out.transpose(2, 0, 1, 3).reshape(-1, b, h * d)


def _sqk_ref(qkv, heads):
    x = _heads(qkv, heads, 3)
    r = _ref_qk(x[..., 0, :], x[..., 1, :])
    return r.reshape(-1, *r.shape[2:])


def _sva_ref(qkv, att, heads):
    return _ref_val(att, _heads(qkv, heads, 3)[..., 2, :], heads)


def _eqk_ref(q, kv, heads):
    r = _ref_qk(_heads(q, heads, 1)[..., 0, :], _heads(kv, heads, 2)[..., 0, :])
    return r.reshape(-1, *r.shape[2:])


def _eva_ref(kv, att, heads):
    return _ref_val(att, _heads(kv, heads, 2)[..., 1, :], heads)


def _attn_dims(draw):
    return draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))


def _sqk_case(draw):
    s, b, h, d = _attn_dims(draw)
    return [_rng(draw).uniform(-1, 1, (s, b, h * 3 * d))], {"heads": h}


def _sva_case(draw):
    s, b, h, d = _attn_dims(draw)
    rng = _rng(draw)
    return [rng.uniform(-1, 1, (s, b, h * 3 * d)), rng.uniform(0, 1, (b * h, s, s))], {"heads": h}


def _eqk_case(draw):
    s, b, h, d = _attn_dims(draw)
    rng = _rng(draw)
    return [rng.uniform(-1, 1, (s, b, h * d)), rng.uniform(-1, 1, (s + 1, b, h * 2 * d))], {"heads": h}


def _eva_case(draw):
    s, b, h, d = _attn_dims(draw)
    rng = _rng(draw)
    return [rng.uniform(-1, 1, (s + 1, b, h * 2 * d)), rng.uniform(0, 1, (b * h, s, s + 1))], {"heads": h}


def _bw_case(fwd_case, ref):
    def case(draw):
        xs, attrs = fwd_case(draw)
        g = _rng(draw).uniform(-1, 1, np.shape(ref(*xs, **attrs)))
        return [g, *xs], attrs
    return case


_BW = "MXNet's backward op, not differentiated again (no FGradient)"
SPECS = [
    OpSpec("_contrib_box_nms", case=_nms_case, golden=True),
    OpSpec("_backward_contrib_box_nms", case=_nms_backward_case, nondiff=_BW + "; " + _MX),
    OpSpec("_contrib_box_iou", case=_iou_case, golden=True, nondiff="zero gradient, as MXNet"),
    OpSpec("_contrib_bipartite_matching", case=_match_case, golden=True, nondiff="zero gradient, as MXNet"),
    OpSpec("_contrib_MultiBoxPrior", case=_prior_case, golden=True, nondiff="zero gradient, as MXNet"),
    OpSpec("_contrib_MultiBoxTarget", case=_target_case, golden=True, nondiff="zero gradient, as MXNet"),
    OpSpec("_contrib_MultiBoxDetection", case=_detection_case, golden=True, nondiff="zero gradient, as MXNet"),
    OpSpec("_contrib_box_encode", case=_encode_case, golden=True, nondiff="zero gradient, as MXNet"),
    OpSpec("_contrib_interleaved_matmul_selfatt_qk", case=_sqk_case, ref=_sqk_ref),
    OpSpec("_contrib_interleaved_matmul_selfatt_valatt", case=_sva_case, ref=_sva_ref),
    OpSpec("_contrib_interleaved_matmul_encdec_qk", case=_eqk_case, ref=_eqk_ref),
    OpSpec("_contrib_interleaved_matmul_encdec_valatt", case=_eva_case, ref=_eva_ref),
    OpSpec("_backward_interleaved_matmul_selfatt_qk", case=_bw_case(_sqk_case, _sqk_ref), nondiff=_BW),
    OpSpec("_backward_interleaved_matmul_selfatt_valatt", case=_bw_case(_sva_case, _sva_ref), nondiff=_BW),
    OpSpec("_backward_interleaved_matmul_encdec_qk", case=_bw_case(_eqk_case, _eqk_ref), nondiff=_BW),
    OpSpec("_backward_interleaved_matmul_encdec_valatt", case=_bw_case(_eva_case, _eva_ref), nondiff=_BW),
]
