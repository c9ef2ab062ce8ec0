"""`mx.contrib.svrg_optimization`: stochastic variance-reduced gradient training (MXNet 1.9.1).

`SVRGModule` is an `mx.mod.Module` that keeps a second module holding a snapshot of the
weights; every `update_freq` epochs it averages the snapshot's gradients over the whole data,
and each step uses ``g(w) - g(w_snapshot) + mean_g(w_snapshot)`` instead of ``g(w)``
(Johnson & Zhang, 2013). `_SVRGOptimizer` routes the ``*_full`` keys of the kvstore to an
assignment (the full gradients) and everything else to the user's optimizer.
"""
from . import svrg_module, svrg_optimizer

__all__ = ["svrg_module", "svrg_optimizer"]
