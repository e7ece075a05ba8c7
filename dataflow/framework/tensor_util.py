"""Build-time constant values of tensors (``tf.get_static_value``).

Shape rules need the value of small integer tensors (a reshape's target shape, a
reduction's axes). ``constant_value`` returns it as a numpy array when it can be known
while building: a ``Const``'s value, or any op registered ``foldable`` whose inputs are
all known, evaluated with its own numpy kernel. Otherwise ``None``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import registry
from .graph import Tensor

_MAX_FOLD_ELEMENTS = 1 << 16  # fold only small tensors: shape arithmetic, not data


class FoldContext:
    """The kernel context used for build-time folding: numpy, no state."""

    xp = np
    device = "/device:CPU:0"
    resources = None
    op_name = "<fold>"
    session = ""

    @staticmethod
    def subgraph(plan: Any) -> Any:
        # Ops with sub-graphs (cond, while_loop) are never foldable.
        raise TypeError("build-time folding runs no sub-graphs")


_FOLD_CONTEXT = FoldContext()


def constant_value(tensor: Any) -> np.ndarray | None:
    """The value of ``tensor`` if it is known at build time, else ``None``."""
    if not isinstance(tensor, Tensor):
        return np.asarray(tensor) if tensor is not None else None
    cache: dict[Tensor, Any] = {}
    # Iterative post-order over the foldable producers of ``tensor``.
    stack: list[tuple[Tensor, bool]] = [(tensor, False)]
    while stack:
        t, expanded = stack.pop()
        if t in cache:
            continue
        op = t.op
        if op.type == "Const":
            cache[t] = op.attrs["value"]
            continue
        if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
            cache[t] = np.array(
                op.inputs[0].shape.as_list(), dtype=op.outputs[0].dtype.as_numpy_dtype
            )
            continue
        opdef = registry.lookup(op.type)
        if not opdef.foldable or opdef.stateful or opdef.kernel is None:
            cache[t] = None
            continue
        if not expanded:
            stack.append((t, True))
            stack.extend((i, False) for i in op.inputs if i not in cache)
            continue
        values = [cache.get(i) for i in op.inputs]
        if any(v is None for v in values) or any(
            np.size(v) > _MAX_FOLD_ELEMENTS for v in values if v is not None
        ):
            cache[t] = None
            continue
        try:
            fn = opdef.kernel(_FOLD_CONTEXT, op.attrs)
            if not callable(fn):  # a Folded value: nothing to evaluate at build time
                raise TypeError(f"{op.type} has no build-time kernel")
            out = fn(*values)
        except Exception:
            cache[t] = None
            continue
        outs = out if len(op.outputs) > 1 else (out,)
        for o, v in zip(op.outputs, outs):
            cache[o] = np.asarray(v)
    return cache.get(tensor)


def constant_shape(tensor: Any) -> list[int | None] | None:
    """A shape-valued tensor as a list with -1 -> None, or None when unknown."""
    value = constant_value(tensor)
    if value is None:
        return None
    return [None if int(d) < 0 else int(d) for d in np.reshape(value, [-1])]


def is_symbolic_tensor(tensor: Any) -> bool:
    """Whether ``tensor`` is a graph ``Tensor`` (``tf.is_symbolic_tensor``): a
    variable, a ``SparseTensor``, a numpy array or a Python number is not."""
    return isinstance(tensor, Tensor)
