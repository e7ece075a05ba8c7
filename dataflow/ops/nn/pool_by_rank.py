"""Pooling chosen by rank: TF1's ``tf.nn.pool``, ``max_pool1d``/``avg_pool1d`` and the
TF2-style ``max_pool_v2``/``avg_pool_v2``. Composites over ``MaxPool``/``AvgPool``
(``nn/pool.py``) and ``MaxPool3D``/``AvgPool3D`` (``nn/pool3d.py``).

A 1-D pooling is the 2-D one over a height-1 image, as TF1 computes it. ``pool`` with a
dilation rate above 1 (VALID padding only, as TF1) goes through ``with_space_to_batch``
(``nn/conv/by_rank.py``), as TF1's does.

Example: ``pool(x, [2], 'MAX', 'VALID', strides=[2])`` of a ``[1, 4, 1]`` input
``[1, 5, 2, 3]`` gives ``[5, 3]``.
"""

from __future__ import annotations

from typing import Any

from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from ..control.group import identity
from .conv.by_rank import spatial_ints, with_space_to_batch
from .pool import avg_pool, max_pool
from .pool3d import avg_pool3d, max_pool3d

_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def _format(data_format: Any, n: int) -> bool:
    """Whether ``data_format`` (None: channels last) is channels last for N dims."""
    if data_format is None:
        return True
    fmt = str(data_format).upper()
    if fmt not in _FORMATS.get(n, ()):
        raise ValueError(f"data_format {data_format!r} does not fit {n} spatial dimensions")
    return fmt == _FORMATS[n][0]


def _pool_nd(
    kind: str, x: Any, n: int, k: list, s: list, padding: str, last: bool, name: Any
) -> Tensor:
    full = (lambda v: [1, *v, 1]) if last else (lambda v: [1, 1, *v])
    fmt = _FORMATS[n][0 if last else 1]
    if n == 1:
        with name_scope(name, f"{kind.lower()}_pool1d", [x]) as scope:
            axis = 1 if last else 2
            image = array_ops.expand_dims(x, axis)
            k2, s2 = full([1, k[0]]), full([1, s[0]])
            pooled = (max_pool if kind == "MAX" else avg_pool)(
                image, k2, s2, padding, data_format="NHWC" if last else "NCHW"
            )
            return array_ops.squeeze(pooled, [axis], name=scope)
    if n == 2:
        build = max_pool if kind == "MAX" else avg_pool
        return build(x, full(k), full(s), padding, data_format=fmt, name=name)
    build3 = max_pool3d if kind == "MAX" else avg_pool3d
    return build3(x, full(k), full(s), padding, data_format=fmt, name=name)


def _rank_of(x: Tensor, data_format: Any) -> int:
    if data_format is not None:
        return len(str(data_format)) - 2
    if x.shape.rank is None:
        raise ValueError("the input's rank must be known when data_format is not given")
    return x.shape.rank - 2


def _by_rank(
    kind: str, input: Any, ksize: Any, strides: Any, padding: str, data_format: Any, name: Any
) -> Tensor:
    x = convert_to_tensor(input, name="input")
    n = _rank_of(x, data_format)
    if n not in (1, 2, 3):
        raise ValueError(f"the input must be rank 3 to 5 (1 to 3 spatial dims), got {x.shape}")
    last = _format(data_format, n)
    k = spatial_ints(ksize, n, "ksize", last)
    s = spatial_ints(strides, n, "strides", last)
    return _pool_nd(kind, x, n, k, s, padding, last, name)


def max_pool_v2(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str | None = None,
    name: str | None = None,
) -> Tensor:
    """Max pooling of an N-D input (N = 1, 2, 3 from ``data_format`` or the input's
    rank); ``ksize`` and ``strides`` are an int or lists of 1, N or N + 2 ints."""
    return _by_rank("MAX", input, ksize, strides, padding, data_format, name)


def avg_pool_v2(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str | None = None,
    name: str | None = None,
) -> Tensor:
    """Average pooling of an N-D input; arguments as for ``max_pool_v2``."""
    return _by_rank("AVG", input, ksize, strides, padding, data_format, name)


def max_pool1d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NWC",
    name: str | None = None,
) -> Tensor:
    """Max pooling over the width of ``[batch, width, channels]`` (``'NWC'``) or
    ``[batch, channels, width]`` (``'NCW'``); ``ksize``/``strides``: an int or a list of
    1 or 3 ints."""
    return _by_rank("MAX", input, ksize, strides, padding, data_format or "NWC", name)


def avg_pool1d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NWC",
    name: str | None = None,
) -> Tensor:
    """Average pooling over the width; arguments as for ``max_pool1d``."""
    return _by_rank("AVG", input, ksize, strides, padding, data_format or "NWC", name)


def pool(
    input: Any,
    window_shape: Any,
    pooling_type: str,
    padding: str,
    dilation_rate: Any = None,
    strides: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """N-D max or average pooling (N = ``len(window_shape)``, 1 to 3), with optional
    dilation of the window.

    Args:
        input: ``[batch] + spatial + [channels]`` (or channels first with an ``NC*``
            ``data_format``).
        window_shape: N ints.
        pooling_type: ``'MAX'`` or ``'AVG'``.
        padding: ``'SAME'`` or ``'VALID'``.
        dilation_rate: N ints (default 1); ``dilations`` is an alias. Dilation above 1
            needs strides of 1 and VALID padding (as TF1).
        strides: N ints (default 1).
        name: a name scope.
        data_format: ``None`` (channels last) or the N-D format string.

    Raises:
        ValueError: a bad pooling type, rank, window, strides or dilation.
    """
    dilation_rate = dilations if dilation_rate is None else dilation_rate
    kind = str(pooling_type).upper()
    if kind not in ("MAX", "AVG"):
        raise ValueError(f"Invalid pooling_type: {pooling_type}")
    window = [int(v) for v in window_shape]
    n = len(window)
    if n not in (1, 2, 3):
        raise ValueError(f"window_shape must have 1 to 3 entries, got {window_shape}")
    with name_scope(name, f"{kind.lower()}_pool", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        if x.shape.rank is not None and x.shape.rank != n + 2:
            raise ValueError(f"input must have rank {n + 2}, got {x.shape}")
        last = _format(data_format, n)
        s = [int(v) for v in strides] if strides is not None else [1] * n
        d = [int(v) for v in dilation_rate] if dilation_rate is not None else [1] * n
        if len(s) != n or len(d) != n:
            raise ValueError(f"strides and dilation_rate must have {n} entries")
        if any(v < 1 for v in window + s + d):
            raise ValueError("window_shape, strides and dilation_rate must be positive")
        if any(v > 1 for v in s) and any(v > 1 for v in d):
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        if str(padding).upper() == "SAME" and any(v > 1 for v in d):
            raise ValueError("pooling with SAME padding is not implemented for dilation_rate > 1")

        def op(converted: Tensor, _num: int, pad: str) -> Tensor:
            return _pool_nd(kind, converted, n, window, s, pad, last, None)

        out = with_space_to_batch(
            x, d, padding, op, filter_shape=window, data_format=None if last else "NC"
        )
        return identity(out, name=scope)
