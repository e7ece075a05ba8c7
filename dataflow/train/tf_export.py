"""Our own op types written as TF's primitives in a ``GraphDef`` TF will import (a
MetaGraph's, a SavedModel's), which keeps the initializers and gradients of an unfrozen
graph. Each op becomes TF1's composition, its last node keeping the op's name so its
consumers read it unchanged; imported here again, the composition computes the same.

* ``RandomUniform``, ``RandomNormal``, ``TruncatedNormal`` of ``(shape, a, b)`` (fused
  here, ``ops/random/random_ops.py``)::

      X/unit = RandomUniform(shape)     (RandomStandardNormal, TruncatedNormal; the seeds)
      X/range = Sub(b, a)                (uniform only: the scale is b - a)
      X/mul = Mul(X/unit, range or stddev);  X = AddV2(X/mul, a or mean)

* ``SumLike(x, like)`` / ``SumToShape(x, shape)`` (the gradient pass undoing
  broadcasting)::

      X/target = Shape(like) (or shape);  X/source = Shape(x)
      X/args = BroadcastGradientArgs(X/target, X/source)
      X/sum = Sum(x, X/args:0);  X = Reshape(X/sum, X/target)

* ``BroadcastReduced(grad, shape[, axes])`` (a reduction's gradient): divided by the
  count of reduced elements when ``mean``, reshaped to the kept dimensions when the
  reduction dropped them (``shape`` times a constant mask of ones, plus the reduced
  axes' ones: the axes must be a constant and the rank known), then
  ``BroadcastTo(grad, shape)``.

Other op types only dataflow has are left as they are; ``export_meta_graph`` names them
in a warning, since TF cannot import such a graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from tensorboard.compat.proto import node_def_pb2

from ..framework import dtypes
from ..framework import graph_def as graph_def_lib

_UNIT = {
    "RandomUniform": "RandomUniform",
    "RandomNormal": "RandomStandardNormal",
    "TruncatedNormal": "TruncatedNormal",
}
_KEEP = ("dtype", "seed", "seed2", "T", "_py_attr_kinds")


def _attr(value: Any) -> Any:
    proto = graph_def_lib.attr_value(value)[0]
    assert proto is not None  # dtypes, bools and arrays always have an AttrValue
    return proto


class _Writer:
    """Appends TF nodes named under one op's name, on its device."""

    def __init__(self, node: Any, out: list[Any]):
        self.name, self.device, self.out = node.name, node.device, out

    def add(self, suffix: str, op: str, inputs: list[str], **attrs: Any) -> str:
        name = f"{self.name}/{suffix}" if suffix else self.name
        node = node_def_pb2.NodeDef(name=name, op=op, device=self.device)
        node.input.extend(inputs)
        for key, value in attrs.items():
            node.attr[key].CopyFrom(value if hasattr(value, "WhichOneof") else _attr(value))
        self.out.append(node)
        return name

    def const(self, suffix: str, value: np.ndarray) -> str:
        dtype = dtypes.as_dtype(value.dtype)
        return self.add(suffix, "Const", [], dtype=dtype, value=value)


def _random(node: Any, w: _Writer) -> None:
    shape, a, b, *controls = node.input
    dtype = node.attr["dtype"]
    unit_attrs = {k: node.attr[k] for k in _KEEP if k in node.attr}
    unit = w.add("unit", _UNIT[node.op], [shape, *controls], **unit_attrs)
    scale = w.add("range", "Sub", [b, a], T=dtype) if node.op == "RandomUniform" else b
    mul = w.add("mul", "Mul", [unit, scale], T=dtype)
    w.add("", "AddV2", [mul, a], T=dtype)


def _sum_like(node: Any, op: Any, w: _Writer) -> None:
    x, other, *controls = node.input
    dtype = op.inputs[0].dtype
    if node.op == "SumLike":
        target = w.add("target", "Shape", [other], T=op.inputs[1].dtype)
    else:
        target = other
    source = w.add("source", "Shape", [x, *controls], T=dtype)
    args = w.add("args", "BroadcastGradientArgs", [target, source], T=dtypes.int32)
    summed = w.add("sum", "Sum", [x, args], T=dtype, Tidx=dtypes.int32, keep_dims=False)
    w.add("", "Reshape", [summed, target], T=dtype, Tshape=dtypes.int32)


def _broadcast_reduced(node: Any, op: Any, w: _Writer, constant: Any) -> bool:
    grad, shape, *rest = [i for i in node.input if not i.startswith("^")]
    controls = [i for i in node.input if i.startswith("^")]
    dtype, attrs = op.inputs[0].dtype, op.attrs
    rank = attrs["shape_hint"].rank
    mask = None
    if rest and not attrs["keep_dims"]:
        axes = constant(rest[0])
        if axes is None or rank is None:
            return False
        reduced = {int(a) % rank for a in np.asarray(axes).reshape(-1)} if rank else set()
        mask = np.array([0 if i in reduced else 1 for i in range(rank)], np.int32)
    if attrs.get("mean", False):
        zero = w.const("zero", np.array(0, np.int32))
        one = w.const("one", np.array(1, np.int32))
        every = w.add("every", "Prod", [shape, zero], T=dtypes.int32, Tidx=dtypes.int32)
        size = w.add("size", "Size", [grad], T=dtype, out_type=dtypes.int32)
        size = w.add("size_or_one", "Maximum", [size, one], T=dtypes.int32)
        count = w.add("count", "FloorDiv", [every, size], T=dtypes.int32)
        count = w.add("count_or_one", "Maximum", [count, one], T=dtypes.int32)
        count = w.add("count_cast", "Cast", [count], SrcT=dtypes.int32, DstT=dtype)
        grad = w.add("mean", "RealDiv", [grad, count], T=dtype)
    if mask is not None:
        kept = w.add("kept", "Mul", [shape, w.const("mask", mask)], T=dtypes.int32)
        kept = w.add("kept_dims", "AddV2", [kept, w.const("ones", 1 - mask)], T=dtypes.int32)
        grad = w.add("reshaped", "Reshape", [grad, kept], T=dtype, Tshape=dtypes.int32)
    w.add("", "BroadcastTo", [grad, shape, *controls], T=dtype, Tidx=dtypes.int32)
    return True


def tf_primitives(nodes: list[Any], op_of: Callable[[str], Any]) -> list[Any]:
    """``nodes`` with our op types TF lacks rewritten as TF's (the module docstring);
    ``op_of(name)`` is the graph's operation of a node (``None`` for a node written
    for the export alone). Nodes that cannot be rewritten stay as they are."""
    consts = {n.name: n for n in nodes if n.op == "Const"}

    def constant(ref: str) -> Any:
        node = consts.get(ref.split(":")[0])
        return None if node is None else graph_def_lib.python_attr(node.attr["value"], "")

    out: list[Any] = []
    for node in nodes:
        op = op_of(node.name)
        w = _Writer(node, out)
        data = [i for i in node.input if not i.startswith("^")]
        if node.op in _UNIT and len(data) == 3 and node.input[:3] == data:
            _random(node, w)
        elif node.op in ("SumLike", "SumToShape") and op is not None and node.input[:2] == data:
            if node.op == "SumToShape" and op.inputs[1].dtype != dtypes.int32:
                out.append(node)
                continue
            _sum_like(node, op, w)
        elif (
            node.op == "BroadcastReduced" and op is not None and op.inputs[1].dtype == dtypes.int32
        ):
            start = len(out)
            if not _broadcast_reduced(node, op, w, constant):
                del out[start:]
                out.append(node)
        else:
            out.append(node)
    return out
