"""`mx.mod` / `mx.module`: MXNet 1.x's symbolic training API (Module, BucketingModule)
on hybridgraph's executor."""
from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .module import Module

__all__ = ["BaseModule", "Module", "BucketingModule"]
