"""Spec for nd/ops/bbox.py (`_contrib_box_decode`), with a float64 reference of MXNet's kernel."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec

_SIGN = np.asarray([-1, -1, 1, 1])


def _case(draw):
    b, n = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.RandomState(seed)
    data = rng.uniform(0, 1, (b, n, 4)) * _SIGN
    anchors = rng.uniform(0, 1, (1, n, 4)) * _SIGN
    attrs = {"format": draw(st.sampled_from(["center", "corner"])),
             "clip": draw(st.sampled_from([-1.0, 0.0, 0.5, 5.0]))}
    if draw(st.booleans()):
        attrs.update(std0=0.3, std1=1.4, std2=0.5, std3=1.6)
    return [data, anchors], attrs


def _ref(data, anchors, format="center", clip=-1.0, std0=1.0, std1=1.0, std2=1.0, std3=1.0):  # noqa: A002
    ax, ay, aw, ah = (anchors[..., i] for i in range(4))
    if format == "corner":
        aw, ah = aw - ax, ah - ay
        ax, ay = ax + aw / 2, ay + ah / 2
    ox, oy = data[..., 0] * std0 * aw + ax, data[..., 1] * std1 * ah + ay
    dw, dh = data[..., 2] * std2, data[..., 3] * std3
    if clip > 0:
        dw, dh = np.minimum(dw, clip), np.minimum(dh, clip)
    ow, oh = np.exp(dw) * aw / 2, np.exp(dh) * ah / 2
    return np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)


SPECS = [OpSpec("_contrib_box_decode", case=_case, ref=_ref, nondiff="zero gradient, as MXNet (MakeZeroGradNodes)")]
