"""The rest of MXNet 1.9.1's test_utils: optimizer comparison, stderr silencing, speed checks,
large-tensor and matrix builders, hybridize consistency, environment probes.

Re-exported by `mx.test_utils`; split from it to keep each file small.
Sparse-storage builders raise NotImplementedError: hybridgraph arrays are dense.
"""
from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.testing as npt

from hybridgraph import nd
from hybridgraph.nd.backend import current_context

from .compare import assert_almost_equal, default_context


def checkShapes(a: Any, b: Any) -> None:  # noqa: N802 - MXNet's name
    """AssertionError when a.shape != b.shape."""
    if a.shape != b.shape:
        raise AssertionError(npt.build_err_msg([a, b], err_msg=f"a.shape = {a.shape} and b.shape = {b.shape} "
                                                               "are not equal"))


def locationError(a: Any, b: Any, index: Any, names: tuple, maxError: bool = False) -> str:  # noqa: N802, N803
    """The message naming the element `index` where `a` and `b` differ."""
    maximum = "maximum " if maxError else ""
    return f"Location of {maximum}error: {index}, {names[0]}={a[index]:.8f}, {names[1]}={b[index]:.8f}"


def _sparse(name: str) -> NotImplementedError:
    return NotImplementedError(f"test_utils.{name}: sparse storage (csr / row_sparse) is not supported by "
                               "hybridgraph; build dense arrays with rand_ndarray(shape) or mx.nd.array")


def shuffle_csr_column_indices(csr: Any) -> Any:
    """Not supported: sparse storage."""
    raise _sparse("shuffle_csr_column_indices")


def rand_sparse_ndarray(shape: Any, stype: str, *args: Any, **kwargs: Any) -> Any:
    """Not supported: sparse storage."""
    raise _sparse("rand_sparse_ndarray")


def create_sparse_array(shape: Any, stype: str, *args: Any, **kwargs: Any) -> Any:
    """Not supported: sparse storage."""
    raise _sparse("create_sparse_array")


def create_sparse_array_zd(shape: Any, stype: str, density: float, *args: Any, **kwargs: Any) -> Any:
    """Not supported: sparse storage."""
    raise _sparse("create_sparse_array_zd")


def assign_each(the_input: np.ndarray, function: Callable | None) -> np.ndarray:
    """`function` applied to each element (a float64 array), or a copy when `function` is None."""
    if function is None:
        return np.array(the_input)
    out = np.zeros(the_input.shape)
    for idx, val in np.ndenumerate(the_input):
        out[idx] = function(val)
    return out


def assign_each2(input1: np.ndarray, input2: np.ndarray, function: Callable | None) -> np.ndarray:
    """`function(a, b)` over paired elements (a float64 array), or a copy of `input1` when None."""
    if function is None:
        return np.array(input1)
    assert input1.shape == input2.shape
    out = np.zeros(input1.shape)
    for idx, val in np.ndenumerate(input1):
        out[idx] = function(val, input2[idx])
    return out


def create_2d_tensor(rows: int, columns: int, dtype: Any = np.int64) -> nd.NDArray:
    """A rows x columns array whose row i holds i."""
    a = nd.arange(0, rows, dtype=dtype).reshape(rows, 1)
    return nd.broadcast_to(a, shape=(a.shape[0], columns))


def create_vector(size: int, dtype: Any = np.int64) -> nd.NDArray:
    """0, 1, ..., size-1."""
    return nd.arange(0, size, dtype=dtype)


def get_identity_mat(size: int) -> nd.NDArray:
    """The size x size identity (float32)."""
    return nd.array(np.eye(size, dtype=np.float32))


def get_identity_mat_batch(size: int) -> nd.NDArray:
    """Two stacked identities, shape (2, size, size)."""
    eye = np.eye(size, dtype=np.float32)
    return nd.array(np.stack([eye, eye]))


def _flush_stderr() -> None:
    try:
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass


