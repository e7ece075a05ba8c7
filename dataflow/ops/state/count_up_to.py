"""``count_up_to`` (``ResourceCountUpTo``): the epoch counter of queue-based input.

``tf.train.limit_epochs`` counts the passes over its input in a local int64 variable:
each pass runs ``count_up_to(epochs, num_epochs)``, which increments the variable and
returns its old value, and raises ``OutOfRangeError`` once the value has reached the
limit, so the queue runner feeding the input ends and closes its queue. The increment
is atomic (``ResourceStore.update`` holds the variable's lock), so several producer
threads never count one pass twice.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, get_default_graph


def _infer(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.resource:
        raise TypeError(f"count_up_to needs a variable, got a {op.inputs[0].dtype.name} tensor")
    dtype = op.attrs["T"]
    if dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"count_up_to needs an int32 or int64 variable, got {dtype.name}")
    return [(dtype, op.attrs["shape"])]


def _kernel(ctx: Any, attrs: dict) -> Any:
    store, xp, limit = ctx.resources, ctx.xp, attrs["limit"]
    step, op_name = ctx.step, ctx.op_name

    def count_up_to(handle: str) -> Any:
        def increment(old: Any) -> Any:
            if int(old) >= limit:
                raise errors.OutOfRangeError(
                    None, None, f"Reached limit of {limit} (variable '{handle}')"
                )
            return xp.asarray(old + 1, dtype=old.dtype)

        token = (step(), op_name) if step() else None
        return store.update(handle, increment, token) - 1

    return count_up_to


registry.register(
    registry.OpDef("ResourceCountUpTo", _infer, _kernel, registry.NOT_DIFFERENTIABLE, stateful=True)
)


def count_up_to(ref: Any, limit: int, name: str | None = None) -> Tensor:
    """Increments the integer variable ``ref`` until it reaches ``limit``.

    Returns:
        The variable's value before the increment.

    Raises (at run time):
        OutOfRangeError: the value is already ``limit`` (nothing changes).
    """
    handle = getattr(ref, "handle", None)
    if not isinstance(handle, Tensor):
        raise TypeError(f"count_up_to needs a variable, got {ref!r}")
    graph = get_default_graph()
    with graph.colocate_with(handle.op):
        return graph.create_op(
            "ResourceCountUpTo",
            [handle],
            {"limit": int(limit), "T": ref.dtype, "shape": ref.shape},
            name=name or "CountUpTo",
        ).outputs[0]
