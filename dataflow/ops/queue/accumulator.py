"""``tf.ConditionalAccumulator``: gradients summed across replicas, stale ones dropped.

Like a queue (``queue/queues.py``): a handle op names the accumulator (a ``resource``
tensor), and ``apply_grad``/``take_grad``/``set_global_step``/``num_accumulated`` ops
take the handle, so they are placed on the accumulator's device (a ps task) and every
replica's session reaches the same state there by name. The state and its rules are in
``queue/accumulator_state.py``.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.kernel_context import Folded, blocking_waiter
from ...framework.tensor_shape import TensorShape, as_shape, scalar
from .accumulator_state import AccumulatorState


def _key(name: str) -> str:
    return f"accumulator:{name}"


def _lookup(ctx: Any, name: str) -> AccumulatorState:
    def missing() -> AccumulatorState:
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
        lambda: AccumulatorState(name, dims, attrs["reduction_type"]),
        signature=f"ConditionalAccumulator of {attrs['dtype'].name} {shape}",
    )
    return Folded(name)


def _apply_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    dtype = attrs["dtype"].as_numpy_dtype

    def apply_grad(handle: str, local_step: Any, grad: Any) -> None:
        _lookup(ctx, handle).apply_grad(xp.asarray(grad, dtype=dtype), int(local_step))

    return apply_grad


def _take_kernel(ctx: Any, attrs: dict) -> Any:
    xp, waiter = ctx.xp, blocking_waiter(ctx)
    dtype = attrs["dtype"].as_numpy_dtype

    def take_grad(handle: str, num_required: Any) -> Any:
        total = _lookup(ctx, handle).take_grad(int(num_required), waiter)
        return xp.asarray(total, dtype=dtype)

    return take_grad


def _set_step_kernel(ctx: Any, attrs: dict) -> Any:
    return lambda handle, step: _lookup(ctx, handle).set_global_step(int(step))


def _interrupt_kernel(ctx: Any, attrs: dict) -> Any:
    return lambda handle: _lookup(ctx, handle).interrupt_takes()


def _num_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda handle: xp.asarray(_lookup(ctx, handle).num_accumulated(), dtype=xp.int32)


# --- shape rules -------------------------------------------------------------------------
def _infer_handle(op: Operation) -> list:
    return [(dtypes.resource, scalar())]


def _infer_apply(op: Operation) -> list:
    _, local_step, grad = op.inputs
    if not local_step.dtype.is_integer or not local_step.shape.is_compatible_with(scalar()):
        raise ValueError(f"local_step must be a scalar integer, got {local_step!r}")
    if grad.dtype != op.attrs["dtype"]:
        raise TypeError(
            f"the accumulator holds {op.attrs['dtype'].name} gradients, got {grad.dtype.name}"
        )
    if not op.attrs["shape"].is_compatible_with(grad.shape):
        raise ValueError(
            f"Shapes {op.attrs['shape']} and {grad.shape} are incompatible: the "
            "accumulator's shape and the gradient's"
        )
    return []


def _infer_take(op: Operation) -> list:
    return [(op.attrs["dtype"], op.attrs["shape"])]


def _infer_set_step(op: Operation) -> list:
    return []


def _infer_num(op: Operation) -> list:
    return [(dtypes.int32, scalar())]


for _type, _infer, _kernel in (
    ("ConditionalAccumulator", _infer_handle, _handle_kernel),
    ("AccumulatorApplyGradient", _infer_apply, _apply_kernel),
    ("AccumulatorTakeGradient", _infer_take, _take_kernel),
    ("AccumulatorSetGlobalStep", _infer_set_step, _set_step_kernel),
    ("AccumulatorInterruptTakes", _infer_set_step, _interrupt_kernel),
    ("AccumulatorNumAccumulated", _infer_num, _num_kernel),
):
    # Stateful, so off a worker's event loop (take_grad waits for the replicas).
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


class ConditionalAccumulatorBase:
    """What TF1's accumulators share (``ConditionalAccumulator`` and
    ``SparseConditionalAccumulator`` both derive from it): a handle op naming the
    accumulator, and the ops every kind has.

    Args:
        dtype: the gradients' dtype.
        shape: their shape (may be partial; ``None``: unknown).
        accumulator_ref: the handle tensor a subclass built.
    """

    def __init__(self, dtype: Any, shape: Any, accumulator_ref: Tensor):
        self._dtype = dtypes.as_dtype(dtype)
        self._shape = TensorShape(None) if shape is None else as_shape(shape)
        self._handle = accumulator_ref
        self._attrs = {"dtype": self._dtype, "shape": self._shape}

    @property
    def accumulator_ref(self) -> Tensor:
        return self._handle

    @property
    def name(self) -> str:
        return self._handle.op.name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    def _op(self, op_type: str, inputs: list, name: str | None, **attrs: Any) -> Operation:
        graph = get_default_graph()
        with graph.colocate_with(self._handle.op):
            return graph.create_op(
                op_type, [self._handle, *inputs], dict(self._attrs, **attrs), name=name
            )

    def set_global_step(self, new_global_step: Any, name: str | None = None) -> Operation:
        """Sets the step below which applied gradients are stale (a step moved back is
        logged, as TF1's)."""
        step = convert_to_tensor(new_global_step, dtype=dtypes.int64)
        return self._op("AccumulatorSetGlobalStep", [step], name or "AccumulatorSetGlobalStep")

    def interrupt_takes(self, name: str | None = None) -> Operation:
        """Fails the ``take_grad`` calls waiting now with ``CancelledError`` (not in TF1:
        what lets ``SyncReplicasOptimizer``'s chief thread stop promptly)."""
        return self._op("AccumulatorInterruptTakes", [], name or "AccumulatorInterruptTakes")

    def num_accumulated(self, name: str | None = None) -> Tensor:
        """How many gradients are in (an int32 scalar)."""
        # TF1's default name: ``<accumulator>_NumAccumulated``.
        default = f"{self.name.rsplit('/', 1)[-1]}_NumAccumulated"
        return self._op("AccumulatorNumAccumulated", [], name or default).outputs[0]


def accumulator_handle(
    op_type: str, dtype: Any, shape: Any, shared_name: str | None, name: str, reduction: str
) -> Tensor:
    """Builds an accumulator's handle op (``op_type``) in a name scope ``name``."""
    if reduction not in ("MEAN", "SUM"):
        raise ValueError(f"reduction_type must be 'MEAN' or 'SUM', got {reduction!r}")
    graph = get_default_graph()
    with graph.name_scope(name) as scope:
        return graph.create_op(
            op_type,
            [],
            {
                "dtype": dtypes.as_dtype(dtype),
                "shape": TensorShape(None) if shape is None else as_shape(shape),
                "shared_name": shared_name or scope[:-1],
                "reduction_type": reduction,
            },
            name=scope,
        ).outputs[0]


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Sums gradients applied with a recent enough ``local_step`` (TF1's class).

    Args:
        dtype: the gradients' dtype.
        shape: their shape (may be partial; default unknown).
        shared_name: share the accumulator under this name (between-graph replicas use
            the same name to reach the same accumulator).
        name: name of the handle op.
        reduction_type: ``'MEAN'`` (default) or ``'SUM'``, what ``take_grad`` returns.
    """

    def __init__(
        self,
        dtype: Any,
        shape: Any = None,
        shared_name: str | None = None,
        name: str = "conditional_accumulator",
        reduction_type: str = "MEAN",
    ):
        handle = accumulator_handle(
            "ConditionalAccumulator", dtype, shape, shared_name, name, reduction_type
        )
        super().__init__(dtype, shape, handle)

    def apply_grad(self, grad: Any, local_step: Any = 0, name: str | None = None) -> Operation:
        """Adds ``grad`` unless ``local_step`` is older than the accumulator's step."""
        grad = convert_to_tensor(grad, dtype=self._dtype)
        step = convert_to_tensor(local_step, dtype=dtypes.int64)
        return self._op(
            "AccumulatorApplyGradient", [step, grad], name or "AccumulatorApplyGradient"
        )

    def take_grad(self, num_required: Any, name: str | None = None) -> Tensor:
        """The mean of at least ``num_required`` gradients (blocks until they are in);
        empties the accumulator and advances its step."""
        n = convert_to_tensor(num_required, dtype=dtypes.int32)
        return self._op("AccumulatorTakeGradient", [n], name or "AccumulatorTakeGradient").outputs[
            0
        ]
