"""Writes boxops_ref.npz: MXNet 1.9.1's outputs (and gradients) of the detection and interleaved
attention operators on small random inputs, for tests/nd/ops/test_boxops_mxnet.py.

Run with the MXNet oracle (never a dependency of the project):
    /work/main/.mxvenv/bin/python tests/data/boxops/gen_boxops_ref.py
Each case is stored as `<case>/<key>` arrays plus `<case>/attrs` (a JSON string).
"""
from __future__ import annotations

import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boxops_ref.npz")
rng = np.random.RandomState(7)
store: dict = {}


def put(case: str, attrs: dict, **arrays) -> None:
    store[f"{case}/attrs"] = np.array(json.dumps(attrs))
    for k, v in arrays.items():
        store[f"{case}/{k}"] = np.asarray(v)


def records(b, n, width, coord, score, cid, n_cls, dtype, center=False, ties=False):
    x = np.full((b, n, width), 0.0)
    xy = rng.uniform(0, 0.6, (b, n, 2))
    wh = rng.uniform(0.05, 0.4, (b, n, 2))
    box = np.concatenate([xy + wh / 2, wh], -1) if center else np.concatenate([xy, xy + wh], -1)
    x[..., coord:coord + 4] = box
    s = rng.uniform(0, 1, (b, n))
    if ties:
        s = np.round(s * 4) / 4
    x[..., score] = s
    if cid >= 0:
        x[..., cid] = rng.randint(-1, n_cls, (b, n))
    for j in range(width):
        if j not in range(coord, coord + 4) and j not in (score, cid):
            x[..., j] = rng.uniform(-1, 1, (b, n))
    return x.astype(dtype)


def nms_cases():
    i = 0
    for dtype in ("float32", "float64", "float16"):
        for _ in range(14):
            width = rng.randint(6, 9)
            coord = rng.randint(0, width - 3)
            others = [j for j in range(width) if j not in range(coord, coord + 4)]
            rng.shuffle(others)
            score, cid = others[0], others[1] if rng.rand() < 0.7 else -1
            fmt_in, fmt_out = rng.choice(["corner", "center"]), rng.choice(["corner", "center"])
            lead = [(), (2,), (2, 3)][rng.randint(3)]
            n = rng.randint(1, 9)
            b = int(np.prod(lead)) if lead else 1
            x = records(b, n, width, coord, score, cid, 3, dtype, center=fmt_in == "center", ties=rng.rand() < .4)
            x = x.reshape(lead + (n, width))
            attrs = dict(overlap_thresh=float(rng.choice([0.1, 0.3, 0.5, 0.8])),
                         valid_thresh=float(rng.choice([0.0, 0.2, 0.5])),
                         topk=int(rng.choice([-1, 0, 1, 3, 20])), coord_start=int(coord), score_index=int(score),
                         id_index=int(cid), background_id=int(rng.choice([-1, 0, 2])),
                         force_suppress=bool(rng.rand() < .5), in_format=str(fmt_in), out_format=str(fmt_out))
            data = mx.nd.array(x, dtype=dtype)
            data.attach_grad()
            with mx.autograd.record():
                y = mx.nd.contrib.box_nms(data, **attrs)
            head = rng.uniform(-1, 1, y.shape).astype(dtype)
            y.backward(mx.nd.array(head, dtype=dtype))
            put(f"box_nms/{i}", attrs, data=x, out=y.asnumpy(), head=head, grad=data.grad.asnumpy())
            i += 1


def iou_cases():
    for i, (fmt, dtype) in enumerate([("corner", "float32"), ("center", "float32"), ("corner", "float64"),
                                      ("center", "float16")]):
        lhs = np.abs(rng.uniform(0, 1, (2, 3, 4))).astype(dtype)
        rhs = np.abs(rng.uniform(0, 1, (5, 4))).astype(dtype)
        lhs[0, 0] = [0.5, 0.5, 0.4, 0.4]         # an empty corner box
        out = mx.nd.contrib.box_iou(mx.nd.array(lhs, dtype=dtype), mx.nd.array(rhs, dtype=dtype), format=fmt)
        put(f"box_iou/{i}", {"format": fmt}, lhs=lhs, rhs=rhs, out=out.asnumpy())


