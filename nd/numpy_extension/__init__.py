"""`mx.npx`: MXNet 1.9's numpy extensions: the mode switches (`set_np`, `reset_np`,
`is_np_array`, `use_np`), neural-network operators on np arrays (`relu`, `softmax`,
`fully_connected`, `convolution`, ...; the registry's legacy kernels under the names MXNet's
npx front end exports), npx.reshape's special codes, devices, `waitall` and `save`/`load`.
"""
from __future__ import annotations

from collections.abc import Callable

from ..backend import cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401
from ..dispatch import bind_call, invoke
from ..ndarray import NDArray
from ..registry import get_op
from hybridgraph.util import (is_np_array, is_np_shape, np_array, np_shape, reset_np, set_np,  # noqa: F401
                              use_np, use_np_array, use_np_shape)
from ..numpy.multiarray import array_from, as_np, call


def _op_function(op_name: str, public: str) -> Callable:
    op = get_op(op_name)

    def fn(*args, out=None, name=None, **kwargs):
        inputs, given = bind_call(op, args, kwargs)
        return as_np(invoke(op, inputs, given, out=out, name=name))

    fn.__name__ = fn.__qualname__ = public
    fn.__doc__ = f"npx.{public}: the registry operator {op_name} on np arrays.\n\n{op.doc or ''}"
    fn.op = op
    return fn


# npx name -> the registry operator MXNet 1.9's npx front end records
_OPS = {
    "relu": "_npx_relu", "sigmoid": "_npx_sigmoid", "activation": "Activation", "leaky_relu": "LeakyReLU",
    "softmax": "softmax", "log_softmax": "log_softmax", "masked_softmax": "softmax",
    "pick": "pick", "topk": "topk", "one_hot": "one_hot", "batch_norm": "BatchNorm",
    "fully_connected": "FullyConnected", "convolution": "Convolution", "deconvolution": "Deconvolution",
    "pooling": "Pooling", "dropout": "Dropout", "embedding": "Embedding", "layer_norm": "LayerNorm",
    "rnn": "RNN", "sequence_mask": "SequenceMask", "batch_dot": "batch_dot", "gamma": "gamma",
    "gammaln": "gammaln", "erf": "erf", "erfinv": "erfinv", "smooth_l1": "smooth_l1",
    "arange_like": "_contrib_arange_like", "gather_nd": "gather_nd", "roi_pooling": "ROIPooling",
    "instance_norm": "InstanceNorm", "group_norm": "GroupNorm", "stop_gradient": "BlockGrad",
    "slice_axis": "slice_axis", "broadcast_like": "broadcast_like", "constraint_check": "_npx_constraint_check",
    "multibox_prior": "_contrib_MultiBoxPrior", "multibox_target": "_contrib_MultiBoxTarget",
    "multibox_detection": "_contrib_MultiBoxDetection",
}
for _public, _op_name in _OPS.items():
    try:
        globals()[_public] = _op_function(_op_name, _public)
    except Exception:  # noqa: BLE001 - an operator another build of the registry lacks
        continue


def reshape(a, newshape, reverse: bool = False, order: str = "C"):
    """Reshape with MXNet's special codes: -1 infer, -2 copy a dim, -3 drop a size-1 dim,
    -4 copy the rest, -5 merge two dims, -6 split a dim into the next two values."""
    newshape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    return call("_npx_reshape", [a], {"newshape": newshape, "reverse": reverse, "order": order})


def slice(data, begin, end, step=None):  # noqa: A001 - MXNet's name
    """npx.slice: `data[begin:end:step]` per axis (None entries take the whole axis)."""
    attrs = {"begin": tuple(begin), "end": tuple(end)}
    if step is not None:
        attrs["step"] = tuple(step)
    return as_np(invoke(get_op("slice"), [data], attrs))


def reshape_like(lhs, rhs, **kwargs):
    return as_np(invoke(get_op("reshape_like"), [lhs, rhs], kwargs))


def waitall() -> None:
    """Wait for all pending computation."""
    from .. import waitall as _waitall  # noqa: PLC0415
    _waitall()


def save(file: str, arr) -> None:
    """Save np arrays (one, a list or a dict) in MXNet's .npz-free binary format (nd.save)."""
    from ..serialization import save as _save  # noqa: PLC0415
    _save(file, arr)


def load(file: str):
    """Load arrays saved by `npx.save` / `nd.save`, as np arrays."""
    from ..serialization import load as _load  # noqa: PLC0415
    res = _load(file)
    if isinstance(res, dict):
        return {k: _to_np(v) for k, v in res.items()}
    return [_to_np(v) for v in res]


def _to_np(v: NDArray):
    out = array_from(v._data, v._ctx)
    return out


from . import random as random  # noqa: E402 - npx.random (seed, bernoulli, uniform_n, normal_n)
