"""Depthwise, separable and atrous 2-D convolutions (TF1's ``nn.depthwise_conv2d``,
``nn.separable_conv2d``, ``nn.atrous_conv2d``), NHWC.

A depthwise convolution filters each input channel on its own: ``filter`` is
``[kh, kw, in_channels, multiplier]`` and output channel ``c * multiplier + m`` is input
channel ``c`` convolved with ``filter[:, :, c, m]``. It is computed as one ordinary
convolution with the block-diagonal filter ``[kh, kw, in, in * multiplier]`` that has
those slices on its diagonal and zeros elsewhere (a product with a constant identity
mask, so gradients with respect to the input and the filter come from ``Conv2D``'s and
the mask's own). That costs ``in_channels`` times the arithmetic of a grouped kernel,
which is fine for the small models of TF1 tutorials.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ... import array as array_ops
from ...constant import constant
from .conv2d import conv2d


def _rate_dilations(rate: Any, dilations: Any) -> Any:
    if rate is not None and dilations is not None:
        raise ValueError("rate and dilations must not both be given")
    value = rate if rate is not None else dilations
    if value is None:
        return None
    rates = [int(value)] * 2 if np.ndim(value) == 0 else [int(v) for v in value]
    return [1, *rates[-2:], 1] if len(rates) != 4 else rates


def channel_mask(channels: int, dtype: Any) -> Tensor:
    """``[1, 1, in, in, 1]``: the identity over input channels, as a constant."""
    return constant(np.eye(channels).reshape(1, 1, channels, channels, 1), dtype=dtype)


def block_diagonal(f: Tensor, dims: list[int]) -> Tensor:
    """A depthwise filter ``[kh, kw, in, multiplier]`` (``dims``, its static shape) as
    the block-diagonal ordinary filter ``[kh, kw, in, in * multiplier]``."""
    kh, kw, channels, multiplier = dims
    block = array_ops.expand_dims(f, 3) * channel_mask(channels, f.dtype)
    return array_ops.reshape(block, [kh, kw, channels, channels * multiplier])


def depthwise_conv2d(
    input: Any,
    filter: Any,
    strides: Any,
    padding: str,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """Each input channel convolved with its own ``multiplier`` filters.

    Raises:
        ValueError: ``filter`` is not 4-D, or its third dimension is not the number
            of input channels; ``data_format`` other than NHWC.
    """
    if data_format not in (None, "NHWC"):
        raise ValueError("depthwise_conv2d: only data_format='NHWC' is provided")
    with name_scope(name, "depthwise", [input, filter]) as scope:
        x, f = convert_to_tensor(input), convert_to_tensor(filter)
        dims = f.shape.as_list() if f.shape.rank is not None else None
        if dims is None or len(dims) != 4 or None in dims:
            raise ValueError(
                "depthwise_conv2d needs a filter of known shape [kh, kw, in, multiplier], "
                f"got {f.shape}"
            )
        channels = int(dims[2] or 0)  # all known (checked)
        full = block_diagonal(f, [int(d or 0) for d in dims])
        if x.shape.rank is not None and x.shape.as_list()[-1] not in (None, channels):
            raise ValueError(
                f"depthwise_conv2d: the input has {x.shape.as_list()[-1]} channels, "
                f"the filter {channels}"
            )
        return conv2d(
            x,
            full,
            strides=strides,
            padding=padding,
            dilations=_rate_dilations(rate, dilations),
            name=scope,
        )


def separable_conv2d(
    input: Any,
    depthwise_filter: Any,
    pointwise_filter: Any,
    strides: Any,
    padding: str,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """A depthwise convolution followed by a 1x1 convolution with ``pointwise_filter``
    (``[1, 1, in * multiplier, out]``)."""
    with name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        depthwise = depthwise_conv2d(
            input,
            depthwise_filter,
            strides,
            padding,
            rate=rate,
            data_format=data_format,
            dilations=dilations,
        )
        return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], "VALID", name=scope)


def atrous_conv2d(
    value: Any, filters: Any, rate: int, padding: str, name: str | None = None
) -> Tensor:
    """A convolution with holes: ``filters`` dilated by ``rate`` in height and width."""
    if int(rate) < 1:
        raise ValueError(f"rate {rate} should be larger than or equal to 1")
    return conv2d(
        value, filters, [1, 1, 1, 1], padding, dilations=[1, int(rate), int(rate), 1], name=name
    )
