"""ONNX lowerings of the neural-network ops (conv.py, deconv.py, nn.py, norm.py, pool.py, nn_softmax.py).

Each function writes one MXNet node as ONNX nodes through the exporter's
NodeWriter `g` (see nd/lowering.py); where ONNX's op differs from MXNet's at
an edge (BatchNorm's fix_gamma, pooling's full/same conventions and avg divisor,
PReLU's channel broadcast) the lowering writes MXNet's meaning, not ONNX's.
"""
from __future__ import annotations

import numpy as np

from ..lowering import onnx_lowering
from . import matrix_slice, nn, nn_softmax, norm, normalize, spatial  # noqa: F401 - the ops lowered here
from .conv import _conv_geometry
from .conv_kernels import is_channel_last, spatial_tuple
from .deconv import _deconv_pad_adj
from .pool import pool_geometry


def _to_cf(g, x: str, ndim: int, layout) -> str:
    """Channel-last data -> channel-first (ONNX's only layout)."""
    if not is_channel_last(layout):
        return x
    return g.op("Transpose", [x], perm=[0, ndim - 1, *range(1, ndim - 1)])


def _from_cf(g, y: str, ndim: int, layout) -> str:
    if not is_channel_last(layout):
        return y
    return g.op("Transpose", [y], perm=[0, *range(2, ndim), 1])


def _conv_attrs(g, a, nsp: int) -> dict:
    pad = spatial_tuple(g.node.op.name, "pad", a.pad, nsp, 0, 0)
    return {"kernel_shape": [int(k) for k in a.kernel],
            "strides": list(spatial_tuple(g.node.op.name, "stride", a.stride, nsp, 1, 1)),
            "dilations": list(spatial_tuple(g.node.op.name, "dilate", a.dilate, nsp, 1, 1)),
            "pads": list(pad) * 2, "group": int(a.num_group)}


@onnx_lowering("Convolution")
def _convolution(g, node):
    a, ndim = node.attrs, len(g.in_shapes[0])
    x = _to_cf(g, g.inputs[0], ndim, a.layout)
    w = _to_cf(g, g.inputs[1], ndim, a.layout)
    ins = [x, w] if a.no_bias else [x, w, g.inputs[2]]
    return [_from_cf(g, g.op("Conv", ins, **_conv_attrs(g, a, ndim - 2)), ndim, a.layout)]


@onnx_lowering("Deconvolution")
def _deconvolution(g, node):
    a, ndim = node.attrs, len(g.in_shapes[0])
    nsp = ndim - 2
    x = _to_cf(g, g.inputs[0], ndim, a.layout)
    w = _to_cf(g, g.inputs[1], ndim, a.layout)
    ins = [x, w] if a.no_bias else [x, w, g.inputs[2]]
    attrs = _conv_attrs(g, a, nsp)
    in_sp = g.in_shapes[0][2:] if not is_channel_last(a.layout) else g.in_shapes[0][1:-1]
    # MXNet's own resolution of target_shape / adj into (pad, adj): ONNX pads + output_padding
    pad, adj = _deconv_pad_adj("Deconvolution", a, _conv_geometry("Deconvolution", a), tuple(in_sp))
    attrs["pads"] = [int(p) for p in pad] * 2
    attrs["output_padding"] = [int(x) for x in adj] if any(adj) else None
    return [_from_cf(g, g.op("ConvTranspose", ins, **attrs), ndim, a.layout)]


@onnx_lowering("FullyConnected")
def _fully_connected(g, node):
    a = node.attrs
    x, w = g.inputs[0], g.inputs[1]
    if a.flatten or len(g.in_shapes[0]) == 2:
        if len(g.in_shapes[0]) != 2:
            x = g.op("Flatten", [x], axis=1)
        ins = [x, w] if a.no_bias else [x, w, g.inputs[2]]
        return [g.op("Gemm", ins, transB=1)]
    y = g.op("MatMul", [x, g.op("Transpose", [w], perm=[1, 0])])
    return [y if a.no_bias else g.op("Add", [y, g.inputs[2]])]


