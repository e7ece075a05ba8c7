"""``Conv3D``, ``Conv3DTranspose``, ``MaxPooling3D``, ``AveragePooling3D`` and
``SeparableConv1D`` (TF1's ``tf.layers``, ``channels_last``), their functional forms,
and ``InputSpec``. Variables are named as TF1 names them: ``kernel`` (``kernel_size +
[in, filters]``; ``[.., filters, in]`` for the transpose) and ``bias`` under the layer's
scope; ``depthwise_kernel`` (``[width, in, depth_multiplier]``) and
``pointwise_kernel`` (``[1, in * depth_multiplier, filters]``) for the separable one,
which computes the 2-D separable convolution over a height-1 image as TF1 does."""

from __future__ import annotations

from typing import Any

from ..framework.graph import Tensor
from ..framework.tensor_shape import TensorShape
from ..ops import array as array_ops
from ..ops.nn.conv.conv3d import conv3d as nn_conv3d
from ..ops.nn.conv.conv3d import conv3d_transpose as nn_conv3d_transpose
from ..ops.nn.conv.depthwise import separable_conv2d as nn_separable_conv2d
from ..ops.nn.pool3d import avg_pool3d, max_pool3d
from .base import channels_dim
from .convolutional import Conv, SeparableConv2D, functional_form, transposed_length
from .pooling import Pooling


class Conv3D(Conv):
    """3-D convolution over ``[batch, depth, height, width, channels]``."""

    rank = 3

    def convolve(self, inputs: Tensor) -> Tensor:
        return nn_conv3d(
            inputs,
            self.kernel,
            strides=[1, *self.strides, 1],
            padding=self.padding,
            dilations=[1, *self.dilation_rate, 1],
        )


class Conv3DTranspose(Conv3D):
    """The transpose (gradient) of a 3-D convolution, ``kernel`` ``[kd, kh, kw,
    filters, in]``."""

    def __init__(self, filters: int, kernel_size: Any, *args: Any, **kwargs: Any):
        if kwargs.get("dilation_rate", 1) not in (1, (1, 1, 1), [1, 1, 1]):
            raise ValueError("Conv3DTranspose: dilation_rate must be 1")
        super().__init__(filters, kernel_size, *args, **kwargs)

    def kernel_shape(self, channels: int) -> list[int]:
        return list(self.kernel_size) + [self.filters, channels]

    def convolve(self, inputs: Tensor) -> Tensor:
        dims = inputs.shape.as_list() if inputs.shape.rank is not None else [None] * 5
        dynamic = array_ops.shape(inputs)
        sizes: list[Any] = []  # each a static int or a scalar tensor
        for i in (1, 2, 3):
            k, s = self.kernel_size[i - 1], self.strides[i - 1]
            static = transposed_length(dims[i], k, s, self.padding)
            if static is not None:
                sizes.append(static)
            else:
                size = dynamic[i] * s
                sizes.append(size + max(k - s, 0) if self.padding == "VALID" else size)
        output_shape = array_ops.stack([dynamic[0], *sizes, self.filters])
        outputs = nn_conv3d_transpose(
            inputs, self.kernel, output_shape, strides=[1, *self.strides, 1], padding=self.padding
        )
        known = [s if isinstance(s, int) else None for s in sizes]
        outputs.set_shape([dims[0], *known, self.filters])
        return outputs


