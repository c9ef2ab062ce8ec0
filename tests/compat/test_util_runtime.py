"""mx.util (NumPy-semantics switches), mx.runtime.Features, the test_utils namespace and the
NotImplementedError for MXNet modules hybridgraph does not have."""
import os
import sys
import threading

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import test_utils

# what `from mxnet.test_utils import *` gives in MXNet 1.9.1 (measured), less np_symbol (mx.np's
# Symbol class) and requests (only when installed)
MXNET_TEST_UTILS_NAMES = set("""Context DummyIter Features OrderedDict Symbol almost_equal array assert_allclose
assert_almost_equal assert_almost_equal_ignore_nan assert_almost_equal_with_err assert_exception assign_each
assign_each2 bz2 checkShapes check_consistency check_gluon_hybridize_consistency check_numeric_gradient check_speed
check_symbolic_backward check_symbolic_forward chi_square_check collapse_sum_like compare_ndarray_tuple
compare_optimizer contextmanager create_2d_tensor create_sparse_array create_sparse_array_zd create_vector
current_context default_atols default_context default_dtype default_numeric_eps default_rtols discard_stderr download
download_model effective_dtype environment errno gen_buckets_probs_with_ppf get_atol get_bz2_data get_cifar10
get_cuda_compute_capability get_etol get_identity_mat get_identity_mat_batch get_im2rec_path get_mnist
get_mnist_iterator get_mnist_pkl get_mnist_ubyte get_rtol get_tolerance get_tols get_zip_data getenv gzip has_tvm_ops
is_aarch64_run is_cd_run is_op_runnable json list_gpus locationError logging mean_check mx
new_matrix_with_real_eigvals_2d new_matrix_with_real_eigvals_nd new_orthonormal_matrix_2d
new_sym_matrix_with_real_eigvals_2d new_sym_matrix_with_real_eigvals_nd np np_reduce npt numbers numeric_grad os
platform rand_coord_2d rand_ndarray rand_shape_2d rand_shape_3d rand_shape_nd rand_sparse_ndarray random_arrays
random_sample random_uniform_arrays retry rnd same same_array same_symbol_structure set_default_context setenv
shuffle_csr_column_indices simple_forward ss struct sys time traceback use_np var_check verify_generator
zipfile""".split())


def test_star_import_of_test_utils_matches_mxnet():
    ns = {}
    exec("from hybridgraph.test_utils import *", ns)
    names = {k for k in ns if k != "__builtins__"} - {"requests", "set_env_var"}
    assert names == MXNET_TEST_UTILS_NAMES
    assert ns["mx"] is mx and ns["np"] is np and ns["os"] is os


def test_np_shape_flags_scope_and_thread_locality():
    assert not mx.is_np_shape()
    with mx.np_shape(True):
        assert mx.util.is_np_shape()
        seen = []
        t = threading.Thread(target=lambda: seen.append(mx.is_np_shape()))
        t.start()
        t.join()
        assert seen == [False]
    assert not mx.is_np_shape()
    assert mx.util.set_np_shape(True) is False and mx.util.set_np_shape(False) is True

    @mx.use_np_shape
    def inside():
        return mx.is_np_shape()
    assert inside() and not mx.is_np_shape()


def test_use_np_wraps_class_methods_and_properties():
    @mx.util.use_np
    class Probe:
        def method(self):
            return mx.is_np_shape(), mx.is_np_array()

        @property
        def prop(self):
            return mx.is_np_array()
    assert Probe().method() == (True, True) and Probe().prop is True
    assert not mx.is_np_array()
    with pytest.raises(TypeError, match="decorate"):
        mx.util.use_np_shape(3)


def test_set_np_rules():
    with pytest.raises(ValueError, match="required"):
        mx.util.set_np(shape=False, array=True)
    mx.util.set_np()
    try:
        with pytest.raises(ValueError, match="reset_np"):
            mx.util.set_np_shape(False)
    finally:
        mx.util.reset_np()
    assert not mx.is_np_shape() and not mx.is_np_array()


def test_runtime_features_truthful_singleton():
    f = mx.runtime.Features()
    assert f is mx.runtime.Features() and len(f) == 32 and "CUDA" in f
    assert f.is_enabled("cuda") == (mx.context.num_gpus() > 0)
    assert not f.is_enabled("MKLDNN") and not f.is_enabled("CUDNN") and f.is_enabled("LAPACK")
    assert repr(f["LAPACK"]) == "✔ LAPACK" and repr(f["TVM_OP"]) == "✖ TVM_OP"
    with pytest.raises(RuntimeError, match="unknown"):
        f.is_enabled("no such feature")


def test_missing_mxnet_modules_raise_not_implemented_naming_alternative():
    with pytest.raises(NotImplementedError, match="mx.engine.*synchronously"):
        mx.engine  # noqa: B018
    assert not hasattr(mx, "rtc")  # still an AttributeError for hasattr
    with pytest.raises(NotImplementedError, match="mxnet.library.*CustomOp"):
        import hybridgraph.library  # noqa: F401
    with pytest.raises(ImportError):
        from hybridgraph import tvmop  # noqa: F401
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        mx.nonexistent  # noqa: B018
    with pytest.raises(ModuleNotFoundError, match="mxnet.contrib.quantization"):
        import hybridgraph.contrib.quantization  # noqa: F401
    # mx.contrib.amp imports (scripts import it at the top, and use it only for mixed precision);
    # each of its functions raises, naming the alternative
    from hybridgraph.contrib.amp import amp
    with pytest.raises(NotImplementedError, match=r"mixed precision \(mx.contrib.amp.init\).*float32"):
        amp.init()
    assert not hasattr(amp, "convert_model")
    with pytest.raises(ImportError):
        from hybridgraph.contrib.amp import init_trainer  # noqa: F401
    # names hybridgraph ships itself are never shadowed by the list
    assert not [n for n in ("util", "runtime", "operator", "profiler", "rnn")
                if n in sys.modules["hybridgraph.unsupported"].MISSING_MODULES]


