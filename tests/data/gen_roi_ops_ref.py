"""Write roi_ops_ref.npz: MXNet 1.9.1's outputs and input gradients (random head gradients) of
im2col / col2im, histogram, contrib.boolean_mask, ROIAlign, RROIAlign, PSROIPooling,
DeformablePSROIPooling, DeformableConvolution, Proposal and MultiProposal over their attributes.

Run with MXNet's interpreter from this directory:  /work/main/.mxvenv/bin/python gen_roi_ops_ref.py
"""
import json

import mxnet as mx
import numpy as np

RNG = np.random.RandomState(20261202)


def _u(shape, lo=-1.0, hi=1.0, dtype="float32"):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def _rois(n_img, h, w, count, cols=5):
    rows = []
    for _ in range(count):
        x0, y0 = RNG.uniform(-2, w), RNG.uniform(-2, h)
        rows.append([RNG.randint(0, n_img), x0, y0, x0 + RNG.uniform(0.5, w), y0 + RNG.uniform(0.5, h)])
    return np.array(rows, dtype="float32")


def _rrois(n_img, h, w, count):
    return np.array([[RNG.randint(0, n_img), RNG.uniform(0, w), RNG.uniform(0, h), RNG.uniform(0.5, w),
                      RNG.uniform(0.5, h), RNG.uniform(0, 180)] for _ in range(count)], dtype="float32")


def _window(kernel, stride, dilate, pad):
    return {"kernel": kernel, "stride": stride, "dilate": dilate, "pad": pad}


def _proposal_inputs(n, a, h, w, fs, iou):
    cls = RNG.random_sample((n, 2 * a, h, w)).astype("float32")
    bbox = ((RNG.random_sample((n, 4 * a, h, w)) - 0.5) * (8 if iou else 0.5)).astype("float32")
    info = np.array([[h * fs, w * fs, 1.0], [h * fs * 0.7, w * fs * 0.8, 0.7], [h * fs * 0.5, w * fs, 0.9]][:n],
                    dtype="float32")
    return [cls, bbox, info]


