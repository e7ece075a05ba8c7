"""``histogram_fixed_width_bins``: the bin of each value among ``nbins`` equal bins
spanning ``value_range`` (values below or above the range fall in the first or last
bin), TF1's composite: ``floor((x - low) / (high - low) * nbins)`` clipped to
``[0, nbins - 1]``, int32 whatever ``dtype`` says (TF's composite casts to int32 and
never reads it). Float values only: TF's composite fails on integers with a
``TypeError``, as here. Not differentiable (the index is piecewise constant)."""

from __future__ import annotations

from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ..array.shapes import reshape
from ..cast import cast
from .arith import floor, maximum, minimum


def histogram_fixed_width_bins(
    values: Any,
    value_range: Any,
    nbins: Any = 100,
    dtype: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """The int32 bin index of each of ``values`` among ``nbins`` equal bins over
    ``value_range = [low, high]`` (``tf.histogram_fixed_width_bins``); the shape of
    ``values``. ``dtype`` is accepted and, as in TF1, not used.

    Raises:
        TypeError: integer ``values``, or a ``value_range`` of another dtype.
    """
    with name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        x = convert_to_tensor(values, name="values")
        bounds = convert_to_tensor(value_range, dtype=x.dtype, name="value_range")
        n = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        if not x.dtype.is_floating:
            raise TypeError(f"histogram_fixed_width_bins needs float values, got {x.dtype.name}")
        del dtype  # TF1 returns int32 whatever it says
        scaled = (x - bounds[0]) / (bounds[1] - bounds[0])
        index = floor(scaled * cast(n, x.dtype))
        index = minimum(maximum(cast(index, dtypes.int32), 0), n - 1)
        return reshape(index, array_shape(x))


def array_shape(x: Tensor) -> Any:
    """``x``'s shape as static ints where known, else its run-time shape."""
    from ..array.shape_helpers import shape_of

    return x.shape.as_list() if x.shape.is_fully_defined() else shape_of(x)
