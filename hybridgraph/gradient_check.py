"""Part of `mx.test_utils` (hybridgraph/test_utils.py re-exports everything):
running Symbols for tests. `check_numeric_gradient`, `check_symbolic_forward`,
`check_symbolic_backward` and `check_consistency` bind a Symbol with the
executor and compare against numpy values or finite differences, exactly as
MXNet 1.9.1's versions do.
"""
from __future__ import annotations

import traceback
from collections.abc import Sequence
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph import symbol as _sym
from hybridgraph.nd import backend as _backend
from hybridgraph.nd.ndarray import NDArray
from hybridgraph.symbol import Symbol
from .compare import assert_almost_equal, default_context, default_numeric_eps, get_tolerance, get_tols


# -- running symbols ----------------------------------------------------------------------------------

def simple_forward(sym: Symbol, ctx: _backend.Context | None = None, is_train: bool = False,
                   **inputs: np.ndarray) -> np.ndarray | list[np.ndarray]:
    """Bind `sym` to the keyword numpy arrays, run forward once and return numpy outputs.

    Parameters
    ----------
    sym : Symbol
    ctx : Context, optional
        Defaults to `default_context()`.
    is_train : bool
        Run in training mode.
    inputs : keyword arguments
        Each argument name mapped to a numpy array.

    Returns
    -------
    A numpy array, or a list of them when the symbol has several outputs.
    """
    ctx = ctx or default_context()
    inputs = {k: nd.array(v, ctx=ctx) for k, v in inputs.items()}
    exe = sym.bind(ctx, args=inputs)
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def _as_nd(v: Any, ctx: _backend.Context, dtype: Any) -> NDArray:
    if isinstance(v, NDArray):
        return v if v.context == ctx else v.as_in_context(ctx)
    v = np.asarray(v)
    return nd.array(v, ctx=ctx, dtype=v.dtype if isinstance(dtype, str) and dtype == "asnumpy" else dtype)


def _check_dtype(dtype: Any, allow_asnumpy: bool = True) -> None:
    ok = (allow_asnumpy and isinstance(dtype, str) and dtype == "asnumpy") or \
        dtype in (np.float16, np.float32, np.float64)
    assert ok, f"dtype must be {'asnumpy, ' if allow_asnumpy else ''}np.float16, np.float32 or np.float64"


def _parse_location(sym: Symbol, location: Any, ctx: _backend.Context, dtype: Any = np.float32) -> dict:
    """`location` (list in `sym.list_arguments()` order, or dict by name) as NDArrays by name."""
    assert isinstance(location, (dict, list, tuple))
    _check_dtype(dtype)
    args = sym.list_arguments()
    if isinstance(location, dict):
        if set(location.keys()) != set(args):
            raise ValueError("Symbol arguments and keys of the given location do not match."
                             f"symbol args:{set(args)}, location.keys():{set(location.keys())}")
    else:
        location = dict(zip(args, location))
    return {k: _as_nd(location[k], ctx, dtype) for k in sorted(location)}


def _parse_aux_states(sym: Symbol, aux_states: Any, ctx: _backend.Context, dtype: Any = np.float32) -> dict | None:
    """`aux_states` (list or dict) as NDArrays by name; None stays None."""
    _check_dtype(dtype)
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states.keys()) != set(names):
            raise ValueError("Symbol aux_states names and given aux_states do not match."
                             f"symbol aux_names:{set(names)}, aux_states.keys:{set(aux_states.keys())}")
    else:
        aux_states = dict(zip(names, aux_states))
    return {k: _as_nd(v, ctx, dtype) for k, v in aux_states.items()}


