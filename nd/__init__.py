"""hybridgraph.nd: MXNet's imperative NDArray API on numpy (CPU) and cupy (GPU)."""
from __future__ import annotations

import types as _types

from . import backend as _backend
from .ops.blas import limit_worker_spin as _limit_worker_spin
from . import autograd, ops  # noqa: F401 - importing ops registers every operator
from . import random, rng, serialization  # noqa: F401
from .arith import install_helpers as _install_helpers
from .backend import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .creation import arange, array, empty, eye, from_numpy, full, linspace, ones, zeros
from .dispatch import OpNamespace, make_nd_function
from .errors import MXNetError
from . import unsupported_ops as _unsupported_ops
from .frontend import install as _install, install_sub_namespaces as _install_sub_namespaces
from .ndarray import NDArray, install_operators as _install_operators
from .serialization import load, load_frombuffer, save, save_tobuffer
from .cached_op import CachedOp

_internal = _types.ModuleType("hybridgraph.nd._internal", "Every registered operator, by any name.")
op = _internal
#: the namespace gradient rules receive as F when running eagerly
ops_namespace = OpNamespace(make_nd_function)

_install_operators()
_limit_worker_spin()
_install_helpers(globals(), ops_namespace, symbolic=False)
_install(globals(), _internal, NDArray)
_install_sub_namespaces(__name__, globals(), make_nd_function)
__getattr__ = _unsupported_ops.module_getattr(__name__, "")  # mx.nd.<MXNet op hybridgraph lacks>: a clear error
_internal.__getattr__ = _unsupported_ops.module_getattr(_internal.__name__, "_internal")

__all__ = ["NDArray", "Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus",
           "array", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "from_numpy",
           "autograd", "MXNetError", "save", "load", "load_frombuffer", "save_tobuffer", "random",
           "waitall", "sparse", "CachedOp"]


def waitall() -> None:
    """Wait for all pending computation (numpy runs synchronously; cupy streams are synced)."""
    if _backend.gpus_in_use() and num_gpus():  # no GPU context used: nothing can be pending
        _backend._import_cupy().cuda.runtime.deviceSynchronize()

from . import sparse  # noqa: E402 - mx.nd.sparse (dense-backed row_sparse / csr arrays)
from . import control_flow as _control_flow  # noqa: E402 - needs the generated functions above
_control_flow.install(globals()["contrib"])  # nd.contrib.cond / foreach / while_loop

from . import contrib_checks as _contrib_checks  # noqa: E402
_contrib_checks.install(globals()["contrib"])  # nd.contrib.isnan / isinf / isfinite
from . import contrib_adamw as _contrib_adamw  # noqa: E402
_contrib_adamw.install(globals()["contrib"])  # nd.contrib.adamw_update / mp_ / multi_ / multi_mp_
from . import contrib_sampling as _contrib_sampling  # noqa: E402
_contrib_sampling.install_nd(globals()["contrib"])  # nd.contrib.rand_zipfian

from .array_helpers import concatenate, fill_element_0index, moveaxis, onehot_encode  # noqa: E402, F401
NDArray.split_v2 = split_v2  # noqa: F821 - a plain function becomes the method (self = ary)

# `from mxnet.ndarray import *` gives every public operator function and the sub-namespaces, as MXNet's does
from .registry import all_names as _all_names  # noqa: E402
__all__ += sorted({n for n in _all_names() if not n.startswith("_") and n in globals()} - set(__all__))  # noqa: PLE0605
__all__ += [n for n in ("contrib", "linalg", "image") if n in globals() and n not in __all__]
# MXNet's ndarray helper functions (ndarray.py's __all__) that hybridgraph provides
__all__ += [n for n in ("concatenate", "add", "subtract", "multiply", "divide", "modulo", "power", "maximum",
                        "minimum", "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
                        "logical_and", "logical_or", "logical_xor", "true_divide", "negative", "moveaxis",
                        "onehot_encode", "split_v2", "histogram", "imdecode", "fill_element_0index")
            if n in globals() and n not in __all__]
from . import numpy as np, numpy_extension as npx  # noqa: E402, F401 - MXNet's F.np / F.npx (mx.nd.np)
