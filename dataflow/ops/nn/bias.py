"""``BiasAdd`` and ``BiasAddGrad`` (``tf.nn.bias_add`` is built in ``nn/impl.py``), and
``BiasAddRelu``, the two passes of ``relu(bias_add(x, b))`` as one kernel.

Why ops of their own (TF1 has the same two): every dense and convolution layer adds a
bias, and the general ``AddV2`` makes the gradient pass reduce the broadcast gradient
through a shape it learns at run time (``SumLike``). Knowing the op is a bias add:

* the forward pass adds the bias tiled over a block of rows of the output
  (``epilogue``: numpy's fast loop needs contiguous operands, and a bias broadcast
  over rows is not);
* the bias gradient sums the incoming gradient over rows of the same width, then the
  row's pixels (the same sums as TF's ``BiasAddGrad``, in a handful of long passes);
* the output keeps its input's shape (``shape_of_input``), which lets the gradient pass
  hand a ReLU's gradient straight to the layer below, and lets the plan compiler fuse
  ``Relu(BiasAdd(x, b))`` (``runtime/compile/fusion.py``): ``BiasAddRelu`` adds the bias and
  clamps one cache-sized block of rows at a time (against a block of zeros, as
  ``relu`` explains), one trip through memory instead of two for the layer's
  largest array.

Outputs go into arrays reused from step to step (``buffers``). ``data_format`` is
``NHWC`` (channels last, any rank >= 2) or ``NCHW`` (channels at index 1).
"""

from __future__ import annotations

from typing import Any

from ..._util.recycler import Recycler
from ...framework import errors, registry
from ...framework.graph import Operation, Tensor
from ...framework.tensor_shape import TensorShape
from ..array.shapes import broadcast_to, reshape, shape
from ..build import apply_op
from ..math.sum_of_squares import made_by_fusion
from .epilogue import BiasEpilogue
from .relu import relu_into


def _channel_axis(data_format: str, rank: int) -> int:
    return 1 if data_format == "NCHW" else rank - 1


def _infer_bias_add(op: Operation) -> list:
    value, bias = op.inputs
    if value.dtype != bias.dtype:
        raise TypeError(
            f"BiasAdd inputs must share one dtype, got {value.dtype.name} and {bias.dtype.name}"
        )
    if not (value.dtype.is_floating or value.dtype.is_integer or value.dtype.is_complex):
        raise TypeError(f"BiasAdd needs a numeric input, got {value.dtype.name}")
    if bias.shape.rank is not None and bias.shape.rank != 1:
        raise ValueError(f"bias must be 1-D, got shape {bias.shape}")
    rank = value.shape.rank
    if rank is None:
        return [(value.dtype, value.shape)]
    if rank < 2:
        raise ValueError(f"value must have rank at least 2, got shape {value.shape}")
    dims = value.shape.as_list()
    axis = _channel_axis(op.attrs["data_format"], rank)
    channels = TensorShape([dims[axis]]).merge_with(bias.shape.with_rank(1))
    dims[axis] = channels.as_list()[0]
    return [(value.dtype, TensorShape(dims))]


def _check_channels(value: Any, bias: Any, axis: int) -> None:
    if bias.ndim != 1 or value.ndim < 2 or bias.shape[0] != value.shape[axis]:
        raise errors.InvalidArgumentError(
            None,
            None,
            "Must provide as many biases as the channel dimension of the input tensor: "
            f"bias {tuple(bias.shape)} vs. value {tuple(value.shape)}",
        )


def _rows(value: Any) -> tuple[int, int]:
    """``(rows, width)``: an NHWC array viewed as rows of whole innermost-two-axis runs
    (``W*C`` for images, ``C`` for a matrix)."""
    width = value.shape[-1] * (value.shape[-2] if value.ndim >= 3 else 1)
    return value.size // width if width else 0, width


def _bias_add_kernel(relu: bool) -> Any:
    """The kernel factory of ``BiasAdd`` (``relu`` False) or ``BiasAddRelu``."""

    def factory(ctx: Any, attrs: dict) -> Any:
        xp, data_format = ctx.xp, attrs["data_format"]
        buffers = Recycler(xp)
        epilogue = BiasEpilogue(buffers, relu)

        def bias_add(value: Any, bias: Any) -> Any:
            _check_channels(value, bias, _channel_axis(data_format, value.ndim))
            out = buffers.empty(value.shape, value.dtype)
            if data_format == "NCHW":
                xp.add(value, bias.reshape((-1,) + (1,) * (value.ndim - 2)), out=out)
                return relu_into(xp, out, out) if relu else out
            channels = bias.shape[0]
            epilogue.apply(value.reshape(-1, channels), out.reshape(-1, channels), bias)
            return out

        return bias_add

    return factory


def _bias_add_grad(op: Operation, grad: Tensor) -> list:
    return [grad, apply_op("BiasAddGrad", [grad], {"data_format": op.attrs["data_format"]})]


def _infer_bias_add_grad(op: Operation) -> list:
    grad = op.inputs[0]
    rank = grad.shape.rank
    if rank is None:
        return [(grad.dtype, TensorShape([None]))]
    if rank < 2:
        raise ValueError(f"BiasAddGrad needs a gradient of rank at least 2, got {grad.shape}")
    axis = _channel_axis(op.attrs["data_format"], rank)
    return [(grad.dtype, TensorShape([grad.shape.as_list()[axis]]))]


def _bias_add_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, data_format = ctx.xp, attrs["data_format"]

    def bias_add_grad(grad: Any) -> Any:
        axis = _channel_axis(data_format, grad.ndim)
        if data_format == "NCHW":
            return grad.sum(axis=tuple(a for a in range(grad.ndim) if a != axis))
        rows, width = _rows(grad)
        channels = grad.shape[-1]
        if not rows:
            return xp.zeros(channels, grad.dtype)
        # Down the rows first (long inner loops over W*C), then over a row's pixels.
        per_row = grad.reshape(rows, width).sum(axis=0)
        return per_row.reshape(width // channels, channels).sum(axis=0)

    return bias_add_grad


def _bias_add_grad_grad(op: Operation, grad: Tensor) -> list:
    # The adjoint of summing over the non-channel axes: broadcast back along them.
    x = op.inputs[0]
    if op.attrs["data_format"] == "NCHW":
        rank = x.shape.rank
        if rank is None:
            raise ValueError("the gradient of BiasAddGrad with NCHW needs an input of known rank")
        grad = reshape(grad, [-1] + [1] * (rank - 2))
    return [broadcast_to(grad, shape(x))]


registry.register(
    registry.OpDef(
        "BiasAdd", _infer_bias_add, _bias_add_kernel(False), _bias_add_grad, shape_of_input=0
    )
)
registry.register(
    registry.OpDef("BiasAddGrad", _infer_bias_add_grad, _bias_add_grad_kernel, _bias_add_grad_grad)
)
# ``Relu(BiasAdd(x, b))`` as one kernel; created only by the plan compiler.
registry.register(
    registry.OpDef("BiasAddRelu", made_by_fusion, _bias_add_kernel(True), shape_of_input=0)
)
registry.register_fusion("BiasAdd", "Relu", "BiasAddRelu")


def bias_add_op(value: Tensor, bias: Tensor, data_format: str, name: str) -> Tensor:
    """The ``BiasAdd`` op (``impl.bias_add`` checks and converts its arguments)."""
    return apply_op("BiasAdd", [value, bias], {"data_format": data_format}, name=name)
