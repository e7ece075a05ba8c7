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
from ..ops import array as array_ops
from ..ops.nn.conv.depthwise import separable_conv2d as nn_separable_conv2d
from ..ops.nn.pool3d import avg_pool3d, max_pool3d
from .convolutional import Conv, SeparableConv2D, TransposedConv, functional_form
from .pooling import Pooling


class Conv3D(Conv):
    """3-D convolution over ``[batch, depth, height, width, channels]``."""

    rank = 3


class Conv3DTranspose(TransposedConv, Conv3D):
    """The transpose (gradient) of a 3-D convolution, ``kernel`` ``[kd, kh, kw,
    filters, in]``."""


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

    # A wrong input rank is refused with Conv's message, not SeparableConv2D's.
    check_rank = Conv.check_rank

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


class MaxPooling3D(Pooling):
    """Max pooling over ``[batch, depth, height, width, channels]``."""

    rank, pool = 3, staticmethod(max_pool3d)


class AveragePooling3D(Pooling):
    """Average pooling over ``[batch, depth, height, width, channels]``."""

    rank, pool = 3, staticmethod(avg_pool3d)


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