def matching_cases():
    for i in range(8):
        dtype = ["float32", "float64"][i % 2]
        shape = [(4, 3), (2, 5, 4), (3, 3), (2, 2, 6, 2)][i % 4]
        x = np.round(rng.uniform(0, 1, shape) * 8) / 8
        attrs = dict(threshold=float(rng.choice([0.1, 0.5, 0.9])), is_ascend=bool(i >= 4),
                     topk=int(rng.choice([-1, 1, 2])))
        a, b = mx.nd.contrib.bipartite_matching(mx.nd.array(x, dtype=dtype), **attrs)
        put(f"bipartite_matching/{i}", attrs, data=x.astype(dtype), out0=a.asnumpy(), out1=b.asnumpy())


def prior_cases():
    attrs_list = [dict(), dict(sizes=[0.5, 0.25], ratios=[1, 2, 0.5]), dict(sizes=[0.3], ratios=[3, 1], clip=True),
                  dict(sizes=[0.7, 0.2], steps=[0.1, 0.2], offsets=[0.2, 0.7]),
                  dict(sizes=[0.9, 0.1], ratios=[2], steps=[0.25, 0.25], clip=True)]
    for i, attrs in enumerate(attrs_list):
        shape = [(1, 2, 3, 5), (2, 1, 4, 4), (1, 1, 6, 2), (1, 3, 2, 3), (1, 1, 5, 7)][i]
        out = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros(shape), **attrs)
        put(f"MultiBoxPrior/{i}", attrs, shape=np.array(shape), out=out.asnumpy())


def target_cases():
    for i in range(8):
        n_anchor, n_label, n_cls, batch = rng.randint(4, 12), rng.randint(1, 4), rng.randint(2, 5), rng.randint(1, 3)
        xy = rng.uniform(0, 0.7, (n_anchor, 2))
        anchors = np.concatenate([xy, xy + rng.uniform(0.1, 0.4, (n_anchor, 2))], -1)[None]
        label = np.full((batch, n_label, 5 + i % 2), -1.0)
        for b in range(batch):
            n_valid = rng.randint(0 if b else 1, n_label + 1)
            for k in range(n_valid):
                gxy = rng.uniform(0, 0.6, 2)
                label[b, k, :5] = [rng.randint(0, n_cls - 1), *gxy, *(gxy + rng.uniform(0.1, 0.4, 2))]
                if label.shape[2] > 5:
                    label[b, k, 5] = 0
        pred = rng.uniform(-2, 2, (batch, n_cls, n_anchor))
        attrs = dict(overlap_threshold=float(rng.choice([0.3, 0.5, 0.0])),
                     negative_mining_ratio=float(rng.choice([-1, 1, 2.5])),
                     negative_mining_thresh=float(rng.choice([0.3, 0.5])), ignore_label=float(rng.choice([-1, 7])),
                     variances=[0.1, 0.1, 0.2, 0.2] if i % 3 else [0.2, 0.3, 0.4, 0.5])
        try:
            outs = mx.nd.contrib.MultiBoxTarget(mx.nd.array(anchors), mx.nd.array(label), mx.nd.array(pred), **attrs)
            outs = [o.asnumpy() for o in outs]
        except mx.base.MXNetError:
            continue
        put(f"MultiBoxTarget/{i}", attrs, anchor=anchors.astype("float32"), label=label.astype("float32"),
            cls_pred=pred.astype("float32"), loc_target=outs[0], loc_mask=outs[1], cls_target=outs[2])


