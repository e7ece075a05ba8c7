"""``tf.guarantee_const`` and ``tf.timestamp``: two ops whose value needs no input
arrays of their own, only a promise or the clock.

``GuaranteeConst`` forwards its input unchanged; TF1 uses it to tell the graph rewriter
that the value will not change during the step. It has no gradient at all (asking for
one is a ``LookupError`` naming the op, as in TF1: wrap it in ``stop_gradient`` when
none should flow). ``Timestamp`` is a float64 scalar, the seconds since the Unix epoch
when the op runs (not when the graph is built), read from ``time.time``; it is
stateful, so it is never folded or shared between two ops and runs again in each step.
"""

from __future__ import annotations

import time
from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from ..constant import identity_kernel_factory
from ..rules import same_as_input

registry.register(
    registry.OpDef("GuaranteeConst", same_as_input, identity_kernel_factory, None, plumbing=True)
)


def guarantee_const(input: Any, name: str | None = None) -> Tensor:
    """Promises that ``input``'s value stays the same for the whole step; the result is
    ``input`` itself (same dtype and shape). Not differentiable: ``tf.gradients``
    through it raises ``LookupError``, as TF1's."""
    return apply_op("GuaranteeConst", [input], name=name)


def _infer_timestamp(op: Operation) -> list:
    return [(dtypes.float64, TensorShape([]))]


def _timestamp_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def timestamp() -> Any:
        return xp.asarray(time.time(), dtype=xp.float64)

    return timestamp


registry.register(
    registry.OpDef(
        "Timestamp",
        _infer_timestamp,
        _timestamp_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        effectful=False,
        gpu_kernel=False,
    )
)


def timestamp(name: str | None = None) -> Tensor:
    """The time the op runs, as a float64 scalar of seconds since the Unix epoch
    (``tf.timestamp``); each run reads the clock again."""
    return apply_op("Timestamp", [], name=name)
