"""hybridgraph installs one top-level package; a user's own `symbol/`, `nd/` or `hybrid/` wins.

MXNet's own examples (example/ssd) ship a `symbol` package; before the namespace move
`import hybridgraph` put ours on sys.path under that name.
"""
from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hybridgraph import gluon
from hybridgraph.gluon import nn

LEGACY_STATES = Path(__file__).resolve().parent / "data" / "legacy_states"


def test_user_packages_named_like_our_layers_are_the_users(tmp_path):
    for name in ("symbol", "nd", "hybrid"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"MARK = 'user {name}'\n")
    script = (
        "import symbol, nd, hybrid\n"
        "import hybridgraph as mx\n"
        "from hybridgraph.gluon import nn\n"
        "import symbol as s2, nd as n2, hybrid as h2\n"
        "assert (s2.MARK, n2.MARK, h2.MARK) == ('user symbol', 'user nd', 'user hybrid'), (s2, n2, h2)\n"
        "assert mx.sym.var('x').name == 'x' and mx.nd.ones((2,)).shape == (2,)\n"
        "assert mx.symbol.__name__ == 'hybridgraph.symbol' and mx.gluon.__name__ == 'hybridgraph.gluon'\n"
        "leaked = sorted(m for m in __import__('sys').modules if m.split('.')[0] in ('nd', 'symbol', 'hybrid')"
        " and not getattr(__import__('sys').modules[m], 'MARK', '').startswith('user'))\n"
        "assert not leaked, leaked\n"
    )
    # run from tmp_path with it first on sys.path: the repository root is not on the path
    subprocess.run([sys.executable, "-c", script], cwd=tmp_path, check=True, timeout=120,
                   env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})


def test_installed_distribution_has_one_top_level_package():
    try:
        dist = importlib.metadata.distribution("hybridgraph")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("hybridgraph is not installed (run from a source tree)")
    top_level = (dist.read_text("top_level.txt") or "").split()
    assert top_level == ["hybridgraph"]


def test_internal_modules_live_under_the_namespace():
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("nd", "symbol", "hybrid"))
    assert not leaked, f"modules imported under a top-level name: {leaked}"


@pytest.mark.parametrize("opt,kwargs", [("sgd", {"learning_rate": 0.1, "momentum": 0.9}),
                                        ("adam", {"learning_rate": 0.01})])
def test_states_written_before_the_namespace_move_still_load(opt, kwargs):
    """dense_*.states were written by main before the move: they name `nd.ndarray` and `hybrid.optimizer`."""
    net = nn.Dense(3, in_units=4, prefix="dense0_")
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), opt, kwargs)
    trainer.load_states(str(LEGACY_STATES / f"dense_{opt}.states"))
    assert type(trainer._optimizer).__name__ == {"sgd": "SGD", "adam": "Adam"}[opt]
    assert type(trainer._optimizer).__module__ == "hybridgraph.gluon.optimizer"
    states = trainer._updaters[0].states
    # the writer ran one step from Constant(0.5) weights on x = [[1, 2, 3, 4]], loss = sum of outputs
    grads = {0: np.ones(3, np.float32), 1: np.tile(np.array([1, 2, 3, 4], np.float32), (3, 1))}
    for index, grad in grads.items():
        if opt == "sgd":  # momentum buffer after one step: -lr * grad
            np.testing.assert_allclose(states[index].asnumpy(), -0.1 * grad, rtol=1e-6)
        else:  # Adam's (mean, var) after one step: (1 - beta1) * g, (1 - beta2) * g**2
            mean, var = (s.asnumpy() for s in states[index])
            np.testing.assert_allclose(mean, 0.1 * grad, rtol=1e-5)
            np.testing.assert_allclose(var, 0.001 * grad ** 2, rtol=1e-4)
