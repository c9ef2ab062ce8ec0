"""ONNX lowerings of the neural-network ops (conv.py, deconv.py, nn.py, norm.py, pool.py, nn_softmax.py).

Each function writes one MXNet node as ONNX nodes through the exporter's
NodeWriter `g` (see nd/lowering.py); where ONNX's op differs from MXNet's at
an edge (BatchNorm's fix_gamma, pooling's full/same conventions and avg divisor,
PReLU's channel broadcast) the lowering writes MXNet's meaning, not ONNX's.
"""
from __future__ import annotations

import numpy as np

from ..lowering import onnx_lowering
from . import elemwise, matrix, matrix_join, matrix_misc, nn, nn_softmax, norm  # noqa: F401 - the ops lowered here
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
    return [g.op(_ACTIVATIONS[node.attrs.act_type], [g.inputs[0]])]


@onnx_lowering("LeakyReLU", note="rrelu exports its inference form (slope (lower+upper)/2)")
def _leaky_relu(g, node):
    a, x, dt = node.attrs, g.inputs[0], g.in_dtypes[0]
    kind = a.act_type
    if kind == "leaky":
        return [g.op("LeakyRelu", [x], alpha=float(a.slope))]
    if kind == "rrelu":
        return [g.op("LeakyRelu", [x], alpha=(float(a.lower_bound) + float(a.upper_bound)) / 2)]
    if kind == "elu":
        return [g.op("Elu", [x], alpha=float(a.slope))]
    if kind == "selu":
        return [g.op("Selu", [x])]
    if kind == "gelu":  # MXNet's erf form: x/2 * (1 + erf(x/sqrt(2)))
        e = g.op("Erf", [g.op("Div", [x, g.scalar(np.sqrt(2.0), dt)])])
        return [g.op("Mul", [g.op("Mul", [x, g.scalar(0.5, dt)]), g.op("Add", [e, g.scalar(1.0, dt)])])]
    if kind == "prelu":
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


@onnx_lowering("softmax", "log_softmax")
def _softmax(g, node):
    a = node.attrs
    if a.get("use_length"):
        raise g.fail("softmax with use_length=True (masked softmax)", "apply the mask before softmax")
    op_type = "LogSoftmax" if node.op.name == "log_softmax" else "Softmax"
    y = _softmax_axis(g, g.inputs[0], op_type, a.axis, a.get("temperature"))
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
    if node.op.name == "SoftmaxActivation" or len(shape) == 2:
        y = g.op("Softmax", [g.op("Flatten", [x], axis=1)], axis=1) if len(shape) > 2 else \
            g.op("Softmax", [x], axis=-1)
        return [g.reshape(y, [0, *shape[1:]]) if len(shape) > 2 else y]
    # SoftmaxOutput on N-d data without multi_output: softmax over the flattened trailing axes
    y = g.op("Softmax", [g.op("Flatten", [x], axis=1)], axis=1)
    return [g.reshape(y, [0, *shape[1:]])]
