"""`nd.contrib.adamw_update` and friends: MXNet 1.9.1's Python front ends of the AdamW
operators (nd/ops/adamw.py). `rescale_grad` may be a number or an NDArray (moved to the
weight's context); the multi versions take lists and interleave them per weight."""
from __future__ import annotations

from typing import Any


def _rescale(rescale_grad: Any, ctx: Any) -> Any:
    from hybridgraph import nd  # noqa: PLC0415 - the generated op functions
    if isinstance(rescale_grad, nd.NDArray):
        return rescale_grad.as_in_context(ctx)
    return nd.full(shape=(1,), val=rescale_grad, ctx=ctx)


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0,
                 clip_gradient=-1, out=None, name=None, **kwargs):
    """AdamW step of one weight (mean and var updated in place; pass out=weight to update it)."""
    from hybridgraph import nd  # noqa: PLC0415
    return nd._internal._adamw_update(weight, grad, mean, var, _rescale(rescale_grad, weight.context), lr=lr,
                                      eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                      clip_gradient=clip_gradient, out=out, name=name, **kwargs)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8,
                    wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """Multi-precision AdamW step: float32 states and master weight `weight32`."""
    from hybridgraph import nd  # noqa: PLC0415
    return nd._internal._mp_adamw_update(weight, grad, mean, var, weight32, _rescale(rescale_grad, weight.context),
                                         lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                         clip_gradient=clip_gradient, out=out, name=name, **kwargs)


def _flat(*lists: list) -> list:
    return [x for group in zip(*lists) for x in group]


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None, name=None, size=0,
                       **kwargs):
    """AdamW steps of several weights in one call (lists; one lr, wd and eta per weight)."""
    from hybridgraph import nd  # noqa: PLC0415
    size = size or len(weights)
    return nd._internal._multi_adamw_update(*_flat(weights, grads, mean, var),
                                            _rescale(rescale_grad, weights[0].context), out=out,
                                            num_weights=size, lrs=lrs, wds=wds, etas=etas, name=name, **kwargs)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas, out=None, name=None,
                          size=0, **kwargs):
    """Multi-precision AdamW steps of several weights in one call."""
    from hybridgraph import nd  # noqa: PLC0415
    size = size or len(weights)
    return nd._internal._multi_mp_adamw_update(*_flat(weights, grads, mean, var, weights32),
                                               _rescale(rescale_grad, weights[0].context), out=out,
                                               num_weights=size, lrs=lrs, wds=wds, etas=etas, name=name, **kwargs)


def install(module: Any) -> None:
    """Put the front ends into a namespace module (`nd.contrib`)."""
    for fn in (adamw_update, mp_adamw_update, multi_adamw_update, multi_mp_adamw_update):
        setattr(module, fn.__name__, fn)
