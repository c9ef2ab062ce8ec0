"""Predefined models (`mx.gluon.model_zoo`): the vision architectures of MXNet 1.9.1.

Models are defined with hybridgraph's own layers and carry MXNet's parameter
names, so parameter files written by MXNet's ``save_parameters`` load into them
and their ``export()`` equals MXNet's graph. Pretrained weights are never
downloaded: load a local ``.params`` file (see :func:`model_store.get_model_file`).
"""
from __future__ import annotations

from . import model_store, vision

__all__ = ["model_store", "vision"]
