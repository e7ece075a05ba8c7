"""The op registry: one record per op type, carrying every fact the runtime uses."""

from __future__ import annotations

import pytest

import dataflow  # noqa: F401 - registers the op library
from dataflow.framework import registry


def _types_where(predicate) -> set[str]:
    return {t for t in registry.registered_types() if predicate(registry.lookup(t))}


def test_variable_ops_are_the_stateful_ops_that_never_block() -> None:
    # They run inline on a worker's event loop; every other stateful kernel (queues,
    # optimizer updates, random draws, py_func) may wait and runs off it.
    assert _types_where(lambda d: d.stateful and not d.may_block) == {
        "VarHandleOp",
        "ReadVariableOp",
        "AssignVariableOp",
        "AssignAddVariableOp",
        "AssignSubVariableOp",
        "ResourceScatterUpdate",
        "ResourceScatterAdd",
        "ResourceScatterSub",
        "ResourceScatterMul",
        "ResourceScatterDiv",
        "ResourceScatterMax",
        "ResourceScatterMin",
        "ResourceScatterNdUpdate",
        "ResourceScatterNdAdd",
        "ResourceScatterNdSub",
        "VarIsInitializedOp",
    }
    assert _types_where(lambda d: d.may_block and not d.stateful) == set()


def test_runtime_facts() -> None:
    # Timestamp reads the clock: never folded or shared (stateful), but it changes nothing.
    assert _types_where(lambda d: d.stateful and not d.effectful) == {
        "Placeholder",
        "VarHandleOp",
        "Timestamp",
    }
    # GuaranteeConst forwards its input as Identity does.
    assert _types_where(lambda d: d.plumbing) == {
        "Identity",
        "NoOp",
        "Const",
        "VarHandleOp",
        "GuaranteeConst",
    }
    assert _types_where(lambda d: d.creates_resource) == {"VarHandleOp"}
    # A fetched session handle is returned as a TensorHandle bound to the session.
    assert _types_where(lambda d: d.fetch_as is not None) == {"GetSessionHandle"}


def test_a_record_says_where_it_was_registered() -> None:
    assert registry.lookup("AddV2").defined_at.split(":")[0].endswith("ops/math/arith.py")
    assert registry.lookup("Const").defined_at.split(":")[0].endswith("ops/constant.py")


def test_defaults_follow_stateful_and_a_second_record_is_refused() -> None:
    def infer(op):
        return []

    try:
        made = registry.register(registry.OpDef("TestRegistryToy", infer, None, stateful=True))
        assert made.may_block and made.effectful and not made.plumbing
        assert made.defined_at.split(":")[0] == __file__
        with pytest.raises(KeyError, match="already registered at .*test_registry.py"):
            registry.register(registry.OpDef("TestRegistryToy", infer, None))
    finally:
        registry._REGISTRY.pop("TestRegistryToy", None)
