"""Convolutions chosen by rank, and dilation through space-to-batch: TF1's
``tf.nn.convolution``, ``conv_transpose``, ``conv1d_transpose``,
``atrous_conv2d_transpose`` and ``with_space_to_batch``. All composites over
``Conv2D``/``Conv3D`` and their input gradients (``nn/conv/conv2d.py``,
``nn/conv/conv3d.py``).

* A 1-D convolution or transpose is the 2-D one over a height-1 image, as TF1 does it.
* ``with_space_to_batch(input, rate, padding, op)`` computes ``op`` dilated by ``rate``
  as TF1 does: SAME padding is first written out as zeros (half of the dilated window's
  extent before, the rest after), the input is padded to a multiple of ``rate`` and
  moved into the batch by ``space_to_batch_nd``, ``op`` runs VALID there, and
  ``batch_to_space_nd`` puts the result back, cropping the extra padding. For pooling
  those written-out zeros take part in the window, as in TF.

Example: ``convolution`` of a ``[2, 8, 3]`` input with a ``[3, 3, 4]`` filter is
``conv1d`` and gives ``[2, 8, 4]`` with SAME padding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.tensor_util import constant_value
from ... import array as array_ops
from .conv2d import conv1d, conv2d, conv2d_backprop_input, conv2d_transpose
from .conv3d import conv3d, conv3d_transpose


def spatial_ints(value: Any, n: int, what: str, channels_last: bool = True) -> list[int]:
    """An int, or a list of 1, ``n`` or ``n + 2`` ints, as ``n`` spatial ints."""
    if value is None:
        return [1] * n
    if np.ndim(value) == 0:
        return [int(value)] * n
    values = [int(v) for v in value]
    if len(values) == 1:
        return values * n
    if len(values) == n:
        return values
    if len(values) == n + 2:
        return values[1:-1] if channels_last else values[2:]
    raise ValueError(f"{what} must be an int or a list of 1, {n} or {n + 2} ints, got {value}")


def _channels_last(data_format: Any, n: int) -> bool:
    if data_format is None:
        return True
    fmt = str(data_format).upper()
    last = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}.get(n)
    if last is None or fmt not in last:
        raise ValueError(f"data_format {data_format!r} does not fit {n} spatial dimensions")
    return fmt == last[0]


def _rank(t: Tensor, what: str) -> int:
    if t.shape.rank is None:
        raise ValueError(f"the rank of {what} must be known")
    return t.shape.rank


def convolution(
    input: Any,
    filter: Any = None,
    padding: Any = None,
    strides: Any = None,
    dilation_rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """An N-D convolution (N = 1, 2, 3 from the filter's rank) with optional dilation.

    Args:
        input: ``[batch] + spatial + [channels]`` (or channels first with an ``NC*``
            ``data_format``).
        filter: ``spatial + [in_channels, out_channels]``. ``filters`` is an alias.
        padding: ``'SAME'`` or ``'VALID'``.
        strides: an int or N ints (default 1).
        dilation_rate: an int or N ints (default 1); ``dilations`` is an alias. Strides
            and dilation rates above 1 cannot be combined (as TF1).
        name: a name scope.
        data_format: ``None`` (channels last) or the N-D format string.

    Raises:
        ValueError: unknown ranks, bad rates or strides, or both above 1.
    """
    filter = filters if filter is None else filter
    dilation_rate = dilations if dilation_rate is None else dilation_rate
    with name_scope(name, "convolution", [input, filter]) as scope:
        x, f = convert_to_tensor(input, name="input"), convert_to_tensor(filter, name="filter")
        n = _rank(f, "filter") - 2
        if n not in (1, 2, 3):
            raise ValueError(f"convolution needs a filter of rank 3 to 5, got {f.shape}")
        if x.shape.rank is not None and x.shape.rank != n + 2:
            raise ValueError(f"input must be rank {n + 2} for this filter, got {x.shape}")
        last = _channels_last(data_format, n)
        s = spatial_ints(strides, n, "strides", last)
        d = spatial_ints(dilation_rate, n, "dilation_rate", last)
        if any(v < 1 for v in s + d):
            raise ValueError(f"strides {s} and dilation_rate {d} must be positive")
        if any(v > 1 for v in s) and any(v > 1 for v in d):
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        if n == 1:
            return conv1d(
                x, f, stride=s[0], padding=padding, data_format="NWC" if last else "NCW",
                dilations=d[0], name=scope,
            )  # fmt: skip
        full_s = [1, *s, 1] if last else [1, 1, *s]
        full_d = [1, *d, 1] if last else [1, 1, *d]
        if n == 2:
            fmt2 = "NHWC" if last else "NCHW"
            return conv2d(x, f, full_s, padding, data_format=fmt2, dilations=full_d, name=scope)
        fmt3 = "NDHWC" if last else "NCDHW"
        return conv3d(x, f, full_s, padding, data_format=fmt3, dilations=full_d, name=scope)


def _insert_unit(shape: Any, axis: int) -> Any:
    """``shape`` (a list or a 1-D tensor) with a 1 inserted at ``axis``."""
    if isinstance(shape, (list, tuple)):
        values = [int(v) for v in shape]
        return values[:axis] + [1] + values[axis:]
    t = convert_to_tensor(shape)
    return array_ops.concat([t[:axis], array_ops.ones([1], t.dtype), t[axis:]], 0)


def conv1d_transpose(
    input: Any,
    filters: Any,
    output_shape: Any,
    strides: Any,
    padding: str = "SAME",
    data_format: str = "NWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The transpose of ``conv1d`` (its gradient with respect to the input).

    Args:
        input: ``[batch, width, in_channels]`` (``'NWC'``) or ``[batch, in_channels,
            width]`` (``'NCW'``).
        filters: ``[width, output_channels, in_channels]``.
        output_shape: the 3-element shape of the result.
        strides: an int or a list of 1 or 3 ints.
        padding: ``'SAME'`` or ``'VALID'``.
        data_format: ``'NWC'`` or ``'NCW'``.
        dilations: an int or a list of 1 or 3 ints (default 1).
        name: a name scope.
    """
    fmt = (data_format or "NWC").upper()
    if fmt not in ("NWC", "NCW"):
        raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}")
    last = fmt == "NWC"
    s = spatial_ints(strides, 1, "strides", last)[0]
    d = spatial_ints(dilations, 1, "dilations", last)[0]
    with name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        axis = 1 if last else 2
        value = array_ops.expand_dims(input, axis)
        kernel = array_ops.expand_dims(filters, 0)
        out = conv2d_transpose(
            value,
            kernel,
            _insert_unit(output_shape, axis),
            strides=[1, 1, s, 1] if last else [1, 1, 1, s],
            padding=padding,
            data_format="NHWC" if last else "NCHW",
            dilations=[1, 1, d, 1] if last else [1, 1, 1, d],
        )
        return array_ops.squeeze(out, [axis], name=scope)


