"""TF1's native depthwise op names: ``tf.nn.depthwise_conv2d_native`` and its two
gradients (``depthwise_conv2d_native_backprop_input``/``_filter``, also exported as
``depthwise_conv2d_backprop_input``/``_filter``). Composites: like
``nn/conv/depthwise.py``, a depthwise filter ``[kh, kw, in, multiplier]`` is the
block-diagonal ordinary filter ``[kh, kw, in, in * multiplier]``, so

* the forward op is ``Conv2D`` with that filter;
* the input gradient is ``Conv2DBackpropInput`` with that filter;
* the filter gradient is ``Conv2DBackpropFilter`` for the block-diagonal shape, of
  which only the diagonal blocks are kept (a product with the identity over input
  channels summed over the second ``in`` axis).

``NCHW`` tensors are transposed to ``NHWC`` and back around the computation.
"""

from __future__ import annotations

from typing import Any

from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ... import array as array_ops
from ...math import reduce_sum
from .conv2d import conv2d, conv2d_backprop_filter, conv2d_backprop_input
from .depthwise import block_diagonal, channel_mask
from .geometry import normalize_data_format, spatial_list, static_sizes


def _nhwc(t: Any, fmt: str) -> Tensor:
    return array_ops.transpose(t, [0, 2, 3, 1]) if fmt == "NCHW" else convert_to_tensor(t)


def _from_nhwc(t: Tensor, fmt: str, name: str) -> Tensor:
    """Back to ``fmt`` (the transpose named ``name``); an NHWC result is ``t`` itself."""
    return array_ops.transpose(t, [0, 3, 1, 2], name=name) if fmt == "NCHW" else t


def _filter_dims(f: Tensor) -> list[int]:
    dims = f.shape.as_list() if f.shape.rank is not None else None
    if dims is None or len(dims) != 4 or None in dims:
        raise ValueError(
            f"a depthwise filter of known shape [kh, kw, in, multiplier] is needed, got {f.shape}"
        )
    return [int(d or 0) for d in dims]


def _attrs(strides: Any, dilations: Any, fmt: str) -> tuple[list, list]:
    s = spatial_list(strides, "strides", fmt)
    d = spatial_list(dilations, "dilations", fmt, default=1)
    if fmt == "NCHW":
        s, d = [1, s[2], s[3], 1], [1, d[2], d[3], 1]
    return s, d


def _nhwc_sizes(sizes: Any, fmt: str) -> Any:
    if isinstance(sizes, (list, tuple)):
        v = [int(e) for e in sizes]
        return [v[0], v[2], v[3], v[1]] if fmt == "NCHW" else v
    t = convert_to_tensor(sizes)
    return array_ops.gather(t, [0, 2, 3, 1]) if fmt == "NCHW" else t


def depthwise_conv2d_native(
    input: Any,
    filter: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """Each input channel convolved with its own ``multiplier`` filters: output channel
    ``c * multiplier + m`` is channel ``c`` convolved with ``filter[:, :, c, m]``.

    Args:
        input: ``[batch, height, width, in]`` (NHWC) or NCHW.
        filter: ``[kh, kw, in, multiplier]``, of known shape.
        strides: a list of 4 ints in ``data_format`` order (or 1 or 2 ints).
        padding: ``'SAME'`` or ``'VALID'``.
        data_format: ``'NHWC'`` or ``'NCHW'``.
        dilations: like ``strides`` (default 1).
        name: a name for the result.
    """
    fmt = normalize_data_format(data_format)
    s, d = _attrs(strides, dilations, fmt)
    with name_scope(name, "DepthwiseConv2dNative", [input, filter]) as scope:
        f = convert_to_tensor(filter, name="filter")
        x = _nhwc(input, fmt)
        dims = _filter_dims(f)
        if x.shape.rank is not None and x.shape.as_list()[3] not in (None, dims[2]):
            raise ValueError(f"the input has {x.shape.as_list()[3]} channels, the filter {dims[2]}")
        y = conv2d(x, block_diagonal(f, dims), s, padding, dilations=d)
        return _from_nhwc(y, fmt, scope)


def depthwise_conv2d_native_backprop_input(
    input_sizes: Any,
    filter: Any,
    out_backprop: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The gradient of ``depthwise_conv2d_native`` with respect to its input, of shape
    ``input_sizes`` (4 ints in ``data_format`` order). Other arguments as the forward
    op's."""
    fmt = normalize_data_format(data_format)
    s, d = _attrs(strides, dilations, fmt)
    with name_scope(name, "DepthwiseConv2dNativeBackpropInput", [filter, out_backprop]) as scope:
        f = convert_to_tensor(filter, name="filter")
        dy = _nhwc(out_backprop, fmt)
        full = block_diagonal(f, _filter_dims(f))
        dx = conv2d_backprop_input(_nhwc_sizes(input_sizes, fmt), full, dy, s, padding, dilations=d)
        return _from_nhwc(dx, fmt, scope)


def depthwise_conv2d_native_backprop_filter(
    input: Any,
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The gradient of ``depthwise_conv2d_native`` with respect to its filter, of shape
    ``filter_sizes`` (``[kh, kw, in, multiplier]``, known at build time). Other
    arguments as the forward op's."""
    fmt = normalize_data_format(data_format)
    s, d = _attrs(strides, dilations, fmt)
    sizes = (
        [int(v) for v in filter_sizes]
        if isinstance(filter_sizes, (list, tuple))
        else static_sizes(convert_to_tensor(filter_sizes))
    )
    if sizes is None or len(sizes) != 4 or None in sizes:
        raise ValueError(f"filter_sizes must be 4 ints known at build time, got {filter_sizes}")
    kh, kw, channels, multiplier = (int(v) for v in sizes)
    with name_scope(name, "DepthwiseConv2dNativeBackpropFilter", [input, out_backprop]) as scope:
        x, dy = _nhwc(input, fmt), _nhwc(out_backprop, fmt)
        full = conv2d_backprop_filter(
            x, [kh, kw, channels, channels * multiplier], dy, s, padding, dilations=d
        )
        blocks = array_ops.reshape(full, [kh, kw, channels, channels, multiplier])
        return reduce_sum(blocks * channel_mask(channels, blocks.dtype), axis=3, name=scope)
