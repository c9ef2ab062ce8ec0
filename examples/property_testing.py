"""Property-based tests of your own block with hypothesis and `hybrid.testing`.

    python examples/property_testing.py            # runs the tests below, 50 examples each
    python examples/property_testing.py --quick    # 10 examples each (CI)
    pytest examples/property_testing.py            # or let pytest collect them

`hybrid.testing` gives hypothesis strategies for inputs (`arrays(shape)`,
`batch_shapes(feature_shape)`) and `check_hybrid_consistency(block, inputs)`,
which asserts that the hybridized block (with and without static_alloc, in
train and predict mode, over repeated calls) gives the eager outputs, input
gradients, parameter gradients and aux-state updates. Hypothesis draws many
batch sizes and values and shrinks any failure to a minimal example.

The block under test is a user's gated residual layer; the tests check
(1) eager/hybridized consistency, (2) that each output row depends only on
its own input row, and (3) that the output shape equals the input shape.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)
from hybridgraph.gluon import nn  # noqa: E402
from hybridgraph.gluon.testing import arrays, batch_shapes, check_hybrid_consistency  # noqa: E402

FEATURES = 6


class GatedResidual(nn.HybridBlock):
    """y = LayerNorm(x + sigmoid(gate(x)) * tanh(proj(x))): the block a user wants to test."""

    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.proj = nn.Dense(units, flatten=False)
            self.gate = nn.Dense(units, flatten=False)
            self.norm = nn.LayerNorm()

    def hybrid_forward(self, F, x):
        return self.norm(x + F.sigmoid(self.gate(x)) * F.tanh(self.proj(x)))


def make_block(seed: int = 0) -> GatedResidual:
    mx.random.seed(seed)
    net = GatedResidual(FEATURES)
    net.initialize(mx.init.Xavier())
    return net


# a batch of inputs: first draw the shape (batch size 1..5), then the values
batches = batch_shapes((FEATURES,), max_batch=5).flatmap(lambda shape: arrays(shape, -3.0, 3.0))


@given(x=batches)
def test_hybridized_matches_eager(x: np.ndarray) -> None:
    check_hybrid_consistency(make_block(), [x], rtol=1e-5, atol=1e-5)


@given(x=batches, hybridize=st.booleans())
def test_rows_are_independent(x: np.ndarray, hybridize: bool) -> None:
    net = make_block()
    if hybridize:
        net.hybridize()
    whole = net(mx.nd.array(x)).asnumpy()
    for i in range(len(x)):
        row = net(mx.nd.array(x[i:i + 1])).asnumpy()
        np.testing.assert_allclose(row[0], whole[i], rtol=1e-5, atol=1e-6)


@given(x=batches)
def test_output_shape_and_finite(x: np.ndarray) -> None:
    out = make_block()(mx.nd.array(x)).asnumpy()
    assert out.shape == x.shape
    assert np.isfinite(out).all()


TESTS = (test_hybridized_matches_eager, test_rows_are_independent, test_output_shape_and_finite)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 examples per test instead of 50 (for CI)")
    args = parser.parse_args(argv)
    examples = 10 if args.quick else 50
    # how many examples each test draws, and no per-example deadline (a loaded machine is slow):
    # settings applied to each @given test (a conftest.py would register and load a profile;
    # here the tests were decorated before main ran, so they take the settings directly)
    run_settings = settings(max_examples=examples, deadline=None, derandomize=True)
    passed = {}
    for test in TESTS:
        run_settings(test)()        # a @given function runs all its examples when called
        passed[test.__name__] = True
        print(f"{test.__name__}: passed on {examples} hypothesis examples")
    return passed


if __name__ == "__main__":
    main()
