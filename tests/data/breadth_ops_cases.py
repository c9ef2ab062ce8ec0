"""The aggregated-SGD cases of gen_breadth_ops_ref.py, shared with the test that replays them."""
from __future__ import annotations

import numpy as np

SGD_CASES = [
    {"tag": "mp_sgd", "op": "multi_mp_sgd_update", "mom": False, "mp": True, "pre": False,
     "attrs": {"lrs": (0.1, 0.05), "wds": (0.01, 0.0), "rescale_grad": 0.5, "num_weights": 2}},
    {"tag": "mp_sgd_mom", "op": "multi_mp_sgd_mom_update", "mom": True, "mp": True, "pre": False,
     "attrs": {"lrs": (0.1, 0.05), "wds": (0.01, 0.1), "momentum": 0.9, "clip_gradient": 0.3, "num_weights": 2}},
    {"tag": "pre_sgd", "op": "preloaded_multi_sgd_update", "mom": False, "mp": False, "pre": True,
     "attrs": {"rescale_grad": 2.0, "clip_gradient": 0.5, "num_weights": 2}},
    {"tag": "pre_sgd_mom", "op": "preloaded_multi_sgd_mom_update", "mom": True, "mp": False, "pre": True,
     "attrs": {"momentum": 0.8, "num_weights": 3}},
    {"tag": "pre_mp_sgd", "op": "preloaded_multi_mp_sgd_update", "mom": False, "mp": True, "pre": True,
     "attrs": {"rescale_grad": 0.25, "num_weights": 2}},
    {"tag": "pre_mp_sgd_mom", "op": "preloaded_multi_mp_sgd_mom_update", "mom": True, "mp": True, "pre": True,
     "attrs": {"momentum": 0.9, "clip_gradient": 1.0, "rescale_grad": 3.0, "num_weights": 2}},
]

_SHAPES = [(3,), (2, 2), (4,)]


def inputs_for(case: dict) -> tuple:
    """(operator name, attributes, input arrays) of one case, from a seeded generator."""
    rng = np.random.default_rng(len(case["tag"]) * 7919 + case["attrs"]["num_weights"])
    n = case["attrs"]["num_weights"]
    dt = np.float16 if case["mp"] else np.float32
    arrays = []
    for i in range(n):
        w = rng.standard_normal(_SHAPES[i]).astype(dt)
        arrays += [w, rng.standard_normal(_SHAPES[i]).astype(dt)]
        if case["mom"]:
            arrays.append(rng.standard_normal(_SHAPES[i]).astype(np.float32))
        if case["mp"]:
            arrays.append(w.astype(np.float32))
    if case["pre"]:
        arrays += [rng.uniform(0.01, 0.2, n).astype(np.float32), rng.uniform(0, 0.1, n).astype(np.float32)]
    return case["op"], dict(case["attrs"]), arrays
