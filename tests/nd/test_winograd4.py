"""Winograd F(4x4, 3x3) (nd/ops/winograd4.py): its measured accuracy bound against float64,
where inference plans use it, and its switch."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.nd.ops import winograd4 as w4
from hybridgraph.symbol.plan.compiled import compile_graph
from tests.nd.gemm_rounding import assert_equal_up_to_gemm_rounding

RNG = np.random.default_rng(5)


@pytest.fixture(params=["numpy", "jit"], autouse=True)
def transforms(request, monkeypatch):
    """Every test runs with numpy's GEMM transforms and with the compiled ones (winograd4_jit.py,
    when numba is installed)."""
    if request.param == "jit":
        pytest.importorskip("numba", reason="the optional [jit] extra (numba) is not installed")
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "1" if request.param == "jit" else "0")
    return request.param


def _exact(x, w, b, pad):
    """float64 convolution and its rounding scale sum(|x| * |w|) (+ |b|) per output."""
    n, c, h, wd = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - 2, wd + 2 * pad - 2
    out = np.zeros((n, w.shape[0], oh, ow))
    mag = np.zeros_like(out)
    for i in range(3):
        for j in range(3):
            patch = xp[:, :, i:i + oh, j:j + ow]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.float64))
            mag += np.einsum("nchw,oc->nohw", np.abs(patch), np.abs(w[:, :, i, j]).astype(np.float64))
    bias = b.astype(np.float64)[None, :, None, None]
    return out + bias, mag + np.abs(bias)


def _relative_error(x, w, b, pad=1):
    n, c, h, wd = x.shape
    out = np.empty((n, w.shape[0], h + 2 * pad - 2, wd + 2 * pad - 2), np.float32)
    w4.winograd4_forward(np, x, w4.weight4(w), b, (pad, pad), out)
    exact, mag = _exact(x, w, b, pad)
    return float((np.abs(out - exact) / mag).max())


# ResNet-18's 3x3 stride-1 layers (channels, map size), at reduced map sizes where the
# channel count is what sets the error; plus odd sizes (partial tiles) and no padding
@pytest.mark.parametrize("c,o,hw,pad", [(64, 64, 16, 1), (128, 128, 12, 1), (256, 256, 8, 1),
                                        (512, 512, 7, 1), (48, 40, 9, 0), (33, 64, 11, 1)])
@pytest.mark.parametrize("data", ["normal", "positive", "wide-range"])
def test_the_error_bound_holds_against_float64(c, o, hw, pad, data):
    x = RNG.standard_normal((1, c, hw, hw))
    if data == "positive":          # no cancellation between terms: the transforms' worst case
        x = np.abs(x)
    elif data == "wide-range":      # magnitudes over six orders
        x = x * 10.0 ** RNG.uniform(-3, 3, x.shape)
    w = RNG.standard_normal((o, c, 3, 3)) / np.sqrt(9 * c)
    b = RNG.standard_normal(o)
    err = _relative_error(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32), pad)
    assert err <= w4.ERROR_BOUND, f"relative error {err:.2e} exceeds the bound {w4.ERROR_BOUND:.0e}"


def test_the_weight_transform_is_g_w_gt():
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    u = w4.weight4(w)                                           # (36, C, O)
    want = np.einsum("ik,ockl,jl->ijco", w4.G, w.astype(np.float64), w4.G).reshape(36, 2, 3)
    np.testing.assert_allclose(u, want, rtol=1e-6, atol=1e-7)


def _conv_net():
    x = S.var("x")
    c = S.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=32, name="c1")
    y = S.Activation(S.BatchNorm(c, name="bn"), act_type="relu", name="r1")
    return S.Convolution(y, kernel=(3, 3), pad=(1, 1), num_filter=32, no_bias=True, name="c2")


def _params(sym, x):
    shapes, _, aux = sym.infer_shape(x=x.shape)
    names = sym.list_arguments() + sym.list_auxiliary_states()
    return {n: (np.abs(RNG.standard_normal(s)) + 0.5 if "var" in n else RNG.standard_normal(s) * 0.2
                ).astype(np.float32) for n, s in zip(names, shapes + aux) if n != "x"}


def _plan_run(x, params):
    sym = _conv_net()
    cg = compile_graph(sym._outputs, ["x", *params], for_training=False, params=params)
    plan, outs, _ = cg.run([x, *params.values()])
    wino = [st.name for st in plan.sched.steps if st.op.name == "_fused_convolution" and st.attrs.winograd]
    return outs[0], wino


def test_inference_plans_use_it_where_it_pays_and_the_switch_turns_it_off(monkeypatch):
    x = RNG.standard_normal((2, 32, 16, 16)).astype(np.float32)
    params = _params(_conv_net(), x)
    out, wino = _plan_run(x, params)
    assert wino == ["r1", "c2"]                 # the fused conv+relu, and the plain one
    monkeypatch.setenv("HYBRIDGRAPH_WINOGRAD4", "0")
    ref, none = _plan_run(x, params)
    assert none == []
    assert np.abs(out - ref).max() <= 1e-4 * np.abs(ref).max()


def test_it_is_not_used_where_it_does_not_fit():
    from hybridgraph.nd.registry import get_op
    conv = get_op("Convolution")

    def attrs(**kw):
        return conv.parse_attrs({"kernel": (3, 3), "num_filter": 64, "pad": (1, 1), **kw})
    assert w4.use_winograd4((1, 64, 56, 56), (64, 64, 3, 3), np.float32, attrs())
    assert not w4.use_winograd4((1, 64, 56, 56), (64, 64, 3, 3), np.float64, attrs())
    assert not w4.use_winograd4((1, 64, 56, 56), (64, 64, 3, 3), np.float32, attrs(stride=(2, 2)))
    assert not w4.use_winograd4((1, 64, 56, 56), (64, 64, 3, 3), np.float32, attrs(dilate=(2, 2)))
    assert not w4.use_winograd4((1, 64, 56, 56), (64, 32, 3, 3), np.float32, attrs(num_group=2))
    assert not w4.use_winograd4((1, 8, 56, 56), (8, 8, 3, 3), np.float32, attrs(num_filter=8))   # few channels
    assert not w4.use_winograd4((1, 1024, 56, 56), (64, 1024, 3, 3), np.float32, attrs())      # beyond the bound
    assert not w4.use_winograd4((1, 512, 7, 7), (512, 512, 3, 3), np.float32, attrs(num_filter=512))  # few tiles


def test_its_scratch_is_two_chunk_buffers(monkeypatch):
    """The tiles, V, M and Y stages take turns in two buffers: scratch memory is two chunks'
    worth (plus the padded input), not four; the result does not depend on the chunking (up to
    the rounding of its 36 GEMMs in another shape: gemm_rounding.py)."""
    import tracemalloc
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 32, 16, 16)).astype(np.float32)
    w = rng.standard_normal((48, 32, 3, 3)).astype(np.float32)
    u = w4.weight4(w)
    whole = np.empty((4, 48, 16, 16), np.float32)
    w4.winograd4_forward(np, x, u, None, (1, 1), whole)
    monkeypatch.setattr(w4, "CHUNK_BYTES", 36 * 48 * 16 * 4 * 2)     # two images per chunk
    monkeypatch.setattr(w4, "JIT_CHUNK_BYTES", 36 * 48 * 16 * 4 * 2)
    monkeypatch.setattr(w4, "JIT_MIN_CHUNK_TILES", 1)
    out = np.empty_like(whole)
    tracemalloc.start()
    try:
        w4.winograd4_forward(np, x, u, None, (1, 1), out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    chunk = 36 * 2 * 16 * 48 * 4
    xpad = 2 * 18 * 18 * 32 * 4
    assert peak < 2 * chunk + xpad + 64 * 1024
    assert_equal_up_to_gemm_rounding(out, whole)
