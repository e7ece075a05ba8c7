"""``BroadcastGradientArgs``: TF's op telling which axes each of two broadcast operands
was stretched along, so a gradient is summed over them (``Sum`` then ``Reshape``).

Our gradient pass undoes broadcasting with ``SumLike``/``SumToShape`` instead; this op
is here so that gradients TF wrote import, and so that a MetaGraph we export can write
ours as TF's own composition (``train/tf_export.py``), which TF runs.

For shapes ``s0`` and ``s1``, right-aligned and padded with ones to one rank, ``r0``
lists the axes where ``s0`` is 1 and ``s1`` is not (or where both are 1, a sum over one
element), ``r1`` the same for ``s1`` (both empty when the shapes are equal); any other pair of
unequal dimensions is an ``InvalidArgumentError``.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation
from ...framework.tensor_shape import TensorShape


def _infer(op: Operation) -> list:
    for t in op.inputs:
        if t.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"BroadcastGradientArgs takes int32 or int64 shapes, not {t.dtype}")
        if t.shape.rank not in (None, 1):
            raise ValueError(f"BroadcastGradientArgs takes shape vectors, got shape {t.shape}")
    dtype = op.inputs[0].dtype
    return [(dtype, TensorShape([None])), (dtype, TensorShape([None]))]


def _kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def broadcast_gradient_args(s0: Any, s1: Any) -> Any:
        a, b = [int(d) for d in s0.tolist()], [int(d) for d in s1.tolist()]
        if a == b:  # nothing was broadcast (TF's shortcut, even for dimensions of 1)
            return xp.zeros(0, dtype=s0.dtype), xp.zeros(0, dtype=s0.dtype)
        rank = max(len(a), len(b))
        a, b = [1] * (rank - len(a)) + a, [1] * (rank - len(b)) + b
        bad = [i for i in range(rank) if a[i] != b[i] and 1 not in (a[i], b[i])]
        if bad:
            raise errors.InvalidArgumentError(
                None, None, f"Incompatible shapes: {s0.tolist()} vs. {s1.tolist()}"
            )
        r0 = [i for i in range(rank) if a[i] == 1]
        r1 = [i for i in range(rank) if b[i] == 1]
        return xp.asarray(r0, dtype=s0.dtype), xp.asarray(r1, dtype=s0.dtype)

    return broadcast_gradient_args


registry.register(
    registry.OpDef(
        "BroadcastGradientArgs", _infer, _kernel, registry.NOT_DIFFERENTIABLE, foldable=True
    )
)
