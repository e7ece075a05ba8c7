"""``tf.strings.ngrams`` on dense input: the n-grams of the innermost dimension, a
composite of array ops and ``ReduceJoin``.

Per width ``w``, each row (length ``L``) gets ``p`` pad strings on each side (no
padding without ``pad_values``; ``p = w - 1``, or ``min(padding_width, w - 1)``), and
its ``max(0, L + 2p - w + 1)`` windows are gathered at once (``window + offset``
indices, shape ``[..., num, w]``) and joined with ``separator`` along the last axis.
With ``preserve_short_sequences``, a non-empty row too short for any window gives one
n-gram of its whole padded sequence (the width is then ``L + 2p``). The widths' n-grams
are concatenated in the order of ``ngram_width``; the result has the input's outer
shape and an innermost dimension of their total count (unknown statically, as in TF).
"""

from __future__ import annotations

from typing import Any

from ...framework.graph import Tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from .. import math as math_ops
from .conversions import reduce_join
from .string_ops import string_tensor


def _pads(pad_values: Any) -> tuple[Any, Any] | None:
    if pad_values is None:
        return None
    if isinstance(pad_values, (list, tuple)):
        if len(pad_values) != 2 or not all(isinstance(v, (str, bytes)) for v in pad_values):
            raise TypeError("pad_values must be a string, tuple of strings, or None.")
        return pad_values[0], pad_values[1]
    if not isinstance(pad_values, (str, bytes)):
        raise TypeError("pad_values must be a string, tuple of strings, or None.")
    return pad_values, pad_values


def _width_ngrams(
    x: Tensor, width: int, pads: tuple[Any, Any] | None, padding_width: Any, sep: str, keep: bool
) -> Tensor:
    rank = x.shape.ndims or 1
    pad = 0
    if pads is not None:
        pad = width - 1 if padding_width is None else min(int(padding_width), width - 1)
    padded = x
    if pads is not None and pad:
        side = array_ops.concat([array_ops.shape(x)[:-1], [pad]], 0)
        left = array_ops.fill(side, pads[0])
        right = array_ops.fill(side, pads[1])
        padded = array_ops.concat([left, x, right], -1)
    length = array_ops.shape(x)[-1]
    padded_length = array_ops.shape(padded)[-1]
    span: Any = width
    if keep:
        short = math_ops.logical_and(
            math_ops.less(padded_length, width), math_ops.greater(length, 0)
        )
        span = math_ops.where(short, padded_length, width)
    count = math_ops.maximum(math_ops.add(math_ops.subtract(padded_length, span), 1), 0)
    windows = math_ops.add(
        array_ops.expand_dims(array_ops.range_(count), 1),
        array_ops.expand_dims(array_ops.range_(span), 0),
    )
    gathered = array_ops.gather(padded, windows, axis=rank - 1)  # [..., count, span]
    return reduce_join(gathered, axis=-1, separator=sep)


def ngrams(
    data: Any,
    ngram_width: Any,
    separator: str = " ",
    pad_values: Any = None,
    padding_width: Any = None,
    preserve_short_sequences: bool = False,
    name: str | None = None,
) -> Tensor:
    """The n-grams of the innermost dimension of a dense string tensor, each joined with
    ``separator``.

    Args:
        data: a string tensor of known rank at least 1 (dataflow has no
            ``RaggedTensor``).
        ngram_width: an int or a list of ints: the widths, whose n-grams are
            concatenated in this order.
        separator: put between the strings of an n-gram.
        pad_values: ``None`` (no padding), a string for both sides, or a
            ``(left, right)`` pair.
        padding_width: how many pad strings on each side (default ``width - 1``; never
            more than that). Needs ``pad_values``.
        preserve_short_sequences: a non-empty row too short for any n-gram gives one
            n-gram of the whole (padded) row.
        name: a name for the operation.

    Returns:
        A string tensor of ``data``'s outer shape and an innermost dimension of all the
        n-grams of a row.

    Raises:
        TypeError: bad ``pad_values``.
        ValueError: a width or ``padding_width`` below 1, ``padding_width`` without
            ``pad_values``, or ``data`` of unknown rank or rank 0.
    """
    pads = _pads(pad_values)
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
    for width in widths:
        if width < 1:
            raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
    with name_scope(name, "StringNGrams", [data]):
        x = string_tensor(data, "data", "StringNGrams")
        if x.shape.ndims is None:
            raise ValueError("Rank of data must be known.")
        if x.shape.ndims == 0:
            raise ValueError("Data must have rank>0")
        parts = [
            _width_ngrams(x, int(w), pads, padding_width, separator, preserve_short_sequences)
            for w in widths
        ]
        return parts[0] if len(parts) == 1 else array_ops.concat(parts, -1)