_ACTIVATIONS = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
                "softsign": "Softsign"}


@onnx_lowering("Activation")
def _activation(g, node):
    if node.attrs.act_type == "relu" and np.issubdtype(g.in_dtypes[0], np.integer):
        return [g.op("Max", [g.inputs[0], g.scalar(0, g.in_dtypes[0])])]  # onnxruntime's Relu is float only
    return [g.op(_ACTIVATIONS[node.attrs.act_type], [g.inputs[0]])]


@onnx_lowering("LeakyReLU", note="rrelu exports its inference form (slope (lower+upper)/2)")
def _leaky_relu(g, node):
    a, x, dt = node.attrs, g.inputs[0], g.in_dtypes[0]
    kind = a.act_type
    if kind == "leaky":
        return [g.op("LeakyRelu", [x], alpha=float(a.slope))]
    if kind == "rrelu":  # inference: the mean slope; the mask output holds that slope
        slope = (float(a.lower_bound) + float(a.upper_bound)) / 2
        return [g.op("LeakyRelu", [x], alpha=slope), g.fill(g.op("Shape", [x]), slope, dt)]
    if kind == "elu":
        return [g.op("Elu", [x], alpha=float(a.slope))]
    if kind == "selu":
        return [g.op("Selu", [x])]
    if kind == "gelu":  # MXNet's erf form: x/2 * (1 + erf(x/sqrt(2)))
        e = g.op("Erf", [g.op("Div", [x, g.scalar(np.sqrt(2.0), dt)])])
        return [g.op("Mul", [g.op("Mul", [x, g.scalar(0.5, dt)]), g.op("Add", [e, g.scalar(1.0, dt)])])]
    if kind == "prelu":  # gamma runs along axis 1 (axis 0 for 1-D data), one value broadcasts
        shape = g.in_shapes[0]
        gsize = int(np.prod(g.in_shapes[1]))
        view = [1] * len(shape)
        if gsize != 1:
            view[1 if len(shape) >= 2 else 0] = gsize
        return [g.op("PRelu", [x, g.reshape(g.inputs[1], view)])]
    raise g.fail(f"LeakyReLU act_type {kind!r} has no ONNX form")


@onnx_lowering("BatchNorm",
               note="inference form (moving statistics); fix_gamma writes gamma as ones")
def _batch_norm(g, node):
    a = node.attrs
    if a.output_mean_var:
        raise g.fail("output_mean_var=True outputs batch statistics, which an inference graph does not have",
                     "export the model without output_mean_var")
    x, gamma, beta, mean, var = g.inputs[:5]
    shape, dt = g.in_shapes[0], g.in_dtypes[0]
    ndim = len(shape)
    axis = a.axis + ndim if a.axis < 0 else a.axis
    channels = shape[axis]
    if a.fix_gamma:
        gamma = g.const(np.ones(channels, dtype=dt), hint="ones")
    if axis == 1 and ndim >= 2:
        return [g.op("BatchNormalization", [x, gamma, beta, mean, var], epsilon=float(a.eps))]
    view = [1] * ndim
    view[axis] = channels
    scale = g.op("Div", [gamma, g.op("Sqrt", [g.op("Add", [var, g.scalar(a.eps, dt)])])])
    shift = g.op("Sub", [beta, g.op("Mul", [mean, scale])])
    y = g.op("Mul", [x, g.reshape(scale, view)])
    return [g.op("Add", [y, g.reshape(shift, view)])]


@onnx_lowering("Dropout", note="identity at inference")
def _dropout(g, node):
    return [g.inputs[0]]