# (function path, inputs, attrs, indices of inputs to differentiate)
CASES = [
    ("im2col", [_u((2, 3, 7, 6))], _window((3, 3), (1, 1), (1, 1), (1, 1)), [0]),
    ("im2col", [_u((1, 2, 8, 9))], _window((2, 3), (2, 1), (2, 2), (1, 0)), [0]),
    ("col2im", [_u((2, 27, 42))], {"output_size": (7, 6), **_window((3, 3), (1, 1), (1, 1), (1, 1))}, [0]),
    ("col2im", [_u((1, 12, 20))], {"output_size": (8, 9), **_window((2, 3), (2, 1), (2, 2), (1, 0))}, [0]),
    ("histogram", [_u((4, 5), -3, 3, "float64")], {"bins": 5, "range": (-2.5, 2.5)}, []),
    ("histogram", [_u((3, 7), -3, 3), np.array([-2.0, -0.5, 0.0, 1.5, 2.9], dtype="float32")], {}, []),
    ("contrib.boolean_mask", [_u((5, 3)), np.array([1, 0, 2, 0, 1], dtype="float32")], {}, [0]),
    ("contrib.boolean_mask", [_u((4, 2, 3)), np.array([0, 0, 1, 0], dtype="int32")], {}, [0]),
    ("contrib.ROIAlign", [_u((2, 3, 9, 10)), _rois(2, 9, 10, 5)], {"pooled_size": (2, 3), "spatial_scale": 1.0}, [0]),
    ("contrib.ROIAlign", [_u((2, 3, 9, 10)), _rois(2, 18, 20, 5)],
     {"pooled_size": (3, 2), "spatial_scale": 0.5, "sample_ratio": 2}, [0]),
    ("contrib.ROIAlign", [_u((2, 12, 6, 7)), _rois(2, 6, 7, 4)],
     {"pooled_size": (2, 2), "spatial_scale": 1.0, "position_sensitive": True}, [0]),
    ("contrib.ROIAlign", [_u((1, 2, 8, 8), dtype="float64"), _rois(1, 11, 11, 4).astype("float64")],
     {"pooled_size": (2, 3), "spatial_scale": 0.7, "aligned": True, "sample_ratio": 3}, [0]),
    ("contrib.RROIAlign", [_u((2, 3, 9, 10)), _rrois(2, 9, 10, 5)], {"pooled_size": (2, 3), "spatial_scale": 1.0}, []),
    ("contrib.RROIAlign", [_u((1, 2, 9, 10)), _rrois(1, 18, 20, 4)],
     {"pooled_size": (3, 2), "spatial_scale": 0.5, "sampling_ratio": 2}, []),
    ("contrib.PSROIPooling", [_u((2, 18, 7, 8)), _rois(2, 14, 16, 5)],
     {"spatial_scale": 0.5, "output_dim": 2, "pooled_size": 3}, [0]),
    ("contrib.PSROIPooling", [_u((1, 19, 7, 8), dtype="float64"), _rois(1, 28, 32, 4).astype("float64")],
     {"spatial_scale": 0.25, "output_dim": 2, "pooled_size": 2, "group_size": 3}, [0]),
    ("contrib.PSROIPooling", [_u((1, 18, 14, 14), dtype="float16"),
                              np.array([[0, 10, 22, 161, 173], [0, 20, 15, 154, 160]], dtype="float16")],
     {"spatial_scale": 0.0625, "output_dim": 2, "pooled_size": 3}, [0]),
    ("contrib.DeformablePSROIPooling", [_u((2, 18, 7, 8)), _rois(2, 14, 16, 4), _u((4, 2, 3, 3))],
     {"spatial_scale": 0.5, "output_dim": 2, "group_size": 3, "pooled_size": 3, "sample_per_part": 2,
      "trans_std": 0.1}, [0, 2]),
    ("contrib.DeformablePSROIPooling", [_u((2, 16, 7, 8)), _rois(2, 28, 32, 4), _u((4, 4, 2, 2))],
     {"spatial_scale": 0.25, "output_dim": 4, "group_size": 2, "pooled_size": 4, "part_size": 2,
      "sample_per_part": 3, "trans_std": 0.3}, [0, 2]),
    ("contrib.DeformablePSROIPooling", [_u((2, 8, 7, 8)), _rois(2, 14, 16, 4)],
     {"spatial_scale": 0.5, "output_dim": 2, "group_size": 2, "pooled_size": 2, "no_trans": True}, [0]),
    ("contrib.DeformableConvolution", [_u((1, 4, 5, 6)), _u((1, 18, 5, 6), -2, 2), _u((4, 4, 3, 3)), _u((4,))],
     {"kernel": (3, 3), "pad": (1, 1), "num_filter": 4}, [0, 1, 2, 3]),
    ("contrib.DeformableConvolution", [_u((2, 4, 6, 5)), _u((2, 24, 3, 4), -2, 2), _u((6, 2, 3, 2)), _u((6,))],
     {"kernel": (3, 2), "stride": (2, 1), "dilate": (2, 1), "pad": (2, 0), "num_filter": 6, "num_group": 2,
      "num_deformable_group": 2}, [0, 1, 2, 3]),
    ("contrib.DeformableConvolution", [_u((1, 2, 4, 4)), _u((1, 8, 3, 3), -2, 2), _u((2, 2, 2, 2))],
     {"kernel": (2, 2), "num_filter": 2, "no_bias": True}, [0, 1, 2]),
    ("contrib.MultiProposal", _proposal_inputs(3, 9, 9, 9, 16, False),
     {"feature_stride": 16, "scales": (8, 16, 32), "ratios": (0.5, 1, 2), "rpn_pre_nms_top_n": 300,
      "rpn_post_nms_top_n": 50, "threshold": 0.7, "rpn_min_size": 16, "output_score": True}, []),
    ("contrib.MultiProposal", _proposal_inputs(2, 2, 7, 8, 8, True),
     {"feature_stride": 8, "scales": (2, 4), "ratios": (1,), "rpn_pre_nms_top_n": -1, "rpn_post_nms_top_n": 120,
      "threshold": 0.5, "rpn_min_size": 4, "iou_loss": True, "output_score": True}, []),
    ("contrib.Proposal", _proposal_inputs(1, 12, 6, 6, 16, False),
     {"rpn_post_nms_top_n": 40, "output_score": True}, []),
]


def _call(path, arrays, attrs):
    fn = mx.nd
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn(*arrays, **attrs)


def main():
    store, meta = {}, []
    for i, (path, inputs, attrs, wrt) in enumerate(CASES):
        xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
        for k in wrt:
            xs[k].attach_grad()
        with mx.autograd.record():
            out = _call(path, xs, attrs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        for j, x in enumerate(inputs):
            store[f"{i}_in{j}"] = x
        for j, o in enumerate(outs):
            store[f"{i}_out{j}"] = o.asnumpy()
        if wrt:
            head = RNG.uniform(-1, 1, outs[0].shape).astype(outs[0].dtype)
            outs[0].backward(mx.nd.array(head, dtype=head.dtype))
            store[f"{i}_head"] = head
            for k in wrt:
                store[f"{i}_grad{k}"] = xs[k].grad.asnumpy()
        meta.append({"op": path, "attrs": attrs, "n_in": len(inputs), "n_out": len(outs), "wrt": wrt})
    store["meta"] = np.array(json.dumps(meta))
    np.savez_compressed("roi_ops_ref.npz", **store)


if __name__ == "__main__":
    main()
