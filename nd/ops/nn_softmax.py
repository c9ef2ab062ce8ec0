"""The softmax family and the loss-style operators (MXNet 1.9.1 semantics):
softmax, log_softmax, softmin, SoftmaxActivation, SoftmaxOutput, the
*RegressionOutput layers, MakeLoss, make_loss and softmax_cross_entropy.

Loss layers' backward is a formula rather than a derivative, so hidden
`_backward_*` operators carry those kernels. Deliberate differences from
MXNet 1.9.1:

* SoftmaxActivation(mode='instance') on >2-D data differentiates along the last
  axis, like its forward; MXNet's backward runs along axis 1 (undocumented
  defect that the golden act.SoftmaxActivation.0 reproduces).
* SoftmaxOutput(out_grad=True) multiplies by the head gradient as documented;
  MXNet multiplies by the softmax output. smooth_alpha also smooths
  multi_output labels; MXNet silently ignores it there.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..fastpath import reduce_keepdims
from ..registry import ZERO_GRAD, register, same_shape
from .nn import _given, _merge, _norm_axis, _prod, _sigmoid


# ---------------------------------------------------------------------------
# softmax, log_softmax, softmin, SoftmaxActivation

_SOFTMAX_ATTRS = {
    "axis": Attr("int", -1, "The axis along which to compute softmax."),
    "temperature": Attr("float", None, "Temperature parameter in softmax"),
    "dtype": Attr("dtype", None, "DType of the output in case this can't be inferred. Defaults to "
                                 "the same as input's dtype if not defined (dtype=None).",
                  choices=("float16", "float32", "float64")),
    "use_length": Attr("bool", False, "Whether to use the length input as a mask over the data input.",
                       optional=True),
}


def softmax_kernel(xp, x, axis: int, temperature: float | None = None, *, negate: bool = False,
                   log: bool = False, length=None, dtype=None):
    """Numerically stable (log-)softmax of x/temperature along an axis.

    `length` (integers, x's shape without `axis`) masks positions at or past
    each length: they get 0 (and rows of length 0 are all 0). Computes in the
    wider of the input and output dtypes and returns `dtype` (default: x's).
    """
    out_dtype = np.dtype(dtype or x.dtype)
    if x.size == 0:   # nothing to normalise (numpy-shape zero-size inputs)
        return xp.zeros(x.shape, dtype=out_dtype)
    z = x.astype(np.promote_types(x.dtype, out_dtype), copy=False)
    if temperature is not None and temperature != 1.0:
        z = z / z.dtype.type(temperature)
    if negate:
        z = -z
    valid = None
    if length is not None:
        ar = xp.arange(x.shape[axis]).reshape((-1,) + (1,) * (x.ndim - axis - 1))
        valid = ar < xp.expand_dims(length, axis)
        z = xp.where(valid, z, z.dtype.type(-np.inf))
    zmax = reduce_keepdims(xp, "max", z, axis)
    if valid is not None:
        zmax = xp.where(xp.isfinite(zmax), zmax, zmax.dtype.type(0))
    z = z - zmax
    e = xp.exp(z)
    s = reduce_keepdims(xp, "sum", e, axis)
    if log:
        out = xp.subtract(z, xp.log(s), out=z)   # z is a new array here
    elif valid is not None:
        out = xp.where(valid, e / xp.where(s > 0, s, s.dtype.type(1)), e.dtype.type(0))
    else:
        out = e / s
    return out.astype(out_dtype, copy=False)


def _softmax_inputs(a) -> tuple:
    return ("data", "length") if a.use_length else ("data",)


def _softmax_shape(op: str):
    def infer(a, dshape, lshape=None):
        if dshape is None:
            return None
        ax = _norm_axis(op, a.axis, len(dshape))
        ins = [tuple(dshape)]
        if a.use_length:
            ins.append(_merge(op, "length", lshape, tuple(dshape[:ax]) + tuple(dshape[ax + 1:])))
        return ins, [tuple(dshape)]
    return infer


def _softmax_type(a, dt, lt=None):
    if dt is None:
        return None
    # a float `length` passes type inference and fails when the kernel runs, as in MXNet 1.9.1
    ins = [dt] + ([lt] if a.use_length else [])
    return ins, [np.dtype(a.dtype) if a.dtype else dt]


def _softmax_vjp(F, y, g, axis: int, log: bool):
    """Vector-Jacobian product of softmax (or log_softmax) at output y: one hidden op."""
    return (F._backward_log_softmax if log else F._backward_softmax)(g, y, axis=axis)


def _vjp_shape(a, gshape, yshape):
    shape = _merge("_backward_softmax", "output", yshape, gshape)
    return ([shape, shape], [shape]) if shape is not None else None


_VJP_ATTRS = {"axis": Attr("int", -1, "The axis the softmax ran along.")}


@register("_backward_softmax", inputs=("ograd", "output"), attrs=dict(_VJP_ATTRS), infer_shape=_vjp_shape,
          doc="Gradient of softmax from its output y: y * (ograd - sum(ograd * y, axis)).")
def _backward_softmax(xp, a, g, y):
    ax = _norm_axis("_backward_softmax", a.axis, y.ndim)
    s = reduce_keepdims(xp, "sum", g * y, ax)
    return ((g - s) * y,)


@_backward_softmax.def_gradient
def _(F, a, inputs, outputs, ograds):
    g, y = inputs
    og = ograds[0]
    ax = (a.axis,)
    # out = y * (g - s), s = sum(g * y): d/dg is the same vjp at y; d/dy = og * (g - s) - g * sum(og * y)
    s = F.sum(F.elemwise_mul(g, y), axis=ax, keepdims=True)
    t = F.sum(F.elemwise_mul(og, y), axis=ax, keepdims=True)
    dy = F.elemwise_sub(F.elemwise_mul(og, F.broadcast_sub(g, s)), F.broadcast_mul(g, t))
    return [F._backward_softmax(og, y, axis=a.axis), dy]


@register("_backward_log_softmax", inputs=("ograd", "output"), attrs=dict(_VJP_ATTRS), infer_shape=_vjp_shape,
          doc="Gradient of log_softmax from its output y: ograd - exp(y) * sum(ograd, axis).")
def _backward_log_softmax(xp, a, g, y):
    ax = _norm_axis("_backward_log_softmax", a.axis, y.ndim)
    s = reduce_keepdims(xp, "sum", g, ax)
    e = xp.exp(y)
    e *= s
    return (xp.subtract(g, e, out=e),)


@_backward_log_softmax.def_gradient
def _(F, a, inputs, outputs, ograds):
    g, y = inputs
    og = ograds[0]
    ax = (a.axis,)
    # out = g - e * s, e = exp(y), s = sum(g): d/dg = og - sum(og * e); d/dy = -og * e * s
    oe = F.elemwise_mul(og, F.exp(y))
    dg = F.broadcast_sub(og, F.sum(oe, axis=ax, keepdims=True))
    dy = F.negative(F.broadcast_mul(oe, F.sum(g, axis=ax, keepdims=True)))
    return [dg, dy]


def _softmax_gradient(negate: bool, log: bool):
    def gradient(F, a, inputs, outputs, ograds):
        gx = _softmax_vjp(F, outputs[0], ograds[0], a.axis, log)
        scale = (-1.0 if negate else 1.0) / (a.temperature if a.temperature is not None else 1.0)
        if scale != 1.0:
            gx = F._mul_scalar(gx, scalar=scale)
        if a.dtype is not None:
            gx = F._nn_cast_like(gx, inputs[0])
        return [gx] + [None] * (len(inputs) - 1)
    return gradient


def _register_softmax(name: str, negate: bool, log: bool, doc: str) -> None:
    with_length = name == "softmax"

    def forward(xp, a, data, length=None):
        _norm_axis(name, a.axis, data.ndim)
        if a.use_length and not with_length:
            raise AttrError(f"operator {name}: use_length=True is only supported by softmax")
        if length is not None and length.dtype.kind not in "iu":
            raise DTypeError(f"operator {name}: input 'length' must have an integer dtype, got {length.dtype}")
        return (softmax_kernel(xp, data, a.axis % data.ndim, a.temperature, negate=negate, log=log,
                               length=length, dtype=a.dtype),)

    register(name,
             monitor_inputs="input" if name == "softmin" else None,
             inputs=_softmax_inputs if with_length else ("data",), attrs=dict(_SOFTMAX_ATTRS),
             learnable=("length",) if with_length else (), infer_shape=_softmax_shape(name),
             infer_type=_softmax_type, gradient=_softmax_gradient(negate, log), doc=doc)(forward)


_register_softmax("softmax", False, False, "Softmax of data/temperature along an axis, optionally "
                                           "masked by per-row lengths (use_length).")
_register_softmax("log_softmax", False, True, "Log of the softmax along an axis.")
_register_softmax("softmin", True, False, "Softmax of -data/temperature along an axis.")


@register("_nn_cast_like", inputs=("data", "like"), infer_type=lambda a, d, like: ([d, like], [like]),
          infer_shape=lambda a, d, like: ([d, like], [d]),
          doc="data cast to the dtype of `like` (hybridgraph helper for softmax's dtype gradient).")
def _nn_cast_like(xp, a, data, like):
    return (data.astype(like.dtype),)


_nn_cast_like.def_gradient(lambda F, a, inputs, outputs, ograds: [F._nn_cast_like(ograds[0], inputs[0]), None])


def _softmax_act_axis(a, ndim: int) -> int:
    if a.mode == "channel":
        if ndim < 3:
            raise ShapeError(f"operator SoftmaxActivation: mode='channel' needs data with at least 3 "
                             f"dimensions, got {ndim}")
        return 1
    return ndim - 1


@register("SoftmaxActivation", monitor_inputs="input", infer_shape=same_shape,
          attrs={"mode": Attr("str", "instance", "Specifies how to compute the softmax: 'instance' "
                                                 "over the last axis, 'channel' over axis 1.",
                              choices=("channel", "instance"))})
def SoftmaxActivation(xp, a, data):
    """Softmax over the last axis (mode='instance') or over the channel axis 1 (mode='channel')."""
    return (softmax_kernel(xp, data, _softmax_act_axis(a, data.ndim)),)


@SoftmaxActivation.def_gradient
def _softmax_act_gradient(F, a, inputs, outputs, ograds):
    axis = 1 if a.mode == "channel" else -1
    return [_softmax_vjp(F, outputs[0], ograds[0], axis, False)]


# ---------------------------------------------------------------------------
# SoftmaxOutput

_SOFTMAX_OUTPUT_ATTRS = {
    "grad_scale": Attr("float", 1.0, "Scales the gradient by a float factor."),
    "ignore_label": Attr("float", -1.0, "The instances whose `labels` == `ignore_label` will be ignored "
                                        "during backward, if `use_ignore` is set to ``true``)."),
    "multi_output": Attr("bool", False, "If set to ``true``, the softmax function will be computed "
                                        "along axis ``1``."),
    "use_ignore": Attr("bool", False, "If set to ``true``, the `ignore_label` value will not contribute "
                                      "to the backward gradient."),
    "preserve_shape": Attr("bool", False, "If set to ``true``, the softmax function will be computed "
                                          "along the last axis (``-1``)."),
    "normalization": Attr("str", "null", "Normalizes the gradient.", choices=("batch", "null", "valid")),
    "out_grad": Attr("bool", False, "Multiplies gradient with output gradient element-wise."),
    "smooth_alpha": Attr("float", 0.0, "Constant for computing a label smoothed version of "
                                       "cross-entropy for the backwards pass."),
}


def _softmax_output_label_shape(a, dshape: tuple, lshape):
    """MXNet's label rule: data's shape (probabilities), or class indices per row."""
    if lshape is not None and tuple(lshape) == tuple(dshape):
        return tuple(lshape)
    if not a.multi_output:
        return _merge("SoftmaxOutput", "label", lshape, tuple(dshape[:-1]))
    rest = tuple(dshape[2:])
    allowed = [(dshape[0], _prod(rest)), (dshape[0],) + rest, (dshape[0], 1) + rest]
    if lshape is None:
        return allowed[0]
    if tuple(lshape) not in allowed:
        raise ShapeError(f"operator SoftmaxOutput: input 'label' has shape {tuple(lshape)}, "
                         f"expected {allowed[0]} or {allowed[1]}")
    return tuple(lshape)


def _softmax_output_shape(a, dshape, lshape=None):
    if dshape is None or len(dshape) == 0:
        return None
    if a.multi_output and len(dshape) < 2:
        raise ShapeError(f"operator SoftmaxOutput: multi_output needs data with at least 2 "
                         f"dimensions, got shape {tuple(dshape)}")
    return [tuple(dshape), _softmax_output_label_shape(a, dshape, lshape)], [tuple(dshape)]


@register("SoftmaxOutput", aliases=("Softmax",), inputs=("data", "label"), learnable=("label",),
          attrs=dict(_SOFTMAX_OUTPUT_ATTRS), infer_shape=_softmax_output_shape, loss=True)
def SoftmaxOutput(xp, a, data, label):
    """Softmax in the forward pass; backward is (softmax - onehot(label)) * grad_scale / norm."""
    _softmax_output_shape(a, data.shape, label.shape)
    if a.multi_output:
        return (softmax_kernel(xp, data, 1),)
    if a.preserve_shape:
        return (softmax_kernel(xp, data, data.ndim - 1),)
    flat = data.reshape(data.shape[0], -1)
    return (softmax_kernel(xp, flat, 1).reshape(data.shape),)


@SoftmaxOutput.def_gradient
def _softmax_output_gradient(F, a, inputs, outputs, ograds):
    return [F._backward_SoftmaxOutput(ograds[0], outputs[0], inputs[1], **_given(a)), None]


def _class_targets(xp, labels, classes: int, axis: int, *, alpha: float, dtype):
    """One-hot targets along `axis` (label smoothing spreads alpha over the other classes)."""
    shape = [1] * (labels.ndim + 1)
    shape[axis] = classes
    onehot = xp.arange(classes).reshape(shape) == xp.expand_dims(labels, axis)
    if alpha == 0:
        return onehot.astype(dtype)
    off = alpha / (classes - 1) if classes > 1 else 0.0
    return xp.where(onehot, 1.0 - alpha, off).astype(dtype)


def _ignore_count(xp, a, labels) -> int:
    """How many labels count for normalization='valid' (at least 1)."""
    ignored = int((labels == int(a.ignore_label)).sum())
    return max(labels.size - ignored, 1)


@register("_backward_SoftmaxOutput", inputs=("ograd", "output", "label"), attrs=dict(_SOFTMAX_OUTPUT_ATTRS),
          infer_shape=lambda a, g, o, lab: None if o is None else ([o, o, lab], [o]),
          infer_type=lambda a, g, o, lab: None if o is None else ([o, o, lab], [o]))
def _backward_SoftmaxOutput(xp, a, ograd, out, label):
    """MXNet's SoftmaxOutput backward: not a derivative, a cross-entropy gradient formula."""
    if label.shape == out.shape:  # probabilities as labels
        grad = (out - label) * out.dtype.type(a.grad_scale)
        return ((grad * ograd if a.out_grad else grad).astype(out.dtype, copy=False),)
    if a.multi_output:
        n, k = out.shape[:2]
        spatial = out.size // (n * k)
        probs, labels, axis = out.reshape(n, k, spatial), label.reshape(n, spatial).astype(np.int64), 1
    else:
        probs = out.reshape(-1, out.shape[-1]) if a.preserve_shape else out.reshape(out.shape[0], -1)
        labels, axis = label.reshape(-1).astype(np.int64)[:probs.shape[0]], 1
    grad = probs - _class_targets(xp, labels, probs.shape[1], axis, alpha=a.smooth_alpha, dtype=out.dtype)
    if a.use_ignore:
        grad = grad * xp.expand_dims(labels != int(a.ignore_label), axis).astype(out.dtype)
    all_labels = label.reshape(-1).astype(np.int64)
    if a.normalization == "batch":
        count = label.shape[0] if a.multi_output else label.size
    elif a.normalization == "valid":
        count = _ignore_count(xp, a, all_labels)
    else:
        count = 1
    scale = a.grad_scale / count
    if a.multi_output and a.normalization != "valid":
        scale /= spatial
    grad = (grad * scale).astype(out.dtype, copy=False).reshape(out.shape)
    return (grad * ograd if a.out_grad else grad,)


# ---------------------------------------------------------------------------
# regression outputs


def _regression_shape(name: str):
    def infer(a, dshape, lshape=None):
        if dshape is None or len(dshape) == 0:
            return None
        dshape = tuple(dshape)
        if lshape is None or len(lshape) == 0:
            lshape = (dshape[0],) if len(dshape) == 2 and dshape[1] == 1 else dshape
        elif lshape[0] != dshape[0] or _prod(lshape) != _prod(dshape):
            raise ShapeError(f"operator {name}: input 'label' has shape {tuple(lshape)}, expected the "
                             f"batch size and element count of data {dshape}")
        return [dshape, tuple(lshape)], [dshape]
    return infer


def _regression_kernels():
    """name -> (forward(xp, x), backward(xp, diff) before scaling, MXNet's backward name)."""
    return {
        "LinearRegressionOutput": (lambda xp, x: x.copy(), lambda xp, d: d, "_backward_linear_reg_out"),
        "MAERegressionOutput": (lambda xp, x: x.copy(),
                                lambda xp, d: xp.where(d > 0, d.dtype.type(1), d.dtype.type(-1)),
                                "_backward_mae_reg_out"),
        "LogisticRegressionOutput": (_sigmoid, lambda xp, d: d, "_backward_logistic_reg_out"),
    }


_GRAD_SCALE = {"grad_scale": Attr("float", 1.0, "Scale the gradient by a float factor")}


def _register_regression(name: str, fwd, bwd, bwd_name: str) -> None:
    infer = _regression_shape(name)

    def forward(xp, a, data, label):
        infer(a, data.shape, label.shape)
        return (fwd(xp, data),)

    def backward(xp, a, out, label):
        per_row = label.size // label.shape[0] if label.ndim else 1
        diff = out - label.reshape(out.shape)
        return ((bwd(xp, diff) * (a.grad_scale / per_row)).astype(out.dtype, copy=False),)

    def gradient(F, a, inputs, outputs, ograds):
        return [getattr(F, bwd_name)(outputs[0], inputs[1], **_given(a)), None]

    register(name, inputs=("data", "label"), learnable=("label",), attrs=dict(_GRAD_SCALE),
             infer_shape=infer, gradient=gradient, loss=True,
             doc=f"{name}: the forward is {'sigmoid' if 'Logistic' in name else 'identity'}; "
                 "backward ignores the head gradient.")(forward)
    register(bwd_name, inputs=("output", "label"), attrs=dict(_GRAD_SCALE),
             infer_shape=lambda a, o, lab: None if o is None else ([o, lab], [o]),
             doc=f"Backward of {name}: f(output - label) * grad_scale / (label elements per row).")(backward)


for _name, (_fwd, _bwd, _bwd_name) in _regression_kernels().items():
    _register_regression(_name, _fwd, _bwd, _bwd_name)


# ---------------------------------------------------------------------------
# MakeLoss, make_loss

_MAKE_LOSS_ATTRS = {
    "grad_scale": Attr("float", 1.0, "Gradient scale as a supplement to unary and binary operators"),
    "valid_thresh": Attr("float", 0.0, "clip each element in the array to 0 when it is less than "
                                       "``valid_thresh``. This is used when ``normalization`` is set to "
                                       "``'valid'``."),
    "normalization": Attr("str", "null", "If null, the gradient is not normalized; batch divides it by "
                                         "the batch size; valid by the number of elements above "
                                         "valid_thresh.", choices=("batch", "null", "valid")),
}


@register("MakeLoss", attrs=dict(_MAKE_LOSS_ATTRS), infer_shape=same_shape, loss=True)
def MakeLoss(xp, a, data):
    """Identity forward; backward is grad_scale / normalization, ignoring the head gradient."""
    return (data.copy(),)


@MakeLoss.def_gradient
def _make_loss_gradient(F, a, inputs, outputs, ograds):
    return [F._backward_MakeLoss(inputs[0], **_given(a))]


@register("_backward_MakeLoss", attrs=dict(_MAKE_LOSS_ATTRS), infer_shape=same_shape, gradient=ZERO_GRAD)
def _backward_MakeLoss(xp, a, data):
    """A constant gradient: grad_scale / (1, batch size, or count of data > valid_thresh)."""
    if a.normalization == "batch":
        norm = data.shape[0] if data.ndim else 1
    elif a.normalization == "valid":
        norm = max(int((data > a.valid_thresh).sum()), 1)
    else:
        norm = 1
    return (xp.full(data.shape, a.grad_scale / norm, dtype=data.dtype),)


@register("make_loss", monitor_inputs="input", outputs=("loss",), infer_shape=same_shape, loss=True,
          gradient=lambda F, a, inputs, outputs, ograds: [F.ones_like(outputs[0])])
def make_loss(xp, a, data):
    """Identity forward; the gradient is ones, whatever the head gradient."""
    return (data.copy(),)


# ---------------------------------------------------------------------------
# softmax_cross_entropy


def _sce_shape(a, dshape, lshape=None):
    if dshape is None:
        return None
    if len(dshape) != 2:
        raise ShapeError(f"operator softmax_cross_entropy: input 'data' must be 2-D (batch, classes), "
                         f"got shape {tuple(dshape)}")
    lshape = _merge("softmax_cross_entropy", "label", lshape, (dshape[0],))
    return [tuple(dshape), lshape], [(1,)]


def _sce_onehot(xp, data, label):
    return _class_targets(xp, label.astype(np.int64), data.shape[1], 1, alpha=0.0, dtype=data.dtype)


@register("softmax_cross_entropy", inputs=("data", "label"), infer_shape=_sce_shape)
def softmax_cross_entropy(xp, a, data, label):
    """Sum over the batch of -log(softmax(data)[label]); labels outside [0, classes) add 0."""
    _sce_shape(a, data.shape, label.shape)
    logp = softmax_kernel(xp, data, 1, log=True)
    return ((-(logp * _sce_onehot(xp, data, label)).sum()).reshape(1).astype(data.dtype),)


@softmax_cross_entropy.def_gradient
def _sce_gradient(F, a, inputs, outputs, ograds):
    return [F._backward_softmax_cross_entropy(ograds[0], inputs[0], inputs[1]), None]


@register("_backward_softmax_cross_entropy", inputs=("ograd", "data", "label"),
          infer_shape=lambda a, g, d, lab: None if d is None else ([(1,), d, lab], [d]),
          infer_type=lambda a, g, d, lab: None if d is None else ([d, d, lab], [d]))
def _backward_softmax_cross_entropy(xp, a, ograd, data, label):
    """(softmax(data) - onehot(label)) * head gradient."""
    probs = softmax_kernel(xp, data, 1)
    return (((probs - _sce_onehot(xp, data, label)) * ograd.reshape(())).astype(data.dtype, copy=False),)
