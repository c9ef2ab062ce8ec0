"""hybridgraph.symbol: MXNet's symbolic API (`mx.sym`)."""
from __future__ import annotations

import types as _types

from hybridgraph import nd as _nd  # noqa: F401 - registers every operator
from hybridgraph.nd.arith import install_helpers as _install_helpers
from hybridgraph.nd.dispatch import OpNamespace
from hybridgraph.nd import unsupported_ops as _unsupported_ops
from hybridgraph.nd.frontend import install_sub_namespaces as _install_sub_namespaces

from .frontend import install as _install, make_sym_function
from .creation import arange, eye, full, linspace, ones, zeros
from .json_io import load, load_json
from .naming import AttrScope, NameManager, Prefix
from .symbol import Group, Symbol, Variable, create, var

_internal = _types.ModuleType("hybridgraph.symbol._internal", "Every registered operator, by any name.")
op = _internal
#: the namespace gradient rules receive as F when building graphs
ops_namespace = OpNamespace(make_sym_function)
_install_helpers(globals(), ops_namespace, symbolic=True)
_install(globals(), _internal)
_install_sub_namespaces(__name__, globals(), make_sym_function, {"random": "_random_"})
__getattr__ = _unsupported_ops.module_getattr(__name__, "")  # mx.sym.<MXNet op hybridgraph lacks>: a clear error
_internal.__getattr__ = _unsupported_ops.module_getattr(_internal.__name__, "_internal")

__all__ = ["Symbol", "Variable", "var", "Group", "NameManager", "Prefix", "AttrScope", "create",
           "zeros", "ones", "full", "arange", "linspace", "eye", "load", "load_json"]

from . import control_flow as _control_flow  # noqa: E402 - needs the generated functions above
_control_flow.install(globals()["contrib"])  # symbol.contrib.cond / foreach / while_loop
from hybridgraph.nd import contrib_sampling as _contrib_sampling  # noqa: E402
_contrib_sampling.install_sym(globals()["contrib"], globals()["random"])  # contrib.rand_zipfian, random.multinomial

# `from mxnet.symbol import *` gives every public operator function and the sub-namespaces, as MXNet's does
from hybridgraph.nd.registry import all_names as _all_names  # noqa: E402
__all__ += sorted({n for n in _all_names() if not n.startswith("_") and n in globals()} - set(__all__))  # noqa: PLE0605
__all__ += [n for n in ("contrib", "linalg", "image", "random") if n in globals() and n not in __all__]
# F.np / F.npx in a traced hybrid_forward: the np functions build graph nodes from symbolic inputs
np = _nd.np
npx = _nd.npx
Symbol.as_np_ndarray = Symbol.as_nd_ndarray = lambda self: self   # np and nd symbols are one Symbol here
