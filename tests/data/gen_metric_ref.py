"""Write metric_ref.npz: inputs and MXNet 1.9.1's values of every metric on them.

Run with MXNet's interpreter from this directory:  /work/mxvenv/bin/python gen_metric_ref.py
"""
import json

import mxnet as mx
import numpy as np

# (case, metric name, kwargs, input kind)
CASES = [
    ("acc", "acc", {}, "cls"),
    ("acc_axis0", "acc", {"axis": 0}, "cls_t"),
    ("acc_labels", "acc", {}, "cls_same"),
    ("top3", "top_k_accuracy", {"top_k": 3}, "cls"),
    ("f1_macro", "f1", {}, "bin"),
    ("f1_micro", "f1", {"average": "micro"}, "bin"),
    ("mcc_macro", "mcc", {}, "bin"),
    ("mcc_micro", "mcc", {"average": "micro"}, "bin"),
    ("mae", "mae", {}, "reg"),
    ("mse", "mse", {}, "reg"),
    ("rmse", "rmse", {}, "reg"),
    ("ce", "ce", {}, "prob"),
    ("nll", "nll_loss", {"eps": 1e-8}, "prob"),
    ("perplexity", "perplexity", {"ignore_label": None}, "prob"),
    ("perplexity_ignore", "perplexity", {"ignore_label": 1}, "prob"),
    ("pearsonr", "pearsonr", {}, "reg"),
    ("pearsonr_micro", "pearsonr", {"average": "micro"}, "reg"),
    ("pcc", "pcc", {}, "cls"),
    ("loss", "loss", {}, "reg"),
]


def inputs(kind, rng):
    """Two batches of (labels, preds) for an input kind."""
    out = []
    for n in (6, 5):
        if kind in ("cls", "cls_t", "cls_same"):
            label = rng.randint(0, 4, n).astype("float32")
            pred = rng.rand(n, 4).astype("float32")
            if kind == "cls_t":
                pred = pred.T.copy()
            if kind == "cls_same":
                pred = rng.randint(0, 4, n).astype("float32")
        elif kind == "bin":
            label = rng.randint(0, 2, n).astype("float32")
            pred = rng.rand(n, 2).astype("float32")
        elif kind == "prob":
            label = rng.randint(0, 3, n).astype("float32")
            pred = rng.rand(n, 3).astype("float32")
            pred /= pred.sum(axis=1, keepdims=True)
        else:
            label = rng.rand(n).astype("float32")
            pred = (label + rng.randn(n) * 0.3).astype("float32")
        out.append((label, pred))
    return out


def main():
    rng = np.random.RandomState(3)
    data = {}
    values = {}
    for case, name, kwargs, kind in CASES:
        batches = inputs(kind, rng)
        metric = mx.metric.create(name, **kwargs)
        got = []
        for i, (label, pred) in enumerate(batches):
            data[f"{case}/label{i}"] = label
            data[f"{case}/pred{i}"] = pred
            metric.update([mx.nd.array(label)], [mx.nd.array(pred)])
            got.append([metric.get(), metric.get_global()])
        metric.reset_local()
        got.append([metric.get(), metric.get_global()])
        values[case] = [[[n, float(v)] for n, v in pair] for pair in got]
    data["cases"] = np.array(json.dumps(CASES))
    data["values"] = np.array(json.dumps(values))
    np.savez_compressed("metric_ref.npz", **data)


if __name__ == "__main__":
    main()
