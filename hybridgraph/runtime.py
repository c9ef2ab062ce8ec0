"""`mx.runtime`: which MXNet build features this installation provides.

MXNet reports the compile-time flags of libmxnet. hybridgraph has no native
library, so each feature says what it actually offers: CUDA when a GPU is
usable through cupy, the CPU SIMD flags numpy's kernels were dispatched with,
LAPACK (numpy.linalg), INT64_TENSOR_SIZE (numpy indexes with int64) and
PROFILER (`mx.profiler`); cuDNN, NCCL, TensorRT, MKL-DNN, OpenCV, TVM ops and the
distributed kvstore are not part of it and report disabled.
"""
from __future__ import annotations

import collections

__all__ = ["Feature", "Features", "feature_list"]

_NAMES = ["CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3", "CPU_SSE4_1",
          "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C", "JEMALLOC", "BLAS_OPEN",
          "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN", "OPENCV", "CAFFE", "PROFILER",
          "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP"]
# MXNet feature -> numpy's name for the CPU extension
_CPU = {"CPU_SSE": "SSE", "CPU_SSE2": "SSE2", "CPU_SSE3": "SSE3", "CPU_SSE4_1": "SSE41", "CPU_SSE4_2": "SSE42",
        "CPU_AVX": "AVX", "CPU_AVX2": "AVX2", "F16C": "F16C"}


class Feature:
    """One feature: `name` and `enabled`."""

    def __init__(self, name: str, enabled: bool):
        self.name, self.enabled = name, bool(enabled)

    def __repr__(self) -> str:
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _cpu_features() -> dict:
    try:
        from numpy._core._multiarray_umath import __cpu_features__  # numpy >= 2
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_features__  # numpy 1.x
        except ImportError:
            return {}
    return dict(__cpu_features__)


def _enabled(name: str) -> bool:
    if name == "CUDA":
        from hybridgraph.nd import backend  # noqa: PLC0415
        return backend.num_gpus() > 0
    if name in _CPU:
        return bool(_cpu_features().get(_CPU[name], False))
    return name in ("LAPACK", "PROFILER", "INT64_TENSOR_SIZE")


def feature_list() -> list[Feature]:
    """Every feature MXNet 1.9.1 lists, in its order, with hybridgraph's state."""
    return [Feature(n, _enabled(n)) for n in _NAMES]


class Features(collections.OrderedDict):
    """The singleton OrderedDict name -> Feature."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            collections.OrderedDict.__init__(cls.instance, [(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self):  # filled once in __new__; a second Features() must not reset it
        pass

    def __repr__(self) -> str:
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether `feature_name` (case-insensitive) is enabled; RuntimeError for an unknown name."""
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError(f"Feature '{feature_name}' is unknown, known features are: {list(self.keys())}")
        return self[feature_name].enabled
