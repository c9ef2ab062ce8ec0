"""SVMOutput (MXNet 1.9.1): identity forward, hinge-loss gradient backward.

Like SoftmaxOutput it is a loss layer: the backward pass ignores the head gradient and
writes the gradient of the L1 (`use_linear`) or squared (L2) multi-class hinge loss with
respect to the scores. Data is read as (rows, classes) with the last axis the classes;
`label` holds one class index per row (shape data.shape[:-1]), truncated toward zero.
"""
from __future__ import annotations

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import register, same_type

_SVM_ATTRS = {
    "margin": Attr("float", 1.0, "The loss function penalizes outputs that lie outside this margin."),
    "regularization_coefficient": Attr("float", 1.0, "Regularization parameter for the SVM: the "
                                       "tradeoff between coefficient size and error."),
    "use_linear": Attr("bool", False, "Whether to use the L1-SVM objective (L2-SVM by default)."),
}


def _svm_shape(a, dshape, lshape=None):
    if dshape is None:
        return None
    if len(dshape) < 1:
        raise ShapeError("operator SVMOutput: input 'data' must have rank >= 1 (rows, classes)")
    want = tuple(dshape[:-1])
    if lshape is not None and tuple(lshape) != want:
        raise ShapeError(f"operator SVMOutput: input 'label' must have shape {want} (data's shape "
                         f"without the class axis), got {tuple(lshape)}")
    return [tuple(dshape), want], [tuple(dshape)]


@register("SVMOutput", inputs=("data", "label"), learnable=("label",), attrs=dict(_SVM_ATTRS),
          infer_shape=_svm_shape, infer_type=same_type, loss=True)
def SVMOutput(xp, a, data, label):  # noqa: N802
    """Passes the scores through; its gradient is the hinge loss's (see the module doc)."""
    return (data.copy(),)


@SVMOutput.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_SVMOutput(ograds[0], inputs[1], outputs[0], **a.given), None]


@register("_backward_SVMOutput", inputs=("ograd", "label", "output"), attrs=dict(_SVM_ATTRS),
          infer_shape=lambda a, g, lab, o: None if o is None else ([o, tuple(o[:-1]), o], [o]))
def _backward_SVMOutput(xp, a, ograd, label, out):  # noqa: N802
    """d(hinge loss)/d(scores) per MXNet's L1_SVM / L2_SVM kernels (the head gradient is unused)."""
    classes = out.shape[-1]
    is_label = xp.arange(classes) == label.astype("int64")[..., None]
    margin = out.dtype.type(a.margin)
    coef = out.dtype.type(a.regularization_coefficient)
    zero = out.dtype.type(0)
    if a.use_linear:
        own = -(margin > out).astype(out.dtype) * coef
        other = (margin > -out).astype(out.dtype) * coef
    else:
        own = xp.where(margin > out, 2 * (margin - out), zero) * -coef
        other = xp.where(margin > -out, -2 * (margin + out), zero) * -coef
    return (xp.where(is_label, own, other).astype(out.dtype, copy=False),)