def numeric_grad(executor: Any, location: dict, aux_states: dict | None = None, eps: float = 1e-4,
                 use_forward_train: bool = True, dtype: Any = np.float32) -> dict:
    """Central finite differences of ``sum(executor.outputs[0])`` at `location`.

    Parameters
    ----------
    executor : Executor
        A bound executor whose first output is differentiated.
    location : dict of str to numpy.ndarray
        The argument values (every argument); perturbed one element at a time.
    aux_states : dict of str to numpy.ndarray, optional
        Auxiliary states, restored before every forward.
    eps : float
        The finite-difference step.
    use_forward_train : bool
        Run forward with `is_train=True`.
    dtype : np.float16, np.float32 or np.float64
        The dtype the perturbed arguments are written in.

    Returns
    -------
    dict of str to numpy.ndarray: the approximate gradients.
    """
    _check_dtype(dtype, allow_asnumpy=False)
    approx_grads = {k: np.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    for k, v in location.items():
        executor.arg_dict[k][:] = nd.array(v, dtype=dtype, ctx=executor.arg_dict[k].context)
    location = {k: np.array(v, order="C", copy=True) for k, v in location.items()}

    def run(k: str, v: np.ndarray) -> np.ndarray:
        executor.arg_dict[k][:] = np.asarray(v, dtype=dtype)
        if aux_states is not None:
            for key, val in aux_states.items():
                executor.aux_dict[key][:] = np.asarray(val, dtype=dtype)
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy()

    for k, v in location.items():
        if v.dtype.kind != "f":
            continue
        old_value = v.copy()
        flat = v.reshape(-1)
        for i in range(flat.size):
            flat[i] += eps / 2.0
            f_peps = run(k, v)
            flat[i] -= eps
            f_neps = run(k, v)
            approx_grads[k].reshape(-1)[i] = (f_peps - f_neps).sum() / eps
            flat[i] = old_value.reshape(-1)[i]
        executor.arg_dict[k][:] = np.asarray(old_value, dtype=dtype)
    return approx_grads


def _grad_nodes_and_reqs(sym: Symbol, grad_nodes: Any) -> tuple[list[str], dict]:
    if grad_nodes is None:
        nodes = sym.list_arguments()
        return nodes, {k: "write" for k in nodes}
    if isinstance(grad_nodes, (list, tuple)):
        nodes = list(grad_nodes)
        return nodes, {k: "write" for k in nodes}
    if isinstance(grad_nodes, dict):
        return list(grad_nodes.keys()), dict(grad_nodes)
    raise ValueError(f"grad_nodes must be None, a list or a dict, got {type(grad_nodes).__name__}")


def check_numeric_gradient(sym: Symbol, location: Any, aux_states: Any = None, numeric_eps: Any = None,
                           rtol: Any = None, atol: Any = None, grad_nodes: Any = None,
                           use_forward_train: bool = True, ctx: _backend.Context | None = None,
                           grad_stype_dict: dict | None = None, dtype: Any = np.float32) -> None:
    """Verify a symbol's backward pass against finite differences.

    The output is multiplied by a fixed random projection and wrapped in
    `make_loss`, so one backward pass gives the gradient of a scalar; that is
    compared with central finite differences of the same scalar.

    Parameters
    ----------
    sym : Symbol
        The symbol to check (its first output).
    location : list or tuple or dict
        Values of every argument: numpy arrays in `sym.list_arguments()` order,
        or a dict by argument name.
    aux_states : list or tuple or dict, optional
        The auxiliary states.
    numeric_eps : float, optional
        The finite-difference step (default per dtype: float32 2**-9).
    rtol, atol : None or float
        Tolerances (defaults per dtype, see `assert_almost_equal`).
    grad_nodes : None or list or tuple or dict, optional
        Arguments to check (all by default); a dict gives each its grad_req.
    use_forward_train : bool
        Run forward with `is_train=True` for the finite differences.
    ctx : Context, optional
        Where to run (default: `default_context()`).
    grad_stype_dict : dict, optional
        Accepted for compatibility; only dense gradients exist.
    dtype : np.float16, np.float32 or np.float64
        The dtype of the bound arrays.

    Raises
    ------
    AssertionError
        When a symbolic gradient differs from the numeric one, naming the
        argument (``NUMERICAL_x`` vs ``BACKWARD_x``) and the worst element.
    """
    _check_dtype(dtype, allow_asnumpy=False)
    ctx = ctx if ctx is not None else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_states_npy = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    grad_nodes, grad_req = _grad_nodes_and_reqs(sym, grad_nodes)

    _, out_shape, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    proj = _sym.Variable("__random_proj")
    out = _sym.make_loss(sym * proj)
    location = dict(location)
    location["__random_proj"] = nd.array(np.random.rand(*out_shape[0]) + 0.1, ctx=ctx, dtype=dtype)
    args_grad_npy = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_nodes}
    args_grad_npy["__random_proj"] = np.random.normal(0, 0.01, size=out_shape[0])
    args_grad = {k: nd.array(v, ctx=ctx, dtype=dtype) for k, v in args_grad_npy.items()}

    executor = out.bind(ctx, grad_req=grad_req, args=location, args_grad=args_grad, aux_states=aux_states)
    if len(executor.arg_arrays) != len(location):
        raise ValueError("Executor arg_arrays and and location len do not match."
                         f"Got {len(executor.arg_arrays)} inputs and {len(location)} locations")
    assert len(executor.outputs) == 1
    executor.forward(is_train=True)
    eps = get_tolerance(executor.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16):
        assert eps >= 1e-5, "finite differences need eps >= 1e-5 in float32/float16"
    executor.backward()
    symbolic_grads = {k: v.asnumpy() for k, v in executor.grad_dict.items() if v is not None}
    numeric_gradients = numeric_grad(executor, location_npy, aux_states_npy, eps=eps,
                                     use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        _compare_grad(name, grad_req[name], numeric_gradients[name], symbolic_grads.get(name),
                      args_grad_npy[name], rtol, atol)


def _compare_grad(name: str, req: str, fd_grad: np.ndarray, sym_grad: np.ndarray | None,
                  orig_grad: np.ndarray, rtol: Any, atol: Any) -> None:
    names = (f"NUMERICAL_{name}", f"BACKWARD_{name}")
    if req == "write":
        assert_almost_equal(fd_grad, sym_grad, rtol, atol, names)
    elif req == "add":
        assert_almost_equal(fd_grad, sym_grad - orig_grad, rtol, atol, names)
    elif req == "null":
        if sym_grad is not None:
            assert_almost_equal(orig_grad, sym_grad, rtol, atol, names)
    else:
        raise ValueError(f"Invalid grad_req {req} for argument {name}")


def check_symbolic_forward(sym: Symbol, location: Any, expected: Any, rtol: Any = None, atol: Any = None,
                           aux_states: Any = None, ctx: _backend.Context | None = None,
                           equal_nan: bool = False, dtype: Any = np.float32) -> list[NDArray]:
    """Compare a symbol's forward outputs with expected numpy values.

    Parameters
    ----------
    sym : Symbol
    location : list of np.ndarray or dict of str to np.ndarray
        The argument values (list in `sym.list_arguments()` order, or by name).
    expected : list of np.ndarray or dict of str to np.ndarray
        The expected outputs (in output order, or by `sym.list_outputs()` name).
    rtol, atol : None or float
        Tolerances (defaults per dtype).
    aux_states : list or dict of np.ndarray, optional
    ctx : Context, optional
    equal_nan : bool
        Whether NaN equals NaN.
    dtype : "asnumpy" or np.float16 or np.float32 or np.float64
        The dtype of the bound arrays ("asnumpy": that of each numpy array).

    Returns
    -------
    The executor's outputs (list of NDArray).

    Examples
    --------
    >>> lhs, rhs = mx.sym.Variable('lhs'), mx.sym.Variable('rhs')
    >>> check_symbolic_forward(mx.sym.dot(lhs, rhs), [np.eye(2), np.ones((2, 2))], [np.ones((2, 2))])
    """
    _check_dtype(dtype)
    ctx = ctx if ctx is not None else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    args_grad = {k: nd.zeros(v.shape, ctx=ctx, dtype=v.dtype) for k, v in location.items()}
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad, aux_states=aux_states)
    executor.forward(is_train=False)
    for output_name, expect, output in zip(sym.list_outputs(), expected, executor.outputs):
        assert_almost_equal(expect, output, rtol, atol, (f"EXPECTED_{output_name}", f"FORWARD_{output_name}"),
                            equal_nan=equal_nan)
    return executor.outputs