@onnx_lowering("Pooling", note="full/same conventions and the avg divisor written exactly (explicit pads)")
def _pooling(g, node):
    a = node.attrs
    shape = g.in_shapes[0]
    ndim, cl = len(shape), is_channel_last(a.layout)
    x = _to_cf(g, g.inputs[0], ndim, a.layout)
    in_sp = tuple(shape[1:-1] if cl else shape[2:])
    kind = a.pool_type
    if a.global_pool:
        if kind == "max":
            y = g.op("GlobalMaxPool", [x])
        elif kind == "avg":
            y = g.op("GlobalAveragePool", [x])
        elif kind == "sum":
            y = g.op("Mul", [g.op("GlobalAveragePool", [x]), g.scalar(float(np.prod(in_sp)), g.in_dtypes[0])])
        else:
            y = g.op("GlobalLpPool", [x], p=int(a.p_value))
        return [_from_cf(g, y, ndim, a.layout)]
    geo = pool_geometry(a, in_sp)
    if a.pooling_convention != "valid" and g.dynamic and any(d is None for d in shape[2:]):
        raise g.fail("pooling_convention 'full'/'same' pads by the input size", "export with static spatial sizes")
    common = {"kernel_shape": list(geo.kernel), "strides": list(geo.stride),
              "pads": list(geo.pad_lo) + list(geo.pad_hi)}
    if kind == "max":
        y = g.op("MaxPool", [x], **common)
    elif kind == "lp":
        y = g.op("LpPool", [x], p=int(a.p_value), **common)
    else:
        y = g.op("AveragePool", [x], count_include_pad=1, **common)
        # ONNX divides by the kernel size; MXNet by its clipped window (or by 1 for sum)
        include = a.count_include_pad is None or a.count_include_pad
        factor = np.prod(geo.kernel) / (geo.divisor(include) if kind == "avg" else 1.0)
        if not np.all(factor == 1.0):
            dt = g.in_dtypes[0]
            uniform = bool(np.all(factor == factor.flat[0]))
            f = np.asarray(factor.flat[0] if uniform else factor, dtype=dt)
            y = g.op("Mul", [y, g.const(f, hint="pool_scale")])
    return [_from_cf(g, y, ndim, a.layout)]


def _softmax_axis(g, x: str, op_type: str, axis: int, temperature=None) -> str:
    if temperature is not None and float(temperature) != 1.0:
        x = g.op("Div", [x, g.scalar(float(temperature), g.in_dtypes[0])])
    return g.op(op_type, [x], axis=int(axis))


def _length_mask(g, length: str, shape: tuple, axis: int) -> str:
    """True where the position along `axis` is below `length` (shape: data's without axis)."""
    view = [1] * len(shape)
    view[axis] = shape[axis]
    steps = g.const(np.arange(shape[axis], dtype=np.int64).reshape(view), hint="steps")
    return g.op("Less", [steps, g.axes_op("Unsqueeze", g.cast(length, "int64"), [axis])])


@onnx_lowering("softmax", "log_softmax", note="use_length masks as MXNet does")
def _softmax(g, node):
    a = node.attrs
    op_type = "LogSoftmax" if node.op.name == "log_softmax" else "Softmax"
    x = g.inputs[0]
    mask = None
    temperature = a.get("temperature")
    if a.get("use_length") and temperature is not None and float(temperature) != 1.0:
        x, temperature = g.op("Div", [x, g.scalar(float(temperature), g.in_dtypes[0])]), None
    if a.get("use_length"):
        shape = g.in_shapes[0]
        axis = a.axis + len(shape) if a.axis < 0 else a.axis
        mask = _length_mask(g, g.inputs[1], tuple(shape), axis)
        # the lowest finite value, not -inf: exp(lowest - max) is 0 all the same, and a row masked
        # whole gives no inf - inf (its outputs are zeroed below)
        x = g.op("Where", [mask, x, g.scalar(np.finfo(g.in_dtypes[0]).min, g.in_dtypes[0])])
    y = _softmax_axis(g, x, op_type, a.axis, temperature)
    if mask is not None:
        y = g.op("Where", [mask, y, g.scalar(0, g.in_dtypes[0])])
    if a.get("dtype") is not None and np.dtype(a.dtype) != g.in_dtypes[0]:
        y = g.cast(y, a.dtype)
    return [y]