def detection_cases():
    for i in range(8):
        n_anchor, n_cls, batch = rng.randint(3, 12), rng.randint(1, 5), rng.randint(1, 3)
        xy = rng.uniform(0, 0.6, (n_anchor, 2))
        anchors = np.concatenate([xy, xy + rng.uniform(0.1, 0.5, (n_anchor, 2))], -1)[None]
        if i % 3 == 0:
            anchors[0, 1:3] = anchors[0, 0]     # overlapping anchors, so suppression happens
        prob = rng.uniform(0, 1, (batch, n_cls, n_anchor))
        prob = np.round(prob / prob.sum(1, keepdims=True) * 16) / 16
        loc = rng.uniform(-0.5, 0.5, (batch, n_anchor * 4))
        attrs = dict(clip=bool(i % 2), threshold=float(rng.choice([0.01, 0.2])),
                     nms_threshold=float(rng.choice([0.3, 0.5, 0.0, 1.5])), force_suppress=bool(i % 4 == 1),
                     nms_topk=int(rng.choice([-1, 2, 5])),
                     variances=[0.1, 0.1, 0.2, 0.2] if i % 3 else [0.2, 0.3, 0.4, 0.5])
        out = mx.nd.contrib.MultiBoxDetection(mx.nd.array(prob), mx.nd.array(loc), mx.nd.array(anchors), **attrs)
        put(f"MultiBoxDetection/{i}", attrs, cls_prob=prob.astype("float32"), loc_pred=loc.astype("float32"),
            anchor=anchors.astype("float32"), out=out.asnumpy())


def encode_cases():
    b, n, m = 2, 4, 3
    anchors = np.concatenate([xy := rng.uniform(0, .5, (b, n, 2)), xy + rng.uniform(.1, .4, (b, n, 2))], -1)
    refs = np.concatenate([xy := rng.uniform(0, .5, (b, m, 2)), xy + rng.uniform(.1, .4, (b, m, 2))], -1)
    samples = rng.choice([-1.0, 0.0, 1.0], (b, n))
    matches = rng.randint(0, m, (b, n)).astype("float64")
    means, stds = np.array([0.0, 0.1, -0.1, 0.2]), np.array([0.1, 0.1, 0.2, 0.2])
    ins = [samples, matches, anchors, refs, means, stds]
    y, mask = mx.nd.contrib.box_encode(*[mx.nd.array(v) for v in ins])
    put("box_encode/0", {}, **{f"in{k}": v.astype("float32") for k, v in enumerate(ins)},
        out0=y.asnumpy(), out1=mask.asnumpy())


def interleaved_cases():
    f = mx.nd.contrib
    specs = [("interleaved_matmul_selfatt_qk", [(3, 2, 2 * 3 * 4)], 2),
             ("interleaved_matmul_selfatt_valatt", [(4, 2, 3 * 3 * 2), (2 * 3, 4, 4)], 3),
             ("interleaved_matmul_encdec_qk", [(3, 2, 2 * 5), (4, 2, 2 * 2 * 5)], 2),
             ("interleaved_matmul_encdec_valatt", [(4, 3, 2 * 2 * 3), (3 * 2, 5, 4)], 2)]
    for name, shapes, heads in specs:
        xs = [rng.uniform(-1, 1, s).astype("float32") for s in shapes]
        arrs = [mx.nd.array(x) for x in xs]
        for a in arrs:
            a.attach_grad()
        with mx.autograd.record():
            y = getattr(f, name)(*arrs, heads=heads)
        head = rng.uniform(-1, 1, y.shape).astype("float32")
        y.backward(mx.nd.array(head))
        put(f"{name}/0", {"heads": heads}, **{f"in{k}": x for k, x in enumerate(xs)}, out=y.asnumpy(),
            head=head, **{f"grad{k}": a.grad.asnumpy() for k, a in enumerate(arrs)})


for fn in (nms_cases, iou_cases, matching_cases, prior_cases, target_cases, detection_cases, encode_cases,
           interleaved_cases):
    fn()
np.savez_compressed(OUT, **store)
print(f"{OUT}: {len(store)} arrays, mxnet {mx.__version__}")
