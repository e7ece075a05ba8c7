"""The ``assert_*`` family (TF1's ``check_ops``): ``assert_equal``, ``assert_less``,
``assert_positive``, ...; each compares elementwise and returns an ``Assert`` op
(``debugging.py``) whose message lists the first offending values as TF1's does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.tensor_util import constant_value
from .debugging import Assert


# --- assert_* -----------------------------------------------------------------------------
def _static_fail(message: str | None, what: str, values: Sequence[tuple[str, Any]]) -> None:
    text = (
        ((message + "\n") if message else "")
        + what
        + "\n"
        + "\n".join(f"{label} = \n{np.asarray(v)}" for label, v in values)
    )
    raise errors.InvalidArgumentError(None, None, text)


def _assert_condition(
    condition: Tensor,
    static: Any,
    message: str | None,
    what: str,
    shown: Sequence[tuple[str, Tensor]],
    data: Sequence[Any] | None,
    summarize: int | None,
    name: str,
) -> Operation:
    if static is not None and not bool(np.all(static)):
        _static_fail(message, what, [(label, constant_value(t)) for label, t in shown])
    if data is None:
        items: list[Any] = ([message] if message else []) + [what]
        for label, t in shown:
            items += [f"{label} = ", t]
        data = items
    return Assert(condition, data, summarize=summarize, name=name)


def _binary_assert(
    kind: str, symbol: str, x: Any, y: Any, data: Any, summarize: Any, message: Any, name: str
) -> Operation:
    graph = get_default_graph()
    with graph.name_scope(name):
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, dtype=x.dtype) if not isinstance(y, Tensor) else y
        if x.dtype != y.dtype:
            raise TypeError(
                f"assert_{kind}: x and y must have one dtype, got {x.dtype.name} and {y.dtype.name}"
            )
        op = graph.create_op("AssertCompare", [x, y], {"kind": kind})
        xs, ys = constant_value(x), constant_value(y)
        static = None if xs is None or ys is None else _COMPARE[kind](np, xs, ys)
        return _assert_condition(
            op.outputs[0],
            static,
            message,
            f"Condition x {symbol} y did not hold element-wise:",
            [(f"x ({x.name})", x), (f"y ({y.name})", y)],
            data,
            summarize,
            "assert",
        )


def _unary_assert(
    kind: str, what: str, x: Any, data: Any, summarize: Any, message: Any, name: str
) -> Operation:
    graph = get_default_graph()
    with graph.name_scope(name):
        x = convert_to_tensor(x)
        zero = convert_to_tensor(np.zeros((), x.dtype.as_numpy_dtype))
        op = graph.create_op("AssertCompare", [x, zero], {"kind": kind})
        xs = constant_value(x)
        static = None if xs is None else _COMPARE[kind](np, xs, 0)
        return _assert_condition(
            op.outputs[0], static, message, what, [(f"x ({x.name})", x)], data, summarize, "assert"
        )


_COMPARE = {
    "equal": lambda xp, a, b: xp.all(xp.equal(a, b)),
    "not_equal": lambda xp, a, b: xp.all(xp.not_equal(a, b)),
    "less": lambda xp, a, b: xp.all(xp.less(a, b)),
    "less_equal": lambda xp, a, b: xp.all(xp.less_equal(a, b)),
    "greater": lambda xp, a, b: xp.all(xp.greater(a, b)),
    "greater_equal": lambda xp, a, b: xp.all(xp.greater_equal(a, b)),
}


def _infer_assert_compare(op: Operation) -> list:
    from ...framework.tensor_shape import broadcast_shapes, scalar

    broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape)
    return [(dtypes.bool, scalar())]


def _assert_compare_kernel(ctx: Any, attrs: dict) -> Any:
    # Fused "all(x OP y)": the assert family's one condition, to a bool scalar.
    xp, fn = ctx.xp, _COMPARE[attrs["kind"]]
    return lambda x, y: xp.asarray(fn(xp, x, y), dtype=bool)


registry.register(
    registry.OpDef(
        "AssertCompare", _infer_assert_compare, _assert_compare_kernel, registry.NOT_DIFFERENTIABLE
    )
)


def assert_equal(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``x == y`` element-wise (statically false: raises now)."""
    return _binary_assert("equal", "==", x, y, data, summarize, message, name or "assert_equal")


def assert_none_equal(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``x != y`` element-wise."""
    return _binary_assert(
        "not_equal", "!=", x, y, data, summarize, message, name or "assert_none_equal"
    )


def assert_less(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``x < y`` element-wise."""
    return _binary_assert("less", "<", x, y, data, summarize, message, name or "assert_less")


def assert_less_equal(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``x <= y`` element-wise."""
    return _binary_assert(
        "less_equal", "<=", x, y, data, summarize, message, name or "assert_less_equal"
    )


def assert_greater(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``x > y`` element-wise."""
    return _binary_assert("greater", ">", x, y, data, summarize, message, name or "assert_greater")


def assert_greater_equal(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``x >= y`` element-wise."""
    return _binary_assert(
        "greater_equal", ">=", x, y, data, summarize, message, name or "assert_greater_equal"
    )


def assert_positive(
    x: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``x > 0`` element-wise."""
    return _unary_assert(
        "greater",
        "Condition x > 0 did not hold element-wise:",
        x,
        data,
        summarize,
        message,
        name or "assert_positive",
    )


def assert_negative(
    x: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``x < 0`` element-wise."""
    return _unary_assert(
        "less",
        "Condition x < 0 did not hold element-wise:",
        x,
        data,
        summarize,
        message,
        name or "assert_negative",
    )


def assert_non_negative(
    x: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``x >= 0`` element-wise."""
    return _unary_assert(
        "greater_equal",
        "Condition x >= 0 did not hold element-wise:",
        x,
        data,
        summarize,
        message,
        name or "assert_non_negative",
    )


def assert_non_positive(
    x: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An ``Assert`` that ``x <= 0`` element-wise."""
    return _unary_assert(
        "less_equal",
        "Condition x <= 0 did not hold element-wise:",
        x,
        data,
        summarize,
        message,
        name or "assert_non_positive",
    )
