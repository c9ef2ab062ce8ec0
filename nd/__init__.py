"""hybridgraph.nd: MXNet's imperative NDArray API on numpy (CPU) and cupy (GPU)."""
from __future__ import annotations

import types as _types

from . import autograd, ops  # noqa: F401 - importing ops registers every operator
from . import random, rng, serialization  # noqa: F401
from .arith import install_helpers as _install_helpers
from .backend import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .creation import arange, array, empty, eye, from_numpy, full, linspace, ones, zeros
from .dispatch import OpNamespace, make_nd_function
from .errors import MXNetError
from .frontend import install as _install, install_sub_namespaces as _install_sub_namespaces
from .ndarray import NDArray, install_operators as _install_operators
from .serialization import load, load_frombuffer, save, save_tobuffer

_internal = _types.ModuleType("hybridgraph.nd._internal", "Every registered operator, by any name.")
op = _internal
#: the namespace gradient rules receive as F when running eagerly
ops_namespace = OpNamespace(make_nd_function)

_install_operators()
_install_helpers(globals(), ops_namespace, symbolic=False)
_install(globals(), _internal, NDArray)
_install_sub_namespaces(__name__, globals(), make_nd_function)

__all__ = ["NDArray", "Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus",
           "array", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "from_numpy",
           "autograd", "MXNetError", "save", "load", "load_frombuffer", "save_tobuffer", "random",
           "waitall"]


def waitall() -> None:
    """Wait for all pending computation (numpy runs synchronously; cupy streams are synced)."""
    if num_gpus():
        import cupy  # noqa: PLC0415 - only when a GPU is present
        cupy.cuda.runtime.deviceSynchronize()

from . import control_flow as _control_flow  # noqa: E402 - needs the generated functions above
_control_flow.install(globals()["contrib"])  # nd.contrib.cond / foreach / while_loop

from . import numpy as np, numpy_extension as npx  # noqa: E402, F401 - MXNet's F.np / F.npx (mx.nd.np)