def _out_grads_as_nd(out_grads: Any, ctx: _backend.Context, dtype: Any) -> Any:
    if out_grads is None:
        return None
    if isinstance(out_grads, (tuple, list)):
        return [_as_nd(g, ctx, dtype) if isinstance(g, np.ndarray) else g for g in out_grads]
    if isinstance(out_grads, dict):
        return {k: _as_nd(g, ctx, dtype) if isinstance(g, np.ndarray) else g for k, g in out_grads.items()}
    raise TypeError(f"out_grads must be None, a list or a dict, got {type(out_grads).__name__}")


def check_symbolic_backward(sym: Symbol, location: Any, out_grads: Any, expected: Any, rtol: Any = None,
                            atol: Any = None, aux_states: Any = None, grad_req: Any = "write",
                            ctx: _backend.Context | None = None, grad_stypes: dict | None = None,
                            equal_nan: bool = False, dtype: Any = np.float32) -> dict:
    """Compare a symbol's backward results (argument gradients) with expected numpy values.

    The gradient buffers start as random values, so `grad_req='add'` is
    checked as ``grad - initial`` and `'null'` as "left unchanged".

    Parameters
    ----------
    sym : Symbol
    location : list of np.ndarray or dict of str to np.ndarray
        The argument values.
    out_grads : None or list of np.ndarray or dict of str to np.ndarray
        The head gradients (None for loss outputs).
    expected : list of np.ndarray or dict of str to np.ndarray
        The expected gradients (list in `sym.list_arguments()` order, or by name).
    rtol, atol : None or float
    aux_states : list or dict of np.ndarray, optional
    grad_req : str or list of str or dict of str to str
        'write', 'add' or 'null'.
    ctx : Context, optional
    grad_stypes : dict, optional
        Accepted for compatibility; only dense gradients exist.
    equal_nan : bool
    dtype : "asnumpy" or np.float16 or np.float32 or np.float64

    Returns
    -------
    dict of str to NDArray: the gradient arrays.
    """
    _check_dtype(dtype)
    ctx = ctx if ctx is not None else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    args_grad_npy = {k: np.random.normal(size=np.shape(expected[k])) for k in sorted(expected)}
    args_grad = {k: nd.array(v, ctx=ctx, dtype=np.asarray(expected[k]).dtype
                             if isinstance(dtype, str) else dtype)
                 for k, v in args_grad_npy.items()}
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(sym.list_arguments(), grad_req))
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad, aux_states=aux_states, grad_req=grad_req)
    executor.forward(is_train=True)
    executor.backward(_out_grads_as_nd(out_grads, ctx, dtype))
    for name in expected:
        names = (f"EXPECTED_{name}", f"BACKWARD_{name}")
        req, got = grad_req[name], args_grad[name].asnumpy()
        if req == "write":
            assert_almost_equal(expected[name], got, rtol, atol, names, equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(expected[name], got - args_grad_npy[name], rtol, atol, names,
                                equal_nan=equal_nan)
        elif req == "null":
            assert_almost_equal(args_grad_npy[name], got, rtol, atol, names, equal_nan=equal_nan)
        else:
            raise ValueError(f"Invalid grad_req {req} for argument {name}")
    return args_grad


def _smaller_dtype(dt1: Any, dt2: Any) -> Any:
    """The less precise of two dtypes."""
    return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2


def _compare(arr: NDArray, gtarr: NDArray, rtol: Any, atol: Any, equal_nan: bool, raise_on_err: bool,
             what: str) -> None:
    try:
        assert_almost_equal(arr, gtarr, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except AssertionError as e:
        print(what)
        traceback.print_exc()
        if raise_on_err:
            raise
        print(str(e))


def check_consistency(sym: Symbol | Sequence[Symbol], ctx_list: Sequence[dict], scale: float = 1.0,
                      grad_req: Any = "write", arg_params: dict | None = None, aux_params: dict | None = None,
                      rtol: Any = None, atol: Any = None, raise_on_err: bool = True,
                      ground_truth: dict | None = None, equal_nan: bool = False, use_uniform: bool = False,
                      rand_type: Any = np.float64) -> dict:
    """Check that a symbol gives the same outputs and gradients across contexts and dtypes.

    Each entry of `ctx_list` is the keyword arguments of one `simple_bind`:
    ``{'ctx': mx.cpu(0), 'data': (2, 3), 'type_dict': {'data': np.float32}}``.
    The most precise executor (by output dtype) is the ground truth; the
    others are compared with tolerances of their own dtypes.

    Parameters
    ----------
    sym : Symbol or list of Symbols
        One symbol for every context, or one symbol per context.
    ctx_list : list of dict
        At least two bind specifications.
    scale : float
        Standard deviation (or half-range with `use_uniform`) of the random inputs.
    grad_req : str or list of str or dict of str to str
    arg_params, aux_params : dict of name -> numpy array, optional
        Fixed input values (others are random).
    rtol, atol : float or dict dtype -> float, optional
    raise_on_err : bool
        Raise on the first mismatch (else print it and continue).
    ground_truth : dict of name -> array, optional
        Compare against these instead of the most precise executor.
    equal_nan : bool
    use_uniform : bool
        Draw inputs uniformly instead of normally.
    rand_type : np.dtype
        The dtype the random inputs are cast to.

    Returns
    -------
    dict: the ground-truth outputs and gradients by name.
    """
    assert len(ctx_list) > 1
    syms = [sym] * len(ctx_list) if isinstance(sym, Symbol) else list(sym)
    assert len(syms) == len(ctx_list)
    output_names, arg_names = syms[0].list_outputs(), syms[0].list_arguments()
    exe_list = []
    for s, spec in zip(syms, ctx_list):
        assert s.list_arguments() == arg_names and s.list_outputs() == output_names
        spec = dict(spec)
        exe_list.append(s.simple_bind(spec.pop("ctx", None), grad_req=grad_req, **spec))
    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params
    for n, arr in sorted(exe_list[0].arg_dict.items()):
        if n not in arg_params:
            if use_uniform:
                arg_params[n] = np.random.uniform(low=-0.92 * scale, high=0.92 * scale,
                                                  size=arr.shape).astype(rand_type)
            else:
                arg_params[n] = np.random.normal(size=arr.shape, scale=scale).astype(rand_type)
    for n in exe_list[0].aux_dict:
        aux_params.setdefault(n, 0)
    for exe in exe_list:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = 0

    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exe_list]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))
    gt = ground_truth
    if gt is None:
        gt = dict(exe_list[gt_idx].output_dict)
        if grad_req != "null":
            gt.update(exe_list[gt_idx].grad_dict)

    for exe in exe_list:
        exe.forward(is_train=False)
    for i, exe in enumerate(exe_list):
        if i != gt_idx:
            for name, arr in zip(output_names, exe.outputs):
                _compare(arr, gt[name], rtol, atol, equal_nan, raise_on_err,
                         f"Predict Err: ctx {i} vs ctx {gt_idx} at {name}")
    if grad_req != "null":
        _check_consistency_train(exe_list, gt, gt_idx, dtypes, output_names, arg_names, rtol, atol,
                                 equal_nan, raise_on_err)
    return gt


