"""Grayscale morphology: TF1's ``tf.nn.dilation2d`` and ``tf.nn.erosion2d``.

Dilation of an NHWC ``input`` by a ``[kh, kw, depth]`` structuring function ``filter``::

    out[b, y, x, c] = max over (i, j) of
        input[b, y*sh + i*rh - pad_top, x*sw + j*rw - pad_left, c] + filter[i, j, c]

where positions outside the input take no part (they are padded with ``-inf``); the
output size and the pads are those of a convolution with the same strides, rates and
padding (``conv/geometry.py``). Erosion is its dual, as TF1 builds it:
``erosion2d(x, k) = -dilation2d(-x, reverse(k, [0, 1]))``.

Both are composites over primitives, not ops of their own: the ``kh * kw`` shifted and
strided views of the padded input (one ``StridedSlice`` per filter tap), each plus its
tap of the filter, stacked along a new leading axis; ``ArgMax`` over that axis picks the
first maximum in row-major tap order (the tie rule of TF's kernel), and a ``Select`` of
that tap followed by a sum over the axis gives the value. The gradient is then the
graph's own: the ``Select`` routes each output gradient to the chosen tap only, the
slices and the pad carry it back to the input position and the filter tap it came from,
which is exactly where TF's ``Dilation2DBackpropInput``/``Filter`` put it. The price is
``kh * kw`` copies of the output size in memory, fine for the small structuring
elements morphology uses.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from .. import array as array_ops
from .. import math as math_ops
from .conv.geometry import out_and_pads


def _spatial(value: Any, what: str) -> tuple[int, int]:
    """``[1, h, w, 1]`` (or a list of 4 ints whose outer entries are 1) as ``(h, w)``."""
    values = [int(v) for v in value]
    if len(values) != 4:
        raise ValueError(f"{what} must be a list of 4 ints [1, {what}_h, {what}_w, 1]")
    if values[0] != 1 or values[3] != 1:
        raise ValueError(
            f"{what.capitalize()} is only supported across spatial dimensions, got {values}"
        )
    if values[1] < 1 or values[2] < 1:
        raise ValueError(f"{what} must be positive, got {values}")
    return values[1], values[2]


def _out_and_pads(size: Any, k_eff: int, stride: int, padding: str) -> tuple:
    """Output size and leading pad of one dimension, as ints when ``size`` is known and
    as scalar tensors otherwise (the same arithmetic as ``out_and_pads``)."""
    if isinstance(size, int):
        out, before, after = out_and_pads(size, k_eff, stride, 1, padding, None)
        return out, before, after
    if padding == "VALID":
        return (size - k_eff) // stride + 1, 0, 0
    out = (size + stride - 1) // stride
    total = math_ops.maximum((out - 1) * stride + k_eff - size, 0)
    return out, total // 2, total - total // 2


def dilation2d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    rates: Any = None,
    padding: Any = None,
    name: str | None = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """Grayscale dilation of a 4-D NHWC ``input`` by a 3-D ``filter`` (TF1's signature).

    Args:
        input: ``[batch, in_height, in_width, depth]``, real (float or integer).
        filter: ``[filter_height, filter_width, depth]``, the structuring function, of
            the input's dtype (``filters`` is its other name; give one).
        strides: ``[1, stride_h, stride_w, 1]``.
        rates: ``[1, rate_h, rate_w, 1]``, the input stride between filter taps
            (``dilations`` is its other name; give one).
        padding: ``"SAME"`` or ``"VALID"``, as for a convolution.
        name: a name scope (default ``dilation2d``).

    Returns:
        ``[batch, out_height, out_width, depth]``: each output the largest
        ``input + filter`` over its window (positions outside the input are skipped).
        The gradient goes to the first maximum of each window, as TF's.

    Raises:
        ValueError: both names of an argument, ranks or depths that disagree, strides or
            rates across the batch or depth, an unknown padding, or a window larger than
            a VALID input.
        TypeError: a complex, bool or string input, or a filter of another dtype.
    """
    if filter is not None and filters is not None:
        raise ValueError("Cannot specify both 'filters' and 'filter'")
    if rates is not None and dilations is not None:
        raise ValueError("Cannot specify both 'dilations' and 'rates'")
    filter = filters if filter is None else filter
    rates = dilations if rates is None else rates
    if filter is None or strides is None or rates is None or padding is None:
        raise ValueError("dilation2d needs filter, strides, rates and padding")
    with name_scope(name, "dilation2d"):
        x = convert_to_tensor(input, name="input")
        k = convert_to_tensor(filter, name="filter", dtype=x.dtype)
        return _dilate(x, k, strides, rates, padding)


def _dilate(x: Tensor, k: Tensor, strides: Any, rates: Any, padding: Any) -> Tensor:
    """The composite of the module docstring, in the caller's name scope."""
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"dilation2d needs a real input, got {x.dtype.name}")
    sh, sw = _spatial(strides, "stride")
    rh, rw = _spatial(rates, "rate")
    mode = str(padding).upper()
    if mode not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    x_shape = x.shape.with_rank(4)
    k_shape = k.shape.with_rank(3)
    kh, kw, kdepth = k_shape.as_list()
    if kh is None or kw is None:
        raise ValueError(f"dilation2d needs a filter of known height and width, got {k.shape}")
    depth = x_shape.as_list()[3]
    if depth is not None and kdepth is not None and depth != kdepth:
        raise ValueError(f"input depth {depth} and filter depth {kdepth} must be equal")
    known = x_shape.as_list()
    dynamic = array_ops.shape(x)
    h = known[1] if known[1] is not None else dynamic[1]
    w = known[2] if known[2] is not None else dynamic[2]
    ho, pt, pb = _out_and_pads(h, (kh - 1) * rh + 1, sh, mode)
    wo, pl, pr = _out_and_pads(w, (kw - 1) * rw + 1, sw, mode)
    paddings = array_ops.stack(
        [[0, 0], array_ops.stack([pt, pb]), array_ops.stack([pl, pr]), [0, 0]]
    )
    integer = x.dtype.is_integer
    lowest = convert_to_tensor(x.dtype.min if integer else -float("inf"), dtype=x.dtype)
    padded = array_ops.pad(x, paddings, constant_values=lowest)
    # Integers have no -inf: a tap off the input is set to the lowest value after the
    # addition (which may wrap), from a padded map of where the input is.
    if integer:
        inside = array_ops.pad(array_ops.ones_like(x[:, :, :, :1], dtype=dtypes.int8), paddings)
    taps = []
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * rh, i * rh + sh * (ho - 1) + 1, sh)
            cols = slice(j * rw, j * rw + sw * (wo - 1) + 1, sw)
            tap = padded[:, rows, cols, :] + k[i, j]
            if integer:
                valid = math_ops.cast(inside[:, rows, cols, :], dtypes.bool)
                valid = math_ops.logical_and(valid, array_ops.ones_like(tap, dtype=dtypes.bool))
                tap = math_ops.where(valid, tap, array_ops.zeros_like(tap) + lowest)
            taps.append(tap)
    stacked = array_ops.stack(taps, axis=0)
    first = math_ops.argmax(stacked, axis=0, output_type=dtypes.int32)
    chosen = array_ops.one_hot(first, kh * kw, axis=0, dtype=dtypes.bool)
    out = math_ops.reduce_sum(
        math_ops.where(chosen, stacked, array_ops.zeros_like(stacked)), axis=0
    )
    static = [
        known[0],
        ho if isinstance(ho, int) else None,
        wo if isinstance(wo, int) else None,
        depth if depth is not None else kdepth,
    ]
    out.set_shape(TensorShape(static))
    return out


