"""Max and average pooling layers, 1-D and 2-D (``channels_last``); a 1-D pooling is the
2-D one over a width-1 image, as TF1 computes it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..framework.graph import Tensor
from ..ops import array as array_ops
from ..ops.nn.pool import avg_pool, max_pool
from .base import Layer
from .convolutional import as_tuple, check_format


class Pooling(Layer):
    """A pooling layer; ``rank`` 1, 2 or 3, ``pool`` ``max_pool`` or ``avg_pool`` (their
    3-D forms for rank 3)."""

    rank = 2
    pool: Callable[..., Tensor] = staticmethod(max_pool)

    def __init__(
        self,
        pool_size: Any,
        strides: Any,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(name=name, **kwargs)
        self.pool_size = as_tuple(pool_size, self.rank, "pool_size")
        self.strides = as_tuple(strides, self.rank, "strides")
        self.padding = check_format(data_format, padding)

    def call(self, inputs: Tensor) -> Tensor:
        if self.rank == 1:
            image = array_ops.expand_dims(inputs, 1)  # [batch, 1, width, channels]
            pooled = self.pool(
                image, [1, 1, self.pool_size[0], 1], [1, 1, self.strides[0], 1], self.padding
            )
            return array_ops.squeeze(pooled, [1])
        return self.pool(inputs, [1, *self.pool_size, 1], [1, *self.strides, 1], self.padding)


class MaxPooling1D(Pooling):
    rank, pool = 1, staticmethod(max_pool)


class MaxPooling2D(Pooling):
    rank, pool = 2, staticmethod(max_pool)


class AveragePooling1D(Pooling):
    rank, pool = 1, staticmethod(avg_pool)


class AveragePooling2D(Pooling):
    rank, pool = 2, staticmethod(avg_pool)


def max_pooling1d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    return MaxPooling1D(pool_size, strides, padding, data_format, name=name)(inputs)


def max_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    return MaxPooling2D(pool_size, strides, padding, data_format, name=name)(inputs)


def average_pooling1d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    return AveragePooling1D(pool_size, strides, padding, data_format, name=name)(inputs)


def average_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    return AveragePooling2D(pool_size, strides, padding, data_format, name=name)(inputs)
