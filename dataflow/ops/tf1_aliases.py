"""Old TF1 names that real programs still use, each built from the op it stands for.

``arg_max``/``arg_min`` (``dimension`` second), ``diag``/``diag_part`` (the *tensor*
diagonal: rank k to rank 2k and back), ``linspace``/``lin_space``, ``floor_div``,
``log_sigmoid``, ``accumulate_n``, ``shape_n``, ``initialize_variables``,
``initialize_local_variables``, ``moving_average_variables``, and ``mul``/``sub``/``neg``
(pre-1.0 names that tutorials still use; TF 1.15 dropped them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor, get_default_graph
from ..framework.scopes import name_scope
from .array import reorder as array_transpose
from .array import shapes as array_shape
from .array.join import concat
from .cast import cast
from .linalg import diag as linalg_diag
from .math import arith as math_arith
from .math.argmax_cumsum import argmax, argmin
from .nn import activations as nn
from .state import variables as state


def arg_max(
    input: Any, dimension: Any, output_type: Any = dtypes.int64, name: str | None = None
) -> Tensor:
    """TF1's ``arg_max``: ``argmax`` with the axis called ``dimension``."""
    return argmax(input, axis=dimension, name=name, output_type=output_type)


def arg_min(
    input: Any, dimension: Any, output_type: Any = dtypes.int64, name: str | None = None
) -> Tensor:
    """TF1's ``arg_min``: ``argmin`` with the axis called ``dimension``."""
    return argmin(input, axis=dimension, name=name, output_type=output_type)


def diag(diagonal: Any, name: str | None = None) -> Tensor:
    """The tensor with ``diagonal`` on its diagonal: rank k in, rank 2k out, with
    ``out[i1..ik, i1..ik] = diagonal[i1..ik]`` and zeros elsewhere."""
    with name_scope(name, "Diag", [diagonal]):
        x = convert_to_tensor(diagonal)
        shape = array_shape.shape(x)
        square = linalg_diag.matrix_diag(array_shape.reshape(x, [-1]))
        return array_shape.reshape(square, concat([shape, shape], 0))


def diag_part(input: Any, name: str | None = None) -> Tensor:
    """The inverse of ``diag``: rank 2k in (its two halves of equal shape), rank k out."""
    with name_scope(name, "DiagPart", [input]):
        x = convert_to_tensor(input)
        rank = x.shape.rank
        if rank is None or rank % 2:
            raise ValueError(f"DiagPart: input must have an even, known rank, got shape {x.shape}")
        half = array_shape.shape(x)[: rank // 2]
        square = array_shape.reshape(x, [-1, _product(half)])
        return array_shape.reshape(linalg_diag.matrix_diag_part(square), half)


def _product(shape: Tensor) -> Tensor:
    from .math.reduce import reduce_prod

    return reduce_prod(shape)


def linspace(start: Any, stop: Any, num: Any, name: str | None = None) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop``, both included."""
    with name_scope(name, "LinSpace", [start, stop, num]):
        start = convert_to_tensor(start)
        stop = convert_to_tensor(stop, dtype=start.dtype)
        num = convert_to_tensor(num, dtype=dtypes.int32)
        steps = cast(array_transpose.range_(num), start.dtype)
        # One step fewer than values; a single value is ``start`` (TF1 says so too).
        intervals = cast(math_arith.maximum(num - 1, 1), start.dtype)
        return start + steps * ((stop - start) / intervals)


lin_space = linspace


def floor_div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF1's ``floor_div``: ``floordiv``."""
    return math_arith.floordiv(x, y, name=name)


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, finite for large ``|x|``."""
    with name_scope(name, "LogSigmoid", [x]):
        return math_arith.negative(nn.softplus(math_arith.negative(x)))


def accumulate_n(
    inputs: Sequence[Any],
    shape: Any = None,
    tensor_dtype: Any = None,
    name: str | None = None,
) -> Tensor:
    """TF1's ``accumulate_n``: the sum of ``inputs`` (``add_n``; ``shape`` and
    ``tensor_dtype`` are checked hints in TF and unused here)."""
    return math_arith.add_n(inputs, name=name)


def shape_n(
    input: Sequence[Any], out_type: Any = dtypes.int32, name: str | None = None
) -> list[Tensor]:
    """The shapes of several tensors."""
    with name_scope(name, "ShapeN", list(input)):
        return [array_shape.shape(x, out_type=out_type) for x in input]


def initialize_variables(var_list: list[Any], name: str = "init") -> Any:
    """TF1's old name of ``variables_initializer``."""
    return state.variables_initializer(var_list, name=name)


def initialize_local_variables() -> Any:
    """TF1's old name of ``local_variables_initializer``."""
    return state.local_variables_initializer()


def moving_average_variables(scope: str | None = None) -> list[Any]:
    """The variables in the ``moving_average_variables`` collection."""
    return get_default_graph().get_collection(state.GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def mul(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Pre-1.0 name of ``multiply``."""
    return math_arith.multiply(x, y, name=name)


def sub(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Pre-1.0 name of ``subtract``."""
    return math_arith.subtract(x, y, name=name)


def neg(x: Any, name: str | None = None) -> Tensor:
    """Pre-1.0 name of ``negative``."""
    return math_arith.negative(x, name=name)