def _check_consistency_train(exe_list: list, gt: dict, gt_idx: int, dtypes: list, output_names: list,
                             arg_names: list, rtol: Any, atol: Any, equal_nan: bool, raise_on_err: bool) -> None:
    for exe in exe_list:
        exe.forward(is_train=True)
    least = [out.dtype for out in exe_list[0].outputs]
    for exe in exe_list:
        least = [_smaller_dtype(out.dtype, dt) for out, dt in zip(exe.outputs, least)]
    golden = [out.astype(dt).asnumpy() for out, dt in zip(exe_list[0].outputs, least)]
    for exe in exe_list:
        exe.backward([nd.array(g, ctx=exe._ctx, dtype=out.dtype) for g, out in zip(golden, exe.outputs)])
    for i, exe in enumerate(exe_list):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
            if gt[name] is None:
                assert arr is None
                continue
            gtarr = gt[name]
            rt, at = rtol, atol
            small_arr = _smaller_dtype(arr.dtype, dtypes[i])
            small_gt = _smaller_dtype(gtarr.dtype, dtypes[gt_idx])
            if small_arr != arr.dtype or small_gt != gtarr.dtype:
                rt, at = get_tols(arr.astype(small_arr), gtarr.astype(small_gt), rtol, atol)
            _compare(arr, gtarr, rt, at, equal_nan, raise_on_err,
                     f"Train Err: {np.dtype(arr.dtype).name} {arr.context} ctx {i} vs "
                     f"{np.dtype(gtarr.dtype).name} {gtarr.context} ctx {gt_idx} at {name}")
