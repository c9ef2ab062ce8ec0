"""Record MXNet 1.9.1's optimizer-update results for tests/nd/test_optim_ops.py.

Run with the real MXNet (its venv is not a dependency of the project):

    /work/mxvenv/bin/python tests/data/gen_optim_ref.py

It writes tests/data/optim_ref.json (cases: op, attributes, input names, which
inputs the op mutates, dtypes) and tests/data/optim_ref.npz: one float64 vector per
case id holding, flattened in order, every input before the call, the output,
and each mutated input after the call (all values are exact in float64).
"""
import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
SHAPE = (2, 3)
CLIP = [{}, {"wd": 0.1, "rescale_grad": 0.5}, {"clip_gradient": 0.3, "wd": 0.05},
        {"clip_gradient": 0.0}, {"clip_gradient": -2.0, "rescale_grad": 2.0}]

# op -> (input names, mutated input indices, attribute variants, positive inputs, fp16 weight/grad)
OPS = {
    "sgd_update": (["weight", "grad"], [], [{"lr": 0.1, **c} for c in CLIP]),
    "sgd_mom_update": (["weight", "grad", "mom"], [2],
                       [{"lr": 0.1, **c} for c in CLIP] + [{"lr": 0.2, "momentum": 0.9, "wd": 0.01}]),
    "nag_mom_update": (["weight", "grad", "mom"], [2],
                       [{"lr": 0.1, "momentum": 0.9, **c} for c in CLIP] + [{"lr": 0.1}]),
    "adam_update": (["weight", "grad", "mean", "var"], [2, 3],
                    [{"lr": 0.01, **c} for c in CLIP] + [{"lr": 0.01, "beta1": 0.5, "beta2": 0.7, "epsilon": 0.1}]),
    "rmsprop_update": (["weight", "grad", "n"], [2],
                       [{"lr": 0.01, **c} for c in CLIP] + [{"lr": 0.05, "gamma1": 0.5, "epsilon": 0.01,
                                                             "clip_weights": 0.4}]),
    "rmspropalex_update": (["weight", "grad", "n", "g", "delta"], [2, 3, 4],
                           [{"lr": 0.01, **c} for c in CLIP]
                           + [{"lr": 0.05, "gamma1": 0.5, "gamma2": 0.3, "epsilon": 0.01, "clip_weights": 0.4}]),
    "_sparse_adagrad_update": (["weight", "grad", "history"], [2],
                               [{"lr": 0.1}, {"lr": 0.1, "rescale_grad": 0.5, "clip_gradient": 0.3},
                                {"lr": 0.1, "epsilon": 0.01}, {"lr": 0.1, "clip_gradient": 0.0}]),
    "ftrl_update": (["weight", "grad", "z", "n"], [2, 3],
                    [{"lr": 0.1, **c} for c in CLIP] + [{"lr": 0.2, "lamda1": 0.5, "beta": 0.5}]),
    "signsgd_update": (["weight", "grad"], [], [{"lr": 0.1, **c} for c in CLIP]),
    "signum_update": (["weight", "grad", "mom"], [2],
                      [{"lr": 0.1, "momentum": 0.9, **c} for c in CLIP] + [{"lr": 0.1, "wd_lh": 0.2}]),
    "ftml_update": (["weight", "grad", "d", "v", "z"], [2, 3, 4],
                    [{"lr": 0.1, "t": 1, **{("clip_grad" if k == "clip_gradient" else k): v for k, v in c.items()}}
                     for c in CLIP] + [{"lr": 0.05, "t": 3, "beta1": 0.5, "beta2": 0.9, "epsilon": 0.01}]),
    "mp_sgd_update": (["weight", "grad", "weight32"], [2], [{"lr": 0.1, **c} for c in CLIP]),
    "mp_sgd_mom_update": (["weight", "grad", "mom", "weight32"], [2, 3],
                          [{"lr": 0.1, "momentum": 0.9, **c} for c in CLIP]),
    "mp_nag_mom_update": (["weight", "grad", "mom", "weight32"], [2, 3],
                          [{"lr": 0.1, "momentum": 0.9, **c} for c in CLIP]),
    "lamb_update_phase1": (["weight", "grad", "mean", "var"], [2, 3],
                           [{"t": 1, "wd": 0.0, **c} for c in CLIP]
                           + [{"t": 5, "wd": 0.1, "bias_correction": False},
                              {"t": 3, "wd": 0.1, "beta1": 0.5, "beta2": 0.7, "epsilon": 0.01}]),
    "lamb_update_phase2": (["weight", "g", "r1", "r2"], [],
                           [{"lr": 0.1}, {"lr": 0.1, "lower_bound": 3.0}, {"lr": 0.1, "upper_bound": 0.5},
                            {"lr": 0.1, "lower_bound": 0.1, "upper_bound": 0.2}, {"lr": 0.1, "r1zero": 1}]),
    "mp_lamb_update_phase1": (["weight", "grad", "mean", "var", "weight32"], [2, 3],
                              [{"t": 2, "wd": 0.1, **c} for c in CLIP[:3]]),
    "mp_lamb_update_phase2": (["weight", "g", "r1", "r2", "weight32"], [4],
                              [{"lr": 0.1}, {"lr": 0.1, "lower_bound": 3.0, "upper_bound": 5.0}]),
}
POSITIVE = {"var", "n", "history", "v", "d", "r1", "r2"}
MP_LOW = {"weight", "grad"}  # the mp_ ops' low-precision inputs; every other one is float32