def erosion2d(
    value: Any, kernel: Any, strides: Any, rates: Any, padding: Any, name: str | None = None
) -> Tensor:
    """Grayscale erosion of a 4-D NHWC ``value`` by a 3-D ``kernel``:
    ``-dilation2d(-value, reverse(kernel, [0, 1]))``, as TF1 defines it.

    Args:
        value: ``[batch, in_height, in_width, depth]``, real (float or integer).
        kernel: ``[filter_height, filter_width, depth]``, of the value's dtype.
        strides: ``[1, stride_h, stride_w, 1]``.
        rates: ``[1, rate_h, rate_w, 1]``.
        padding: ``"SAME"`` or ``"VALID"``.
        name: a name scope (default ``erosion2d``).

    Returns:
        ``[batch, out_height, out_width, depth]``: each output the smallest
        ``value - kernel`` over its (reflected) window; the gradient goes to that
        minimum, as TF's.

    Raises:
        ValueError, TypeError: as ``dilation2d``.
    """
    with name_scope(name, "erosion2d"):
        x = convert_to_tensor(value, name="value")
        k = convert_to_tensor(kernel, name="kernel", dtype=x.dtype)
        k.shape.with_rank(3)
        flipped = array_ops.reverse(k, [0, 1])
        return math_ops.negative(_dilate(math_ops.negative(x), flipped, strides, rates, padding))
