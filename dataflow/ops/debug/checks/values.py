"""Value and dtype checks: ``assert_near``, ``is_non_decreasing``,
``is_strictly_increasing``, ``is_numeric_tensor``, ``assert_type``, ``assert_integer``,
``assert_same_float_dtype``, ``assert_proper_iterable``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ....framework import dtypes
from ....framework.graph import Operation, Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.sparse_tensor import SparseTensor
from ... import array as array_ops
from ... import math as math_ops
from ...control.group import no_op
from ..debugging import Assert
from .ranks import message_prefix


def _dtype_str(dtype: dtypes.DType) -> str:
    """A dtype as TF's messages print it."""
    return f"<dtype: '{dtype.name}'>"


def assert_near(
    x: Any,
    y: Any,
    rtol: Any = None,
    atol: Any = None,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``|x - y| < atol + rtol * |y|`` element-wise; ``rtol`` and
    ``atol`` default to ten machine epsilons of the (real) dtype."""
    with name_scope(name, "assert_near", [x, y, rtol, atol, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        real = x.dtype
        if real.is_complex:
            real = dtypes.float32 if real == dtypes.complex64 else dtypes.float64
        eps = float(np.finfo(real.as_numpy_dtype).eps)
        rtol_t = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=real)
        atol_t = convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=real)
        if data is None:
            data = [
                message_prefix(message),
                f"x and y not equal to tolerance rtol = {rtol_t}, atol = {atol_t}",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        tolerance = atol_t + rtol_t * math_ops.abs(y)
        condition = math_ops.reduce_all(math_ops.less(math_ops.abs(x - y), tolerance))
        return Assert(condition, data, summarize=summarize)


def is_numeric_tensor(tensor: Any) -> bool:
    """Whether ``tensor`` is a ``Tensor`` of a numeric dtype (integer, floating, complex
    or quantized; not bool or string)."""
    if not isinstance(tensor, Tensor):
        return False
    d = tensor.dtype
    quantized = d.name.startswith(("qint", "quint"))
    return bool(d.is_integer or d.is_floating or d.is_complex or quantized)


def _neighbours(x: Any) -> tuple[Tensor, Tensor]:
    flat = array_ops.reshape(convert_to_tensor(x, name="x"), [-1])
    if not is_numeric_tensor(flat):
        raise TypeError(
            "Expected x to be numeric, instead found: "
            f'Tensor("{flat.name}", shape={tuple(flat.shape.as_list())}, dtype={flat.dtype.name})'
        )
    return flat[:-1], flat[1:]


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """Whether the elements of ``x`` (flattened, row-major) never decrease; ``True``
    for fewer than two elements.

    Raises:
        TypeError: ``x`` is not numeric.
    """
    with name_scope(name, "is_non_decreasing", [x]):
        before, after = _neighbours(x)
        return math_ops.reduce_all(math_ops.less_equal(before, after))


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """Whether the elements of ``x`` (flattened, row-major) strictly increase; ``True``
    for fewer than two elements.

    Raises:
        TypeError: ``x`` is not numeric.
    """
    with name_scope(name, "is_strictly_increasing", [x]):
        before, after = _neighbours(x)
        return math_ops.reduce_all(math_ops.less(before, after))


def assert_type(
    tensor: Any, tf_type: Any, message: str | None = None, name: str | None = None
) -> Operation:
    """A ``no_op`` once ``tensor``'s dtype is checked to be ``tf_type``.

    Raises:
        TypeError: another dtype.
    """
    tf_type = dtypes.as_dtype(tf_type)
    with name_scope(name, "assert_type", [tensor]):
        if not isinstance(tensor, SparseTensor):
            tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype != tf_type:
            label = getattr(tensor, "name", "tensor")
            raise TypeError(
                f"{message_prefix(message)}{label} must be of type {tf_type!r}; "
                f"got {tensor.dtype!r}"
            )
        return no_op("statically_determined_correct_type")


def assert_integer(x: Any, message: str | None = None, name: str | None = None) -> Operation:
    """A ``no_op`` once ``x``'s dtype is checked to be an integer one.

    Raises:
        TypeError: a non-integer dtype.
    """
    with name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(
                f'{message_prefix(message)}Expected "x" to be integer type.  Found: {x.name} '
                f"of dtype {_dtype_str(x.dtype)}"
            )
        return no_op("statically_determined_was_integer")


def assert_same_float_dtype(tensors: Any = None, dtype: Any = None) -> dtypes.DType:
    """The one floating point dtype of ``tensors`` (and ``dtype``, when given);
    ``float32`` when there is nothing to go by.

    Raises:
        ValueError: the dtypes differ, or the common one is not floating point.
    """
    expected = dtypes.as_dtype(dtype) if dtype is not None else None
    first_name = None
    for item in tensors or ():
        if item is None:
            continue
        item_type = item.dtype.base_dtype
        if expected is None:
            expected, first_name = item_type, getattr(item, "name", str(item))
        elif item_type != expected:
            label = getattr(item, "name", str(item))
            raise ValueError(
                f"{label}, type={_dtype_str(item_type)}, must be of the same type "
                f"({_dtype_str(expected)})" + (f" as {first_name}" if first_name else "") + "."
            )
    if expected is None:
        return dtypes.float32
    if not expected.is_floating:
        raise ValueError(f"Expected floating point type, got {_dtype_str(expected)}.")
    return expected


def assert_proper_iterable(values: Any) -> None:
    """Checks that ``values`` is an iterable of items, not a tensor, array or string.

    Raises:
        TypeError: ``values`` is a ``Tensor``, ``SparseTensor``, ``np.ndarray``, ``str``
            or ``bytes``, or not iterable.
    """
    if isinstance(values, (Tensor, SparseTensor, np.ndarray, str, bytes)):
        raise TypeError(
            f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}'
        )
    if not isinstance(values, Iterable) and not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')
