"""The cases of higher_order_ref.npz (gen_higher_order_ref.py writes it with MXNet 1.9.1,
tests/nd/test_higher_order.py reads it): one definition for both, each `fn(nd, *inputs)`
written with the API the two share, so the same code runs on `mxnet` and `hybridgraph`."""
import numpy as np

U = (3, 4)


def _unary(name, lo=-2.0, hi=2.0, orders=3):
    return (lambda nd, x: getattr(nd, name)(x)), [(U, lo, hi)], orders


CASES = {
    **{n: _unary(n) for n in ("sin", "cos", "sinh", "cosh", "tanh", "arctan", "arcsinh", "radians",
                              "degrees", "relu", "square", "expm1", "exp", "abs", "sigmoid",
                              "negative", "softsign", "erf")},
    "tan": _unary("tan", -1.0, 1.0),
    "arcsin": _unary("arcsin", -0.8, 0.8), "arccos": _unary("arccos", -0.8, 0.8),
    "arctanh": _unary("arctanh", -0.8, 0.8), "arccosh": _unary("arccosh", 1.2, 3.0),
    **{n: _unary(n, 0.3, 3.0) for n in ("log", "log2", "log10", "reciprocal", "sqrt", "cbrt", "rsqrt",
                                        "rcbrt")},
    "log1p": _unary("log1p", -0.5, 2.0),
    "clip": (lambda nd, x: nd.clip(x, -1.0, 1.0), [(U, -2.0, 2.0)], 3),
    "softmax": (lambda nd, x: nd.softmax(x, axis=-1), [(U, -2.0, 2.0)], 3),
    "softmax_axis0_temp": (lambda nd, x: nd.softmax(x, axis=0, temperature=2.0), [(U, -2.0, 2.0)], 3),
    "log_softmax": (lambda nd, x: nd.log_softmax(x, axis=-1), [(U, -2.0, 2.0)], 3),
    "softmin": (lambda nd, x: nd.softmin(x, axis=-1), [(U, -2.0, 2.0)], 3),
    "power_scalar": (lambda nd, x: x ** 3, [(U, 0.3, 2.0)], 3),
    "rpower_scalar": (lambda nd, x: 2.0 ** x, [(U, -1.0, 1.0)], 3),
    "div_rscalar": (lambda nd, x: 3.0 / x, [(U, 0.3, 2.0)], 3),
    "elemwise_mul": (lambda nd, a, b: nd.elemwise_mul(a, b), [(U, -2.0, 2.0), (U, -2.0, 2.0)], 3),
    "elemwise_div": (lambda nd, a, b: nd.elemwise_div(a, b), [(U, -2.0, 2.0), (U, 0.5, 2.0)], 3),
    "broadcast_mul": (lambda nd, a, b: nd.broadcast_mul(a, b), [(U, -2.0, 2.0), ((1, 4), -2.0, 2.0)], 3),
    "broadcast_div": (lambda nd, a, b: nd.broadcast_div(a, b), [(U, -2.0, 2.0), ((3, 1), 0.5, 2.0)], 3),
    "broadcast_power": (lambda nd, a, b: nd.broadcast_power(a, b), [(U, 0.5, 2.0), ((1, 4), -1.0, 2.0)], 3),
    "mul_chain": (lambda nd, x: x * x * nd.sin(x), [(U, -2.0, 2.0)], 3),
    "sum_square": (lambda nd, x: nd.sum(nd.square(x), axis=1), [(U, -2.0, 2.0)], 3),
    "mean_exp": (lambda nd, x: nd.mean(nd.exp(x), axis=0), [(U, -1.0, 1.0)], 3),
    "dot": (lambda nd, a, b: nd.dot(a, b), [((3, 4), -1.0, 1.0), ((4, 2), -1.0, 1.0)], 3),
    "dot_ta": (lambda nd, a, b: nd.dot(a, b, transpose_a=True), [((4, 3), -1.0, 1.0), ((4, 2), -1.0, 1.0)], 3),
    "batch_dot": (lambda nd, a, b: nd.batch_dot(a, b), [((2, 3, 4), -1.0, 1.0), ((2, 4, 2), -1.0, 1.0)], 3),
    "fc_flatten": (lambda nd, x, w, b: nd.FullyConnected(x, w, b, num_hidden=3),
                   [((2, 2, 3), -1.0, 1.0), ((3, 6), -1.0, 1.0), ((3,), -1.0, 1.0)], 3, (0, 1)),
    "fc_no_flatten": (lambda nd, x, w: nd.FullyConnected(x, w, num_hidden=3, no_bias=True, flatten=False),
                      [((2, 2, 4), -1.0, 1.0), ((3, 4), -1.0, 1.0)], 3),
    "fc_tanh": (lambda nd, x, w, b: nd.tanh(nd.FullyConnected(x, w, b, num_hidden=3)),
                [((2, 4), -1.0, 1.0), ((3, 4), -1.0, 1.0), ((3,), -1.0, 1.0)], 3, (0, 1)),
    "sigmoid_of_square": (lambda nd, x: nd.sigmoid(nd.square(x)), [(U, -2.0, 2.0)], 3),
}


def unpack(case):
    """(fn, input specs, orders, positions of the inputs differentiated: all when not given)."""
    fn, inputs, orders, *wrt = case
    return fn, inputs, orders, tuple(wrt[0]) if wrt else tuple(range(len(inputs)))


def make_heads(nd, fn, arrays, orders, wrt, rng):
    """Head gradients per order: order 1 shaped like the outputs, later ones like the inputs in wrt."""
    xs = [nd.array(a, dtype="float64") for a in arrays]
    ys = fn(nd, *xs)
    ys = ys if isinstance(ys, (list, tuple)) else [ys]
    heads = [[rng.uniform(-1.0, 1.0, y.shape) for y in ys]]
    for _ in range(1, orders):
        heads.append([rng.uniform(-1.0, 1.0, arrays[i].shape) for i in wrt])
    return heads


def _message(e: Exception) -> str:
    """The line of an error that says what failed (MXNet's carry a C++ stack trace first)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    said = [ln for ln in lines if "Check failed" in ln or "rror" in ln]
    return (said or lines or [type(e).__name__])[0][:300]


def run_case(mx, fn, arrays, heads, wrt):
    """`{"g<order>_<input>": gradient}` up to len(heads) orders, each order differentiating all of the
    previous order's gradients (weighted by that order's heads) with respect to the inputs in wrt;
    `{"err<order>": message}` where the framework refuses an order (nothing after it)."""
    nd = mx.nd
    xs = [nd.array(a, dtype="float64") for a in arrays]
    for i in wrt:
        xs[i].attach_grad()
    variables = [xs[i] for i in wrt]
    res = {}
    with mx.autograd.record():
        ys = fn(nd, *xs)
        ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
        for order, hs in enumerate(heads, 1):
            try:
                ys = mx.autograd.grad(ys, variables, head_grads=[nd.array(h, dtype="float64") for h in hs],
                                      create_graph=True, retain_graph=True)
            except Exception as e:  # noqa: BLE001 - the message is the data
                res[f"err{order}"] = np.array(_message(e))
                break
            for i, g in enumerate(ys):
                res[f"g{order}_{i}"] = g.asnumpy()
    return res
