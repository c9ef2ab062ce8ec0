"""mx.operator.get_all_registered_operators / get_operator_arguments (MXNet 1.9.1's wording)."""
from __future__ import annotations

import hybridgraph as mx


def test_all_registered_operators_are_the_backend_ops():
    ops = mx.operator.get_all_registered_operators()
    assert isinstance(ops, list) and {"Activation", "Convolution", "broadcast_add"} <= set(ops)


def test_operator_arguments_as_mxnet_words_them():
    args = mx.operator.get_operator_arguments("Activation")
    assert isinstance(args, mx.operator.OperatorArguments)
    assert args == (2, ["data", "act_type"],
                    ["NDArray-or-Symbol", "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"])
    take = mx.operator.get_operator_arguments("take")
    assert take.names == ["a", "indices", "axis", "mode"]
    assert take.types[3] == "{'clip', 'raise', 'wrap'},optional, default='clip'"
    assert mx.operator.get_operator_arguments("Dropout").types[1] == "float, optional, default=0.5"
    assert mx.operator.get_operator_arguments("add_n") == (1, ["args"], ["NDArray-or-Symbol[]"])


def test_star_import_brings_them():
    ns: dict = {}
    exec("from hybridgraph.operator import *", ns)
    assert {"get_operator_arguments", "OperatorArguments", "CustomOp"} <= set(ns)
