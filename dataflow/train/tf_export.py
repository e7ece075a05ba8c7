"""Our fused op types written as TF's primitives in a ``GraphDef`` TF will import (a
MetaGraph's, a SavedModel's), which keeps every initializer of an unfrozen graph.

``RandomUniform``, ``RandomNormal`` and ``TruncatedNormal`` take ``(shape, a, b)`` here
and scale and shift in their kernel (``ops/random/random_ops.py``); TF's take the shape
alone. Each becomes TF1's own composition, the last node keeping the op's name so its
consumers read it unchanged::

    X/unit = RandomUniform(shape)             (RandomStandardNormal, TruncatedNormal)
    X/range = Sub(b, a)                        (uniform only: the scale is b - a)
    X/mul = Mul(X/unit, range or stddev)
    X = AddV2(X/mul, a or mean)

The unit draw keeps the op's seeds, so imported here again it draws the same numbers.
"""

from __future__ import annotations

from typing import Any

from tensorboard.compat.proto import node_def_pb2

_UNIT = {"RandomUniform": "RandomUniform", "RandomNormal": "RandomStandardNormal"}
_UNIT["TruncatedNormal"] = "TruncatedNormal"
_KEEP = ("dtype", "seed", "seed2", "T", "_py_attr_kinds")


def _node(name: str, op: str, inputs: list[str], device: str, attrs: dict[str, Any]) -> Any:
    node = node_def_pb2.NodeDef(name=name, op=op, device=device)
    node.input.extend(inputs)
    for key, value in attrs.items():
        node.attr[key].CopyFrom(value)
    return node


def tf_primitives(nodes: list[Any]) -> list[Any]:
    """``nodes`` with each fused random op of three inputs replaced by TF's
    composition (the module docstring); other nodes as they are."""
    out = []
    for node in nodes:
        if node.op not in _UNIT or len([i for i in node.input if not i.startswith("^")]) != 3:
            out.append(node)
            continue
        shape, a, b, *controls = node.input
        name, dev = node.name, node.device
        dtype = node.attr["dtype"]
        unit_attrs = {k: node.attr[k] for k in _KEEP if k in node.attr}
        out.append(_node(f"{name}/unit", _UNIT[node.op], [shape, *controls], dev, unit_attrs))
        scale = b
        if node.op == "RandomUniform":
            scale = f"{name}/range"
            out.append(_node(scale, "Sub", [b, a], dev, {"T": dtype}))
        out.append(_node(f"{name}/mul", "Mul", [f"{name}/unit", scale], dev, {"T": dtype}))
        last = {"T": dtype}
        if "_output_shapes" in node.attr:
            last["_output_shapes"] = node.attr["_output_shapes"]
        out.append(_node(name, "AddV2", [f"{name}/mul", a], dev, last))
    return out