def inputs_for(op, names, rng, dtype):
    vals = {}
    for n in names:
        shape = (1,) if n in ("r1", "r2") else SHAPE
        x = rng.standard_normal(shape)
        if n in POSITIVE:
            x = np.abs(x) + 0.1
        vals[n] = x
    if op == "rmspropalex_update":
        vals["n"] = vals["g"] ** 2 + np.abs(vals["n"])
    if op.startswith("mp_"):
        vals["weight32"] = vals["weight"]
    out = {}
    for n, x in vals.items():
        dt = "float32" if (op.startswith("mp_") and n not in MP_LOW) else dtype
        out[n] = x.astype(dt)
    if op.startswith("mp_"):
        out["weight32"] = out["weight"].astype("float32")
    return out


def main():
    rng = np.random.default_rng(1234)
    cases, arrays = [], {}
    for op, (names, mutated, variants) in OPS.items():
        dtypes = ["float16"] if op.startswith("mp_") else ["float32", "float64"]
        for dtype in dtypes:
            for k, attrs in enumerate(variants):
                attrs = dict(attrs)
                r1zero = attrs.pop("r1zero", 0)
                cid = f"{op}/{dtype}/{k}"
                ins = inputs_for(op, names, rng, dtype)
                if r1zero:
                    ins["r1"][:] = 0
                nds = [mx.nd.array(ins[n], dtype=ins[n].dtype) for n in names]
                if op == "_sparse_adagrad_update":  # MXNet has only the row_sparse-gradient kernel
                    nds[1] = nds[1].tostype("row_sparse")
                    out = mx.nd.sparse.adagrad_update(*nds, out=nds[0], **attrs)  # it must run in place
                else:
                    out = getattr(mx.nd, op)(*nds, **attrs)
                parts = [ins[n] for n in names] + [out.asnumpy()] + [nds[i].asnumpy() for i in mutated]
                arrays[cid] = np.concatenate([p.astype(np.float64).ravel() for p in parts])
                cases.append({"id": cid, "op": op, "attrs": {a: str(v) for a, v in attrs.items()},
                              "inputs": names, "mutated": mutated,
                              "shapes": [list(p.shape) for p in parts],
                              "dtypes": [str(p.dtype) for p in parts]})
    (HERE / "optim_ref.json").write_text(json.dumps({"mxnet_version": mx.__version__, "cases": cases},
                                                    separators=(",", ":")))
    np.savez_compressed(HERE / "optim_ref.npz", **arrays)
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