@onnx_lowering("SoftmaxOutput", "SoftmaxActivation", note="inference: softmax over the class axis")
def _softmax_output(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    x = g.inputs[0]
    multi = a.get("multi_output") or a.get("mode") == "channel"
    if multi:
        return [g.op("Softmax", [x], axis=1)]
    if a.get("preserve_shape") or node.op.name == "SoftmaxActivation":  # instance mode: the last axis
        return [g.op("Softmax", [x], axis=-1)]
    if node.op.name == "SoftmaxActivation" or len(shape) == 2:
        y = g.op("Softmax", [g.op("Flatten", [x], axis=1)], axis=1) if len(shape) > 2 else \
            g.op("Softmax", [x], axis=-1)
        return [g.reshape(y, [0, *shape[1:]]) if len(shape) > 2 else y]
    # SoftmaxOutput on N-d data without multi_output: softmax over the flattened trailing axes
    y = g.op("Softmax", [g.op("Flatten", [x], axis=1)], axis=1)
    return [g.reshape(y, [0, *shape[1:]])]


# -- normalizations -------------------------------------------------------------------------------

def _normalize(g, x: str, axes: list[int], eps: float, dt) -> str:
    """(x - mean) / sqrt(var + eps) over `axes` (MXNet's biased variance)."""
    mean = g.axes_op("ReduceMean", x, axes, keepdims=1)
    centered = g.op("Sub", [x, mean])
    var = g.axes_op("ReduceMean", g.op("Mul", [centered, centered]), axes, keepdims=1)
    return g.op("Div", [centered, g.op("Sqrt", [g.op("Add", [var, g.scalar(eps, dt)])])])


def _affine(g, y: str, gamma: str, beta: str, axis: int, ndim: int) -> str:
    view = [1] * ndim
    view[axis] = -1
    return g.op("Add", [g.op("Mul", [y, g.reshape(gamma, view)]), g.reshape(beta, view)])


@onnx_lowering("LayerNorm")
def _layer_norm(g, node):
    a, ndim = node.attrs, len(g.in_shapes[0])
    if a.output_mean_var:
        raise g.fail("output_mean_var=True", "export without output_mean_var")
    axis = a.axis + ndim if a.axis < 0 else a.axis
    y = _normalize(g, g.inputs[0], [axis], a.eps, g.in_dtypes[0])
    return [_affine(g, y, g.inputs[1], g.inputs[2], axis, ndim)]


@onnx_lowering("InstanceNorm")
def _instance_norm(g, node):
    return [g.op("InstanceNormalization", g.inputs[:3], epsilon=float(node.attrs.eps))]


@onnx_lowering("GroupNorm")
def _group_norm(g, node):
    a = node.attrs
    if a.output_mean_var:
        raise g.fail("output_mean_var=True", "export without output_mean_var")
    grouped = g.reshape(g.inputs[0], [0, int(a.num_groups), -1])
    y = _normalize(g, grouped, [2], a.eps, g.in_dtypes[0])
    y = _affine(g, y, g.inputs[1], g.inputs[2], 1, 3)  # MXNet 1.x: gamma/beta per group
    return [g.op("Reshape", [y, g.op("Shape", [g.inputs[0]])])]


@onnx_lowering("L2Normalization")
def _l2_normalization(g, node):
    a, ndim, dt = node.attrs, len(g.in_shapes[0]), g.in_dtypes[0]
    axes = {"instance": list(range(1, ndim)), "channel": [1], "spatial": list(range(2, ndim))}[a.mode]
    x = g.inputs[0]
    sq = g.op("Mul", [x, x])
    ss = g.axes_op("ReduceSum", sq, axes, keepdims=1) if axes else sq
    return [g.op("Div", [x, g.op("Sqrt", [g.op("Add", [ss, g.scalar(a.eps, dt)])])])]


@onnx_lowering("LRN")
def _lrn(g, node):
    a = node.attrs
    if int(a.nsize) % 2 == 0 or len(g.in_shapes[0]) != 4:
        raise g.fail(f"LRN nsize={a.nsize} on {len(g.in_shapes[0])}-D data: onnxruntime's LRN takes an odd "
                     "window over 4-D data", "use an odd nsize on NCHW data")
    return [g.op("LRN", [g.inputs[0]], alpha=float(a.alpha), beta=float(a.beta), bias=float(a.knorm),
                 size=int(a.nsize))]


@onnx_lowering("moments")
def _moments(g, node):
    a, ndim = node.attrs, len(g.in_shapes[0])
    axes = list(range(ndim)) if a.axes is None else [x + ndim if x < 0 else x for x in a.axes]
    x = g.inputs[0]
    mean = g.axes_op("ReduceMean", x, axes, keepdims=1)
    centered = g.op("Sub", [x, mean])
    var = g.axes_op("ReduceMean", g.op("Mul", [centered, centered]), axes, keepdims=int(bool(a.keepdims)))
    if not a.keepdims:
        mean = g.axes_op("Squeeze", mean, axes) if len(axes) < ndim else g.reshape(mean, [])
    return [mean, var]


# -- spatial ----------------------------------------------------------------------------------------

@onnx_lowering("UpSampling", note="nearest, one input")
def _upsampling(g, node):
    a = node.attrs
    if a.sample_type != "nearest" or len(g.inputs) != 1:
        raise g.fail(f"UpSampling sample_type={a.sample_type!r} with {len(g.inputs)} inputs",
                     "use nearest upsampling of one input, or Deconvolution")
    s = float(a.scale)
    scales = g.const(np.asarray([1, 1, s, s], dtype=np.float32), hint="scales")
    return [g.op("Resize", [g.inputs[0], "", scales], mode="nearest", nearest_mode="floor",
                 coordinate_transformation_mode="asymmetric")]


@onnx_lowering("_contrib_AdaptiveAvgPooling2D", note="output sizes dividing the input")
def _adaptive_avg_pool(g, node):
    in_sp, out_sp = g.in_shapes[0][2:], g.out_shapes[0][2:]
    if all(o == 1 for o in out_sp):
        return [g.op("GlobalAveragePool", [g.inputs[0]])]
    if any(i % o for i, o in zip(in_sp, out_sp)):
        raise g.fail(f"adaptive pooling from {tuple(in_sp)} to {tuple(out_sp)} has uneven windows",
                     "choose an output size that divides the input size")
    k = [i // o for i, o in zip(in_sp, out_sp)]
    return [g.op("AveragePool", [g.inputs[0]], kernel_shape=k, strides=k)]


@onnx_lowering("_contrib_BilinearResize2D", note="align_corners=True")
def _bilinear_resize(g, node):
    a = node.attrs
    if not a.align_corners or len(g.inputs) != 1:
        raise g.fail("BilinearResize2D with align_corners=False or a 'like' input",
                     "use align_corners=True with a size or scale")
    sizes = g.ints(g.out_shapes[0], "sizes")
    return [g.op("Resize", [g.inputs[0], "", "", sizes], mode="linear",
                 coordinate_transformation_mode="align_corners")]


@onnx_lowering("Pad")
def _pad(g, node):
    a = node.attrs
    width = [int(w) for w in a.pad_width]
    pads = width[0::2] + width[1::2]
    ins = [g.inputs[0], g.ints(pads, "pads")]
    if a.mode == "constant":
        ins.append(g.scalar(a.constant_value, g.in_dtypes[0]))
    return [g.op("Pad", ins, mode=a.mode)]


@onnx_lowering("depth_to_space")
def _depth_to_space(g, node):
    return [g.op("DepthToSpace", [g.inputs[0]], blocksize=int(node.attrs.block_size), mode="DCR")]


@onnx_lowering("space_to_depth")
def _space_to_depth(g, node):
    return [g.op("SpaceToDepth", [g.inputs[0]], blocksize=int(node.attrs.block_size))]
