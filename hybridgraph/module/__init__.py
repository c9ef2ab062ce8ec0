"""`mx.mod` / `mx.module`: MXNet 1.x's symbolic training API (Module, BucketingModule,
SequentialModule, PythonModule, PythonLossModule) on hybridgraph's executor."""
from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = ["BaseModule", "Module", "BucketingModule", "SequentialModule", "PythonModule", "PythonLossModule"]