def conv_transpose(
    input: Any,
    filters: Any,
    output_shape: Any,
    strides: Any,
    padding: str = "SAME",
    data_format: str | None = None,
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The transpose of an N-D convolution, N = 1, 2 or 3 from the length of
    ``output_shape`` (or the filter's rank); ``conv1d_transpose``,
    ``conv2d_transpose`` or ``conv3d_transpose``."""
    if isinstance(output_shape, (list, tuple)):
        n = len(output_shape) - 2
    else:
        shape = convert_to_tensor(output_shape)
        known = shape.shape.as_list()[0] if shape.shape.rank == 1 else None
        n = known - 2 if known is not None else _rank(convert_to_tensor(filters), "filters") - 2
    if n not in (1, 2, 3):
        raise ValueError(f"output_shape must have 3 to 5 elements, got {output_shape}")
    last = _channels_last(data_format, n)
    with name_scope(name, "conv_transpose", [input, filters, output_shape]) as scope:
        if n == 1:
            return conv1d_transpose(
                input, filters, output_shape, strides, padding,
                data_format="NWC" if last else "NCW", dilations=dilations, name=scope,
            )  # fmt: skip
        s = spatial_ints(strides, n, "strides", last)
        d = spatial_ints(dilations, n, "dilations", last)
        full_s = [1, *s, 1] if last else [1, 1, *s]
        full_d = [1, *d, 1] if last else [1, 1, *d]
        build = conv2d_transpose if n == 2 else conv3d_transpose
        fmt = {2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}[n][0 if last else 1]
        return build(
            input, filters, output_shape, strides=full_s, padding=padding,
            data_format=fmt, dilations=full_d, name=scope,
        )  # fmt: skip


def atrous_conv2d_transpose(
    value: Any,
    filters: Any,
    output_shape: Any,
    rate: int,
    padding: str,
    name: str | None = None,
) -> Tensor:
    """The transpose of ``atrous_conv2d``: the gradient of a convolution whose
    ``filters`` (``[height, width, out_channels, in_channels]``) are dilated by
    ``rate``, with respect to its input of shape ``output_shape``.

    Raises:
        ValueError: ``rate`` below 1, a padding other than SAME/VALID, or channels that
            do not match the filter.
    """
    if int(rate) < 1:
        raise ValueError(f"rate {rate} should be larger than or equal to 1")
    if str(padding).upper() not in ("SAME", "VALID"):
        raise ValueError(f"padding must be either VALID or SAME: {padding}")
    with name_scope(name, "atrous_conv2d_transpose", [value, filters, output_shape]) as scope:
        value, filters = convert_to_tensor(value), convert_to_tensor(filters)
        fdims = filters.shape.as_list() if filters.shape.rank == 4 else [None] * 4
        if value.shape.rank == 4 and None not in (value.shape.as_list()[3], fdims[3]):
            if value.shape.as_list()[3] != fdims[3]:
                raise ValueError(
                    f"value's input channels {value.shape.as_list()[3]} do not match the "
                    f"filters' last dimension {fdims[3]}"
                )
        if isinstance(output_shape, (list, tuple)) and fdims[2] is not None:
            if int(output_shape[3]) != fdims[2]:
                raise ValueError(
                    f"output_shape's channels {output_shape[3]} do not match the filters' "
                    f"third dimension {fdims[2]}"
                )
        sizes = output_shape
        if isinstance(sizes, (list, tuple)):
            sizes = [int(v) for v in sizes]
        return conv2d_backprop_input(
            sizes,
            filters,
            value,
            strides=[1, 1, 1, 1],
            padding=str(padding).upper(),
            dilations=[1, int(rate), int(rate), 1],
            name=scope,
        )


def _adjusted(values: list, fill: Any, spatial_dims: list[int]) -> list:
    """``values`` per spatial dim spread over dims ``1..max(spatial_dims)``, ``fill``
    elsewhere (a block shape or paddings for ``space_to_batch_nd``)."""
    out: list = [fill] * spatial_dims[-1]
    for v, dim in zip(values, spatial_dims):
        out[dim - 1] = v
    return out


def with_space_to_batch(
    input: Any,
    dilation_rate: Any,
    padding: str,
    op: Callable[[Tensor, int, str], Tensor],
    filter_shape: Any = None,
    spatial_dims: Any = None,
    data_format: str | None = None,
) -> Tensor:
    """``op(converted_input, num_spatial_dims, padding)`` dilated by ``dilation_rate``
    through space-to-batch (module docstring).

    Args:
        input: ``[batch] + ...``, with spatial dimensions ``spatial_dims``.
        dilation_rate: ``N`` positive ints (known at build time).
        padding: ``'SAME'`` (then ``filter_shape``, whose first ``N`` entries are the
            window, is needed) or ``'VALID'``.
        op: called as ``op(x, N, padding)`` on the converted input.
        filter_shape: the filter's (or window's) shape, known at build time.
        spatial_dims: increasing dimension indices >= 1 (default ``1..N``, or ``2..N+1``
            for a channels-first ``data_format``).
        data_format: as ``spatial_dims``' default.

    Raises:
        ValueError: a non-positive rate, unsorted spatial dims, a bad padding, or SAME
            without a filter shape.
    """
    x = convert_to_tensor(input, name="input")
    rate = constant_value(convert_to_tensor(dilation_rate))
    if rate is None:
        raise ValueError("dilation_rate must be known at graph build time")
    rates = [int(v) for v in np.reshape(rate, [-1])]
    n = len(rates)
    if any(v < 1 for v in rates):
        raise ValueError(f"dilation_rate must be positive, got {rates}")
    if spatial_dims is None:
        first = 2 if data_format is not None and str(data_format).upper().startswith("NC") else 1
        dims = list(range(first, first + n))
    else:
        dims = [int(v) for v in spatial_dims]
        if len(dims) != n or dims != sorted(set(dims)) or dims[0] < 1:
            raise ValueError(f"spatial_dims must be {n} increasing ints >= 1, got {spatial_dims}")
    mode = str(padding).upper()
    if mode not in ("SAME", "VALID"):
        raise ValueError(f"Invalid padding method {padding!r}")
    if all(v == 1 for v in rates):
        return op(x, n, mode)
    if mode == "SAME":
        if filter_shape is None:
            raise ValueError("filter_shape must be specified for SAME padding")
        window = constant_value(convert_to_tensor(filter_shape))
        if window is None:
            raise ValueError("filter_shape must be known at graph build time")
        extent = [(int(k) - 1) * r for k, r in zip(np.reshape(window, [-1])[:n], rates)]
        base = [[e // 2, e - e // 2] for e in extent]
    else:
        base = [[0, 0]] * n
    shape = x.shape.as_list() if x.shape.rank is not None else None
    if shape is not None and all(shape[d] is not None for d in dims):
        sizes: Any = [shape[d] for d in dims]
    else:
        full = array_ops.shape(x)
        sizes = array_ops.stack([full[d] for d in dims])
    paddings, crops = array_ops.required_space_to_batch_paddings(sizes, rates, base)
    block = _adjusted(rates, 1, dims)
    zero = array_ops.zeros([2], paddings.dtype)
    pad_rows = _adjusted([paddings[i] for i in range(n)], zero, dims)
    crop_rows = _adjusted([crops[i] for i in range(n)], zero, dims)
    converted = array_ops.space_to_batch_nd(x, block, array_ops.stack(pad_rows))
    result = op(converted, n, "VALID")
    return array_ops.batch_to_space_nd(result, block, array_ops.stack(crop_rows))
