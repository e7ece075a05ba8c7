"""``Conv1D``, ``Conv2D``, ``Conv2DTranspose`` and ``SeparableConv2D`` (TF1's
``tf.layers`` convolutions, ``channels_last``): a ``kernel`` of shape ``kernel_size +
[in, filters]`` (``[.., filters, in]`` for the transpose; ``depthwise_kernel`` and
``pointwise_kernel`` for the separable one) and a ``bias``, named as TF1 names them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..framework.graph import Tensor
from ..framework.tensor_shape import TensorShape
from ..ops import array as array_ops
from ..ops.nn.conv.conv2d import conv1d as nn_conv1d
from ..ops.nn.conv.conv2d import conv2d as nn_conv2d
from ..ops.nn.conv.conv2d import conv2d_transpose as nn_conv2d_transpose
from ..ops.nn.conv.conv3d import conv3d as nn_conv3d
from ..ops.nn.conv.conv3d import conv3d_transpose as nn_conv3d_transpose
from ..ops.nn.conv.depthwise import separable_conv2d as nn_separable_conv2d
from ..ops.nn.impl import bias_add
from ..ops.state.initializers import glorot_uniform_initializer, zeros_initializer
from .base import Layer, channels_dim


def as_tuple(value: Any, n: int, what: str) -> tuple[int, ...]:
    """An int or a sequence of ``n`` ints as a tuple of ``n`` ints."""
    if isinstance(value, int):
        return (value,) * n
    values = tuple(int(v) for v in value)
    if len(values) != n:
        raise ValueError(
            f"The `{what}` argument must be a tuple of {n} integers. Received: {value}"
        )
    return values


def check_format(data_format: str, padding: str) -> str:
    if data_format not in ("channels_last", None):
        raise ValueError(
            f"only data_format='channels_last' is provided, got {data_format!r} "
            "(transpose NCHW inputs first)"
        )
    padding = padding.upper()
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    return padding


class Conv(Layer):
    """The N-D convolution layer (``rank`` 1, 2 or 3) the public classes specialize."""

    rank = 2

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate: Any = 1,
        activation: Callable | None = None,
        use_bias: bool = True,
        kernel_initializer: Any = None,
        bias_initializer: Any = None,
        kernel_regularizer: Callable | None = None,
        bias_regularizer: Callable | None = None,
        activity_regularizer: Callable | None = None,
        kernel_constraint: Callable | None = None,
        bias_constraint: Callable | None = None,
        trainable: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(trainable, name, activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = as_tuple(kernel_size, self.rank, "kernel_size")
        self.strides = as_tuple(strides, self.rank, "strides")
        self.dilation_rate = as_tuple(dilation_rate, self.rank, "dilation_rate")
        self.padding = check_format(data_format, padding)
        self.activation, self.use_bias = activation, use_bias
        self.kernel_initializer = kernel_initializer or glorot_uniform_initializer()
        self.bias_initializer = bias_initializer or zeros_initializer()
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.kernel = self.bias = None

    def kernel_shape(self, channels: int) -> list[int]:
        return list(self.kernel_size) + [channels, self.filters]

    def check_rank(self, input_shape: TensorShape) -> None:
        """Refuses an input whose rank is known and is not ``rank + 2``."""
        if input_shape.rank is not None and input_shape.rank != self.rank + 2:
            raise ValueError(
                f"Input 0 of layer {self._base_name} is incompatible with the layer: expected "
                f"ndim={self.rank + 2}, found ndim={input_shape.rank}. Full shape received: "
                f"{input_shape}"
            )

    def build(self, input_shape: TensorShape) -> None:
        self.check_rank(input_shape)
        channels = channels_dim(input_shape, type(self).__name__)
        self.kernel = self.add_weight(
            "kernel",
            self.kernel_shape(channels),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.build_bias()

    def build_bias(self) -> None:
        """Adds the ``bias`` variable (``[filters]``) when ``use_bias``."""
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                [self.filters],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def convolve(self, inputs: Tensor) -> Tensor:
        if self.rank == 1:
            return nn_conv1d(
                inputs,
                self.kernel,
                stride=self.strides[0],
                padding=self.padding,
                dilations=self.dilation_rate[0],
            )
        return (nn_conv2d if self.rank == 2 else nn_conv3d)(
            inputs,
            self.kernel,
            strides=[1, *self.strides, 1],
            padding=self.padding,
            dilations=[1, *self.dilation_rate, 1],
        )

    def call(self, inputs: Tensor) -> Tensor:
        outputs = self.convolve(inputs)
        if self.use_bias:
            outputs = bias_add(outputs, self.bias)
        return self.activation(outputs) if self.activation is not None else outputs


class Conv1D(Conv):
    """1-D convolution over ``[batch, width, channels]``."""

    rank = 1


class Conv2D(Conv):
    """2-D convolution over ``[batch, height, width, channels]``."""

    rank = 2


def transposed_length(size: int | None, kernel: int, stride: int, padding: str) -> int | None:
    """The length a transposed convolution produces (Keras's ``deconv_output_length``)."""
    if size is None:
        return None
    if padding == "VALID":
        return size * stride + max(kernel - stride, 0)
    return size * stride


class TransposedConv(Conv):
    """The transpose (gradient) of an N-D convolution (``rank`` 2 or 3, from the class it
    is mixed into), ``kernel`` ``kernel_size + [filters, in]``, without dilation."""

    def __init__(self, filters: int, kernel_size: Any, *args: Any, **kwargs: Any):
        if kwargs.get("dilation_rate", 1) not in (1, (1,) * self.rank, [1] * self.rank):
            raise ValueError(f"{type(self).__name__}: dilation_rate must be 1")
        super().__init__(filters, kernel_size, *args, **kwargs)

    def kernel_shape(self, channels: int) -> list[int]:
        return list(self.kernel_size) + [self.filters, channels]

    def convolve(self, inputs: Tensor) -> Tensor:
        rank = self.rank
        dims = inputs.shape.as_list() if inputs.shape.rank is not None else [None] * (rank + 2)
        dynamic = array_ops.shape(inputs)
        sizes: list[Any] = []  # each a static int or a scalar tensor
        for i in range(1, rank + 1):
            k, s = self.kernel_size[i - 1], self.strides[i - 1]
            static = transposed_length(dims[i], k, s, self.padding)
            if static is not None:
                sizes.append(static)
            else:
                size = dynamic[i] * s
                sizes.append(size + max(k - s, 0) if self.padding == "VALID" else size)
        output_shape = array_ops.stack([dynamic[0], *sizes, self.filters])
        transpose = nn_conv2d_transpose if rank == 2 else nn_conv3d_transpose
        outputs = transpose(
            inputs, self.kernel, output_shape, strides=[1, *self.strides, 1], padding=self.padding
        )
        # The static shape, which a packed output_shape with an unknown batch hides (TF1's
        # layer sets it too, so a following flatten + dense knows its depth).
        known = [s if isinstance(s, int) else None for s in sizes]
        outputs.set_shape([dims[0], *known, self.filters])
        return outputs


class Conv2DTranspose(TransposedConv, Conv2D):
    """The transpose (gradient) of a 2-D convolution, ``kernel`` ``[kh, kw, filters, in]``."""


def functional_form(cls: type, inputs: Any, args: Sequence[Any], kwargs: dict) -> Tensor:
    """A layer class's functional form: ``name`` is both the layer's name and its
    variable scope, ``reuse`` that scope's reuse."""
    name, reuse = kwargs.pop("name", None), kwargs.pop("reuse", None)
    return cls(*args, name=name, _scope=name, _reuse=reuse, **kwargs)(inputs)


def conv1d(inputs: Any, filters: int, kernel_size: Any, *args: Any, **kwargs: Any) -> Tensor:
    """The functional form of ``Conv1D`` (``name`` is its variable scope)."""
    return functional_form(Conv1D, inputs, (filters, kernel_size, *args), kwargs)


def conv2d(inputs: Any, filters: int, kernel_size: Any, *args: Any, **kwargs: Any) -> Tensor:
    """The functional form of ``Conv2D`` (``name`` is its variable scope)."""
    return functional_form(Conv2D, inputs, (filters, kernel_size, *args), kwargs)


def conv2d_transpose(
    inputs: Any, filters: int, kernel_size: Any, *args: Any, **kwargs: Any
) -> Tensor:
    """The functional form of ``Conv2DTranspose`` (``name`` is its variable scope)."""
    return functional_form(Conv2DTranspose, inputs, (filters, kernel_size, *args), kwargs)


class SeparableConv2D(Conv2D):
    """A depthwise convolution (``depth_multiplier`` filters per input channel,
    ``depthwise_kernel``) followed by a 1x1 convolution (``pointwise_kernel``)."""

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate: Any = (1, 1),
        depth_multiplier: int = 1,
        activation: Callable | None = None,
        use_bias: bool = True,
        depthwise_initializer: Any = None,
        pointwise_initializer: Any = None,
        bias_initializer: Any = None,
        depthwise_regularizer: Callable | None = None,
        pointwise_regularizer: Callable | None = None,
        bias_regularizer: Callable | None = None,
        activity_regularizer: Callable | None = None,
        depthwise_constraint: Callable | None = None,
        pointwise_constraint: Callable | None = None,
        bias_constraint: Callable | None = None,
        trainable: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(
            filters,
            kernel_size,
            strides,
            padding,
            data_format,
            dilation_rate,
            activation,
            use_bias,
            None,
            bias_initializer,
            None,
            bias_regularizer,
            activity_regularizer,
            None,
            bias_constraint,
            trainable,
            name,
            **kwargs,
        )
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer or glorot_uniform_initializer()
        self.pointwise_initializer = pointwise_initializer or glorot_uniform_initializer()
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint, self.pointwise_constraint = (
            depthwise_constraint,
            pointwise_constraint,
        )

    def check_rank(self, input_shape: TensorShape) -> None:
        if input_shape.rank is not None and input_shape.rank != 4:
            raise ValueError(
                "Inputs to `SeparableConv2D` should have rank 4. Received input shape: "
                f"{input_shape}"
            )

    def build(self, input_shape: TensorShape) -> None:
        self.check_rank(input_shape)
        channels = channels_dim(input_shape, type(self).__name__)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            [*self.kernel_size, channels, self.depth_multiplier],
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
        )
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            [*[1] * self.rank, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
        )
        self.build_bias()

    def convolve(self, inputs: Tensor) -> Tensor:
        return nn_separable_conv2d(
            inputs,
            self.depthwise_kernel,
            self.pointwise_kernel,
            [1, *self.strides, 1],
            self.padding,
            rate=self.dilation_rate,
        )


def separable_conv2d(
    inputs: Any, filters: int, kernel_size: Any, *args: Any, **kwargs: Any
) -> Tensor:
    """The functional form of ``SeparableConv2D`` (``name`` is its variable scope)."""
    return functional_form(SeparableConv2D, inputs, (filters, kernel_size, *args), kwargs)
