"""``tf.SparseConditionalAccumulator``: sparse gradients (``IndexedSlices``) averaged
per row across replicas, stale ones dropped.

Built like ``ConditionalAccumulator`` (``queue/accumulator.py``, whose base class and
step/count ops it shares): a handle op names the accumulator, and the apply and take
ops take the handle, so they run on its device. The state and its rules (per-row
means, TF's shape checks) are in ``queue/sparse_accumulator_state.py``.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, convert_to_tensor
from ...framework.indexed_slices import IndexedSlices
from ...framework.kernel_context import Folded, blocking_waiter
from ...framework.tensor_shape import TensorShape, scalar
from ..cast import cast
from .accumulator import ConditionalAccumulatorBase, accumulator_handle
from .sparse_accumulator_state import SparseAccumulatorState


def _key(name: str) -> str:
    return f"accumulator:{name}"  # the dense accumulators' keys: names are shared


def _lookup(ctx: Any, name: str) -> SparseAccumulatorState:
    def missing() -> SparseAccumulatorState:
        raise errors.NotFoundError(
            None, None, f"Accumulator '{name}' does not exist on {ctx.device}"
        )

    return ctx.resources.get_or_create(_key(name), missing)


# --- kernels -----------------------------------------------------------------------------
def _handle_kernel(ctx: Any, attrs: dict) -> Folded:
    name, shape = attrs["shared_name"], attrs["shape"]
    dims = None if shape.rank is None else tuple(shape.as_list())
    ctx.resources.get_or_create(
        _key(name),
        lambda: SparseAccumulatorState(name, dims, attrs["reduction_type"], ctx.xp),
        signature=f"SparseConditionalAccumulator of {attrs['dtype'].name} {shape}",
    )
    return Folded(name)


def _apply_kernel(ctx: Any, attrs: dict) -> Any:
    xp, known = ctx.xp, attrs["has_known_shape"]
    dtype = attrs["dtype"].as_numpy_dtype

    def apply_grad(handle: str, local_step: Any, indices: Any, values: Any, shape: Any) -> None:
        grad = (
            xp.asarray(indices, dtype=xp.int64),
            xp.asarray(values, dtype=dtype),
            xp.asarray(shape, dtype=xp.int64).reshape(-1) if known else None,
        )
        _lookup(ctx, handle).apply_grad(grad, int(local_step))

    return apply_grad


def _take_kernel(ctx: Any, attrs: dict) -> Any:
    xp, waiter = ctx.xp, blocking_waiter(ctx)
    dtype = attrs["dtype"].as_numpy_dtype

    def take_grad(handle: str, num_required: Any) -> tuple:
        indices, values, shape = _lookup(ctx, handle).take_grad(int(num_required), waiter)
        return (
            xp.asarray(indices, dtype=xp.int64),
            xp.asarray(values, dtype=dtype),
            xp.asarray(shape, dtype=xp.int64),
        )

    return take_grad


# --- shape rules -------------------------------------------------------------------------
def _infer_handle(op: Operation) -> list:
    return [(dtypes.resource, scalar())]


def _infer_apply(op: Operation) -> list:
    _, local_step, indices, values, shape = op.inputs
    if not local_step.dtype.is_integer or not local_step.shape.is_compatible_with(scalar()):
        raise ValueError(f"local_step must be a scalar integer, got {local_step!r}")
    if values.dtype != op.attrs["dtype"]:
        raise TypeError(
            f"the accumulator holds {op.attrs['dtype'].name} gradients, got {values.dtype.name}"
        )
    if not indices.shape.is_compatible_with(TensorShape([None])):
        raise ValueError(f"Shape must be rank 1 but is rank {indices.shape.rank} (indices)")
    if not shape.shape.is_compatible_with(TensorShape([None])):
        raise ValueError(f"Shape must be rank 1 but is rank {shape.shape.rank} (shape)")
    return []


def _infer_take(op: Operation) -> list:
    shape = op.attrs["shape"]
    rows = TensorShape(None) if shape.rank is None else TensorShape([None]).concatenate(shape[1:])
    return [
        (dtypes.int64, TensorShape([None])),
        (op.attrs["dtype"], rows),
        (dtypes.int64, TensorShape([None])),
    ]


for _type, _infer, _kernel in (
    ("SparseConditionalAccumulator", _infer_handle, _handle_kernel),
    ("SparseAccumulatorApplyGradient", _infer_apply, _apply_kernel),
    ("SparseAccumulatorTakeGradient", _infer_take, _take_kernel),
):
    registry.register(
        registry.OpDef(
            _type,
            _infer,
            _kernel,
            registry.NOT_DIFFERENTIABLE,
            stateful=True,
            gpu_kernel=False,  # as TF1's: the accumulator lives in host memory
        )
    )


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Averages sparse gradients (``IndexedSlices``) applied with a recent enough
    ``local_step`` (TF1's class). Each row's mean is over the gradients holding it.

    Args:
        dtype: the gradients' values' dtype.
        shape: the dense shape of the gradients (may be partial; default unknown).
        shared_name: share the accumulator under this name.
        name: name of the handle op.
        reduction_type: ``'MEAN'`` (default, per row) or ``'SUM'``.
    """

    def __init__(
        self,
        dtype: Any,
        shape: Any = None,
        shared_name: str | None = None,
        name: str = "sparse_conditional_accumulator",
        reduction_type: str = "MEAN",
    ):
        handle = accumulator_handle(
            "SparseConditionalAccumulator", dtype, shape, shared_name, name, reduction_type
        )
        super().__init__(dtype, shape, handle)

    def apply_indexed_slices_grad(
        self, grad: IndexedSlices, local_step: Any = 0, name: str | None = None
    ) -> Operation:
        """Applies ``grad`` (its indices, values and dense shape) unless stale."""
        return self.apply_grad(
            grad.indices, grad.values, grad.dense_shape, local_step=local_step, name=name
        )

    def apply_grad(
        self,
        grad_indices: Any,
        grad_values: Any,
        grad_shape: Any = None,
        local_step: Any = 0,
        name: str | None = None,
    ) -> Operation:
        """Adds the sparse gradient (row ``grad_indices``, rows ``grad_values``, dense
        shape ``grad_shape`` if known) unless ``local_step`` is older than the
        accumulator's step; a wrong shape fails the step with
        ``InvalidArgumentError``."""
        step = cast(convert_to_tensor(local_step), dtypes.int64)
        indices = cast(convert_to_tensor(grad_indices), dtypes.int64)
        values = convert_to_tensor(grad_values, dtype=self._dtype)
        shape = cast(convert_to_tensor([] if grad_shape is None else grad_shape), dtypes.int64)
        return self._op(
            "SparseAccumulatorApplyGradient",
            [step, indices, values, shape],
            name or "SparseAccumulatorApplyGradient",
            has_known_shape=grad_shape is not None,
        )

    def take_grad(self, num_required: Any, name: str | None = None) -> tuple:
        """``(indices, values, shape)``: the per-row mean of at least ``num_required``
        gradients (blocks until they are in); empties the accumulator and advances its
        step. ``shape[0]`` is the accumulator's first dimension, -1 when unknown."""
        n = convert_to_tensor(num_required, dtype=dtypes.int32)
        op = self._op("SparseAccumulatorTakeGradient", [n], name or "SparseAccumulatorTakeGradient")
        return tuple(op.outputs)

    def take_indexed_slices_grad(self, num_required: Any, name: str | None = None) -> Any:
        """``take_grad`` as an ``IndexedSlices``."""
        indices, values, shape = self.take_grad(num_required, name=name)
        return IndexedSlices(values, indices, dense_shape=shape)