def test_discard_stderr_silences_fd2(capfd):
    with test_utils.discard_stderr():
        os.write(2, b"hidden\n")
    os.write(2, b"shown\n")
    assert capfd.readouterr().err == "shown\n"


def test_compare_optimizer_agrees_and_catches_difference():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    test_utils.compare_optimizer(opt, mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), (3, 4), np.float32)
    with pytest.raises(AssertionError):
        test_utils.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.2),
                                     (3, 4), np.float32)
    with pytest.raises(NotImplementedError, match="sparse"):
        test_utils.compare_optimizer(opt, opt, (2,), np.float32, w_stype="row_sparse")


def test_stat_checks_accept_right_and_reject_wrong_distribution():
    pytest.importorskip("scipy", reason="chi_square_check uses scipy.stats")
    import scipy.stats as ss
    rng = np.random.default_rng(0)
    assert test_utils.mean_check(lambda n: rng.normal(0, 1, n), 0, 1, 100000)
    assert not test_utils.mean_check(lambda n: rng.normal(0.5, 1, n), 0, 1, 100000)
    assert test_utils.var_check(lambda n: rng.normal(0, 2, n), 2, 100000)
    buckets, probs = test_utils.gen_buckets_probs_with_ppf(lambda x: ss.norm.ppf(x, 0, 1), 5)
    test_utils.verify_generator(lambda n: rng.normal(0, 1, n), buckets, probs, nsamples=20000)
    with pytest.raises(AssertionError, match="Chi-square"):
        test_utils.verify_generator(lambda n: rng.normal(1, 1, n), buckets, probs, nsamples=20000)
    p, obs, _ = test_utils.chi_square_check(lambda n: rng.integers(0, 3, n), [0, 1, 2], [1 / 3] * 3, 3000)
    assert obs.sum() == 3000 and p > 1e-4


def test_helpers_values():
    assert test_utils.create_2d_tensor(3, 2).asnumpy().tolist() == [[0, 0], [1, 1], [2, 2]]
    assert test_utils.get_identity_mat_batch(2).shape == (2, 2, 2)
    out = test_utils.assign_each2(np.array([1.0, 2.0]), np.array([3.0, 4.0]), lambda a, b: a * b)
    assert out.tolist() == [3.0, 8.0]
    m = test_utils.new_sym_matrix_with_real_eigvals_2d(4)
    np.testing.assert_allclose(m, m.T, atol=1e-10)
    with pytest.raises(AssertionError, match="are not equal"):
        test_utils.checkShapes(np.zeros(2), np.zeros(3))
    assert isinstance(test_utils.list_gpus(), range)


def test_dummy_iter_repeats_first_batch():
    it = mx.io.NDArrayIter(np.arange(8).reshape(4, 2), batch_size=2)
    dummy = test_utils.DummyIter(it)
    assert next(dummy) is next(dummy) and dummy.batch_size == 2


def test_get_mnist_reads_local_idx_files(tmp_path, monkeypatch):
    import gzip
    import struct
    monkeypatch.chdir(tmp_path)
    for prefix, n in (("train", 3), ("t10k", 2)):
        with gzip.open(f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(struct.pack(">II", 2049, n) + bytes(range(n)))
        with gzip.open(f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + bytes([255] * (n * 784)))
    data = test_utils.get_mnist()
    assert data["train_data"].shape == (3, 1, 28, 28) and data["train_data"].max() == 1.0
    assert data["test_label"].tolist() == [0, 1]


def test_check_gluon_hybridize_consistency_runs_both_modes():
    def build(prefix):
        return mx.gluon.nn.Dense(3, in_units=2, prefix=prefix)
    test_utils.check_gluon_hybridize_consistency(build, [mx.nd.array([[1.0, 2.0]])])


def test_util_env_access():
    mx.util.setenv("HG_TEST_ENV", "1")
    assert mx.util.getenv("HG_TEST_ENV") == "1"
    mx.util.setenv("HG_TEST_ENV", None)
    assert mx.util.getenv("HG_TEST_ENV") is None
    assert sys.modules["hybridgraph.util"] is mx.util


def test_star_imports_give_operators_and_layers_as_mxnet():
    ns = {}
    exec("from hybridgraph.ndarray import *", ns)
    assert {"FullyConnected", "Convolution", "relu", "softmax", "linalg", "contrib", "maximum",
            "NDArray", "zeros"} <= set(ns)
    ns = {}
    exec("from hybridgraph.symbol import *", ns)
    assert {"FullyConnected", "Variable", "Group", "relu", "linalg", "contrib", "random"} <= set(ns)
    ns = {}
    exec("from hybridgraph.gluon.nn import *", ns)
    assert {"Dense", "Conv2D", "BatchNorm", "MaxPool2D", "Embedding", "HybridSequential", "SymbolBlock"} <= set(ns)
    assert not any(k.startswith("_") for k in ns if k != "__builtins__")


def test_numpy_array_scope_object():
    """mx.util._NumpyArrayScope (MXNet's private scope object, imported by test_thread_local)."""
    from hybridgraph.util import _NumpyArrayScope, is_np_array
    scope = _NumpyArrayScope(True)
    assert scope._is_np_array and not is_np_array()
    with scope:
        assert is_np_array()
    assert not is_np_array()