@contextmanager
def discard_stderr():
    """Send stderr to /dev/null inside the block: file descriptor 2 (C-level writers) and, when
    sys.stderr has another descriptor (a captured stream), that one too."""
    fds = {2}
    try:
        fds.add(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # a sys.stderr without a descriptor
        pass
    with open(os.devnull, "w") as bit_bucket:
        saved = {fd: os.dup(fd) for fd in fds}
        try:
            _flush_stderr()
            for fd in fds:
                os.dup2(bit_bucket.fileno(), fd)
            yield
        finally:
            _flush_stderr()
            for fd, dup in saved.items():
                os.dup2(dup, fd)
                os.close(dup)


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: float | None = None, atol: float | None = None) -> None:
    """assert_almost_equal over (nested tuples of) arrays; nothing to compare when either is None."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def compare_optimizer(opt1: Any, opt2: Any, shape: Any, dtype: Any, w_stype: str = "default",
                      g_stype: str = "default", rtol: float = 1e-4, atol: float = 1e-5, compare_states: bool = True,
                      ntensors: int = 1) -> None:
    """One update of `opt1` and `opt2` from the same random weight and gradient must agree.

    With a list of shapes, `opt2` updates all tensors in one multi-tensor call
    and `opt1` one by one.
    """
    from hybridgraph.nd import random as ndrandom  # noqa: PLC0415
    if w_stype != "default" or g_stype != "default":
        raise _sparse("compare_optimizer with sparse weights or gradients")
    ctx = default_context()
    if not isinstance(shape, list):
        assert ntensors == 1
        w2 = ndrandom.uniform(shape=shape, ctx=ctx, dtype=dtype)
        w1 = w2.copyto(ctx)
        g2 = ndrandom.uniform(shape=shape, ctx=ctx, dtype=dtype)
        g1 = g2.copyto(ctx)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(ndrandom.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(ndrandom.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2, g2 = tuple(w.copy() for w in w1), tuple(g.copy() for g in g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


def check_speed(sym: Any, location: dict | None = None, ctx: Any = None, N: int = 20,  # noqa: N803
                grad_req: Any = None, typ: str = "whole", **kwargs: Any) -> float:
    """Seconds per forward(+backward) of `sym` bound with simple_bind, averaged over N runs."""
    ctx = ctx or default_context()
    grad_req = grad_req or "write"
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=arr.shape, scale=1.0) for k, arr in exe.arg_dict.items()}
    else:
        assert isinstance(location, dict), f'Expect dict, get "location"={location}'
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **{k: v.shape for k, v in location.items()})
    for name, iarr in location.items():
        exe.arg_dict[name][:] = iarr.astype(exe.arg_dict[name].dtype)
    if typ not in ("whole", "forward"):
        raise ValueError('typ can only be "whole" or "forward".')
    train = typ == "whole"

    def step():
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)
    step()  # warm up
    tic = time.time()
    for _ in range(N):
        step()
    nd.waitall()
    return (time.time() - tic) / N


def is_cd_run() -> bool:
    """Whether the CD_JOB environment variable says this is a continuous-delivery run."""
    return os.environ.get("CD_JOB") == "1"


def is_aarch64_run() -> bool:
    """Whether this machine is aarch64."""
    return platform.machine() == "aarch64"


def has_tvm_ops() -> bool:
    """False: hybridgraph has no TVM-generated operators."""
    return False


def is_op_runnable() -> bool:
    """True: every hybridgraph operator runs on CPU, and on GPU without TVM constraints."""
    current_context()
    return True


def check_gluon_hybridize_consistency(net_builder: Callable, data_l: list, numpy_func: Callable | None = None,
                                      test_grad: bool = True, rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """The block from `net_builder(prefix='net_')` gives the same outputs (and input gradients)
    hybridized and not, with the same parameters; and matches `numpy_func` when given."""
    from hybridgraph import autograd  # noqa: PLC0415
    from hybridgraph.gluon import initializer  # noqa: PLC0415

    class _Params(initializer.Initializer):
        def __init__(self, values):
            super().__init__()
            self._values = values

        def _init_weight(self, name, arr):
            arr[:] = self._values[name]
    saved_out = saved_grads = params = None
    for hybridize in (False, True):
        for use_autograd in ([False, True] if test_grad else [False]):
            net = net_builder(prefix="net_")
            net.initialize(params)
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if params is None:
                params = _Params({k: v.data().asnumpy() for k, v in net.collect_params().items()})
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in inputs]
                if saved_grads is None:
                    saved_grads = grads
                for g, s in zip(grads, saved_grads):
                    assert_almost_equal(g, s, rtol=rtol, atol=atol)
    if numpy_func is not None:
        assert_almost_equal(saved_out, numpy_func(*[x.asnumpy() for x in data_l]), rtol=rtol, atol=atol)


def new_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A well-conditioned n x n matrix with real eigenvalues in [-10, 10]."""
    while True:
        d = np.diag(np.random.uniform(-1.0, 1.0, n))
        v = np.random.uniform(-1.0, 1.0, n).reshape(n, 1)
        v = v / np.linalg.norm(v, axis=-2, keepdims=True)
        q = np.matmul(np.eye(n) - 2 * np.matmul(v, v.T), d)
        if np.linalg.cond(q, 2) < 3:
            break
    d = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(np.linalg.inv(q), d), q)


def new_matrix_with_real_eigvals_nd(shape: tuple) -> np.ndarray:
    """A batch of `new_matrix_with_real_eigvals_2d` of the given shape (..., n, n)."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def new_orthonormal_matrix_2d(n: int) -> np.ndarray:
    """A random n x n orthonormal matrix (QR of a random symmetric one)."""
    x = np.random.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random symmetric n x n matrix with eigenvalues in [-10, 10]."""
    q = new_orthonormal_matrix_2d(n)
    return np.matmul(np.matmul(q.T, np.diag(np.random.uniform(-10.0, 10.0, n))), q)


def new_sym_matrix_with_real_eigvals_nd(shape: tuple) -> np.ndarray:
    """A batch of `new_sym_matrix_with_real_eigvals_2d` of the given shape (..., n, n)."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)
