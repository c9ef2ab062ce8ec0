"""Data-dependent Python control flow in a hybridized block: what goes wrong, and the rewrites.

    python examples/hybridize_pitfalls.py
    python examples/hybridize_pitfalls.py --quick    # the same (it is small)

`hybridize()` runs `hybrid_forward` once with symbolic stand-ins that know
shape and dtype but not values, and reuses the recorded graph for every later
call. Python code that needs a value (`if x > 0:`, `float(x)`, `x.asnumpy()`)
cannot be recorded: eagerly it works, hybridized it raises an error that
names the file and line and suggests the fix (MXNet raises
`NotImplementedForSymbol` there too, without saying where).

The example is a max-norm layer, which rescales its input when the input's
norm exceeds a limit, written three ways:

1. with a Python `if` on the norm: fine eagerly, an error when hybridized;
2. with `F.where(condition, a, b)`: both branches are computed, and the
   condition picks elementwise;
3. with `F.contrib.cond(pred, then_func, else_func)`: eagerly only the chosen
   branch runs; hybridized, both branches are traced and the size-1 predicate
   selects between them (so keep branches free of side effects).

Rewrites 2 and 3 give the eager outputs and gradients when hybridized.
"""
from __future__ import annotations

import argparse
import linecache
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)
from hybridgraph import autograd  # noqa: E402
from hybridgraph.gluon import nn  # noqa: E402


class MaxNormIf(nn.HybridBlock):
    """Rescale x to norm `max_norm` when its norm is larger, with a Python `if`."""

    def __init__(self, max_norm: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        self.max_norm = max_norm

    def hybrid_forward(self, F, x):
        norm = F.norm(x)
        if norm > self.max_norm:            # needs the value of `norm`: not traceable
            return F.broadcast_mul(x, self.max_norm / norm)
        return x


class LogNorm(nn.HybridBlock):
    """Reads a value back to Python for logging: `float()` on a traced array."""

    def hybrid_forward(self, F, x):
        print("  input norm:", float(F.norm(x).asscalar()))
        return x


class MaxNormWhere(MaxNormIf):
    """The same layer with F.where: both branches are computed, the condition selects."""

    def hybrid_forward(self, F, x):
        norm = F.norm(x)
        scale = F.where(norm > self.max_norm, self.max_norm / norm, F.ones_like(norm))
        return F.broadcast_mul(x, scale)


class MaxNormCond(MaxNormIf):
    """The same layer with F.contrib.cond (one branch eagerly, a select when hybridized)."""

    def hybrid_forward(self, F, x):
        norm = F.norm(x)
        return F.contrib.cond(norm > self.max_norm,
                              lambda: F.broadcast_mul(x, self.max_norm / norm),
                              lambda: x)


INPUTS = {"large norm (rescaled)": [[3.0, 4.0]], "small norm (unchanged)": [[0.3, 0.4]]}


def fmt(a: np.ndarray) -> list:
    return np.round(a.astype(np.float64), 4).tolist()


def forward_backward(net, value) -> tuple[np.ndarray, np.ndarray]:
    x = mx.nd.array(value)
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward()
    return y.asnumpy(), x.grad.asnumpy()


def show_trace_error(block_class) -> dict:
    """Run a block eagerly, then hybridized, and print the error it raises."""
    net = block_class()
    net.initialize()
    print(f"eager {block_class.__name__}: {fmt(net(mx.nd.array([[3.0, 4.0]])).asnumpy())}")
    net.hybridize()
    try:
        net(mx.nd.array([[3.0, 4.0]]))
    except mx.base.NotImplementedForSymbol as err:   # hybridgraph raises its subclass TraceError
        message = str(err)
        print(f"hybridized {block_class.__name__} raises {type(err).__name__}:\n  {message}")
        where = message.split(": ", 1)[0]              # "path/to/file.py:LINE"
        filename, line = where.rsplit(":", 1)
        code = linecache.getline(filename, int(line)).strip()
        print(f"  -> {Path(filename).name}, line {line}: {code}")
        return {"message": message, "file": filename, "line": int(line), "code": code}
    raise AssertionError(f"hybridized {block_class.__name__} should not trace")


def compare_modes(block_class) -> bool:
    """Eager vs hybridized outputs and input gradients on both sides of the condition."""
    eager, hybrid = block_class(), block_class()
    eager.initialize()
    hybrid.initialize()
    hybrid.hybridize()
    same = True
    for label, value in INPUTS.items():
        (y0, g0), (y1, g1) = forward_backward(eager, value), forward_backward(hybrid, value)
        ok = np.allclose(y0, y1, rtol=1e-6, atol=1e-7) and np.allclose(g0, g1, rtol=1e-6, atol=1e-7)
        same = same and ok
        print(f"  {label:24s} output {fmt(y1)}  grad {fmt(g1)}  "
              f"eager == hybridized: {ok}")
    return same


def has_contrib_cond() -> bool:
    return hasattr(mx.nd.contrib, "cond") and hasattr(mx.sym.contrib, "cond")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="accepted for symmetry (the example is small)")
    parser.parse_args(argv)
    result: dict = {}

    print("1) a Python `if` on a computed value")
    result["if"] = show_trace_error(MaxNormIf)
    print("\n   reading a value back to Python (float(), asnumpy(), asscalar()) fails the same way")
    result["float"] = show_trace_error(LogNorm)

    print("\n2) rewrite with F.where(norm > max_norm, max_norm / norm, 1)")
    result["where"] = compare_modes(MaxNormWhere)

    print("\n3) rewrite with F.contrib.cond(norm > max_norm, then_func, else_func)")
    if has_contrib_cond():
        result["cond"] = compare_modes(MaxNormCond)
    else:
        print("  F.contrib.cond is not available in this hybridgraph version: use F.where (2)")
        result["cond"] = None
    return result


if __name__ == "__main__":
    res = main()
    if not res["where"] or res["cond"] is False:
        sys.exit("a rewrite gave different eager and hybridized results")