class SeparableConv1D(SeparableConv2D):
    """A depthwise 1-D convolution (``depth_multiplier`` filters per input channel)
    followed by a pointwise one, over ``[batch, width, channels]``."""

    rank = 1

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate: Any = 1,
        *args: Any,
        **kwargs: Any,
    ):
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate, *args, **kwargs
        )

    def build(self, input_shape: TensorShape) -> None:
        if input_shape.rank is not None and input_shape.rank != 3:
            raise ValueError(
                f"Input 0 of layer {self._base_name} is incompatible with the layer: expected "
                f"ndim=3, found ndim={input_shape.rank}. Full shape received: {input_shape}"
            )
        channels = channels_dim(input_shape, "SeparableConv1D")
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            [self.kernel_size[0], channels, self.depth_multiplier],
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
        )
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            [1, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                [self.filters],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def convolve(self, inputs: Tensor) -> Tensor:
        image = array_ops.expand_dims(inputs, 1)  # [batch, 1, width, channels]
        out = nn_separable_conv2d(
            image,
            array_ops.expand_dims(self.depthwise_kernel, 0),
            array_ops.expand_dims(self.pointwise_kernel, 0),
            [1, 1, self.strides[0], 1],
            self.padding,
            rate=[1, self.dilation_rate[0]],
        )
        return array_ops.squeeze(out, [1])


class Pooling3D(Pooling):
    """A 3-D pooling layer; ``pool3d`` is ``max_pool3d`` or ``avg_pool3d``."""

    rank = 3
    pool3d = staticmethod(max_pool3d)

    def call(self, inputs: Tensor) -> Tensor:
        return self.pool3d(inputs, [1, *self.pool_size, 1], [1, *self.strides, 1], self.padding)


class MaxPooling3D(Pooling3D):
    """Max pooling over ``[batch, depth, height, width, channels]``."""

    pool3d = staticmethod(max_pool3d)


class AveragePooling3D(Pooling3D):
    """Average pooling over ``[batch, depth, height, width, channels]``."""

    pool3d = staticmethod(avg_pool3d)


def conv3d(inputs: Any, filters: int, kernel_size: Any, *args: Any, **kwargs: Any) -> Tensor:
    """The functional form of ``Conv3D`` (``name`` is its variable scope)."""
    return functional_form(Conv3D, inputs, (filters, kernel_size, *args), kwargs)


def conv3d_transpose(
    inputs: Any, filters: int, kernel_size: Any, *args: Any, **kwargs: Any
) -> Tensor:
    """The functional form of ``Conv3DTranspose`` (``name`` is its variable scope)."""
    return functional_form(Conv3DTranspose, inputs, (filters, kernel_size, *args), kwargs)


def separable_conv1d(
    inputs: Any, filters: int, kernel_size: Any, *args: Any, **kwargs: Any
) -> Tensor:
    """The functional form of ``SeparableConv1D`` (``name`` is its variable scope)."""
    return functional_form(SeparableConv1D, inputs, (filters, kernel_size, *args), kwargs)


def max_pooling3d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """The functional form of ``MaxPooling3D``."""
    return MaxPooling3D(pool_size, strides, padding, data_format, name=name)(inputs)


def average_pooling3d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """The functional form of ``AveragePooling3D``."""
    return AveragePooling3D(pool_size, strides, padding, data_format, name=name)(inputs)


class InputSpec:
    """What a layer accepts as input (TF1's ``tf.layers.InputSpec``): a ``dtype``, a
    ``shape`` (then ``ndim`` is its rank), an exact, largest or smallest ``ndim``, and
    ``axes``, a map from axis index to the size it must have."""

    def __init__(
        self,
        dtype: Any = None,
        shape: Any = None,
        ndim: int | None = None,
        max_ndim: int | None = None,
        min_ndim: int | None = None,
        axes: dict | None = None,
        allow_last_axis_squeeze: bool = False,
        name: str | None = None,
    ):
        self.dtype = dtype
        self.shape = None if shape is None else tuple(shape)
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.name = name
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            self.axes = {int(k): v for k, v in (axes or {}).items()}
        except (ValueError, TypeError) as exc:
            raise TypeError(f"The keys in axes must be integers, got {axes}") from exc
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            limit = (self.ndim if self.ndim is not None else self.max_ndim) - 1  # type: ignore[operator]
            if max(self.axes) > limit:
                raise ValueError(
                    f"Axis {max(self.axes)} is greater than the maximum allowed value: {limit}"
                )

    def __repr__(self) -> str:
        parts = [
            f"{k}={v}"
            for k, v in (
                ("dtype", self.dtype),
                ("shape", self.shape),
                ("ndim", self.ndim),
                ("max_ndim", self.max_ndim),
                ("min_ndim", self.min_ndim),
                ("axes", self.axes or None),
            )
            if v is not None
        ]
        return f"InputSpec({', '.join(parts)})"
