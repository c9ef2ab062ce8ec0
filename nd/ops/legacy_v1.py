"""`Convolution_v1`: MXNet's deprecated first version of Convolution.

It accepts a subset of Convolution's attributes (2-D and 3-D windows, no 1-D layouts) and computes
the same values, so it runs Convolution's kernel, shape and type rules and gradient on the same
attributes; what stays its own is the name, the attribute schema and the node-name hint
(`convolution_v10_weight`, as MXNet names the parameters). Pooling_v1 is not declared this way: its
max pooling pads with zeros where Pooling pads with -inf (hybridgraph/nd/unsupported_ops.py).
"""
from __future__ import annotations

from ..attrs import Attr
from ..dispatch import parse_cached
from ..errors import ShapeError
from ..registry import get_op, register
from .conv import CONV_ATTRS
from .conv_kernels import given_attrs


def _as_base(base: str, a):
    return parse_cached(get_op(base), given_attrs(a))


def _check_dims(op: str, a, data_shape) -> None:
    nsp = len(a.kernel) if a.kernel else None
    if (nsp is not None and nsp not in (2, 3)) or (data_shape is not None and len(data_shape) not in (4, 5)):
        raise ShapeError(f"operator {op}: only 2-D and 3-D windows on 4-D / 5-D data are supported (MXNet's "
                         f"{op}); got kernel {tuple(a.kernel)} and data shape {data_shape}. Use "
                         f"{op[:-3]} for 1-D windows")


def _legacy(name: str, base: str, attrs: dict, **kwargs) -> None:
    base_op = get_op(base)

    def forward(xp, a, *arrays):
        _check_dims(name, a, arrays[0].shape)
        return base_op.forward(xp, _as_base(base, a), *arrays)

    def infer_shape(a, *shapes):
        _check_dims(name, a, shapes[0])
        return base_op.infer_shape(_as_base(base, a), *shapes)

    def gradient(F, a, inputs, outputs, ograds):
        return base_op.gradient(F, _as_base(base, a), inputs, outputs, ograds)

    # the slot rules read only attributes both versions have (no_bias; the pooling workspace rule)
    register(name, inputs=base_op.input_names, outputs=base_op.output_names,
             num_visible_outputs=1, attrs=attrs, infer_shape=infer_shape,
             infer_type=lambda a, *t: base_op.infer_type(_as_base(base, a), *t), gradient=gradient,
             hint=name.lower(), doc=f"MXNet's deprecated {name}: {base} on 2-D / 3-D windows with the "
             "attributes it accepts.", **kwargs)(forward)


_V1_LAYOUT = Attr("str", None, "Set layout for input, output and weight. Empty for default layout: NCHW for "
                  "2d and NCDHW for 3d.", choices=("NCHW", "NHWC", "NCDHW", "NDHWC"))
_legacy("Convolution_v1", "Convolution",
        {**{k: CONV_ATTRS[k] for k in ("kernel", "stride", "dilate", "pad", "num_filter", "num_group",
                                       "workspace", "no_bias", "cudnn_tune", "cudnn_off")},
         "layout": _V1_LAYOUT}, learnable=("weight", "bias"))
