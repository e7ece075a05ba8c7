"""Sources: constants, placeholders and ``placeholder_with_default``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework import dtypes, errors, registry
from ..framework import graph as graph_module
from ..framework.graph import Tensor, get_default_graph
from ..framework.kernel_context import Folded
from ..framework.tensor_shape import TensorShape, array_shape, as_shape
from .build import apply_op


def _infer_const(op: Any) -> list:
    return [(op.attrs["dtype"], array_shape(op.attrs["value"].shape))]


def _const_kernel(ctx: Any, attrs: dict) -> Folded:
    value = attrs["value"]
    # Strings stay in host memory on every device (cupy has no string arrays).
    return Folded(value if ctx.xp is np or value.dtype.kind in "OSU" else ctx.xp.asarray(value))


registry.register(
    registry.OpDef(
        "Const",
        _infer_const,
        _const_kernel,
        registry.NOT_DIFFERENTIABLE,
        foldable=True,
        plumbing=True,
    )
)


def _default_dtype(value: np.ndarray, original: Any) -> dtypes.DType:
    """TF1's inference: Python floats are float32, ints int32 (int64 if too big)."""
    if isinstance(original, np.ndarray) or isinstance(original, np.generic):
        return dtypes.as_dtype(value.dtype)
    if value.dtype == np.float64:
        return dtypes.float32
    if value.dtype == np.int64:
        if value.size and (
            value.max() > np.iinfo(np.int32).max or value.min() < np.iinfo(np.int32).min
        ):
            return dtypes.int64
        return dtypes.int32
    return dtypes.as_dtype(value.dtype)


def constant(
    value: Any,
    dtype: Any = None,
    shape: Any = None,
    name: str | None = "Const",
    verify_shape: bool = False,
) -> Tensor:
    """Creates a constant tensor.

    Args:
        value: a Python scalar, (nested) list, or numpy array.
        dtype: element type; inferred from ``value`` when ``None`` (Python floats give
            float32 and ints int32, as in TF1).
        shape: optional shape; a scalar ``value`` is broadcast to it, a value of the
            same size is reshaped, a smaller one padded with its last element (TF1's
            graph-mode rule).
        verify_shape: refuse a ``value`` whose shape is not ``shape`` (``TypeError``).
        name: the op name (``None``: "Const").

    Raises:
        TypeError: ``value`` cannot be represented in ``dtype``.
        ValueError: ``value`` is ``None``, ragged, or has more elements than ``shape``.
    """
    if name is None:
        name = "Const"
    if type(value) is float and shape is None:
        # The common case (``x * 0.5``), taken straight to what the general path below
        # ends with: a float64 array cast to a floating dtype, made read-only.
        dt = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype)
        if dt.is_floating:
            array = np.array(value).astype(dt.as_numpy_dtype)
            array.flags.writeable = False
            return (
                get_default_graph()
                .create_op("Const", [], {"value": array, "dtype": dt}, name=name)
                .outputs[0]
            )
    if isinstance(value, Tensor):
        raise TypeError(f"constant() needs a Python or numpy value, got the tensor {value.name}")
    if value is None:
        raise ValueError(f"constant '{name}': None values not supported.")
    try:
        array = np.asarray(value)
    except ValueError as exc:
        raise ValueError(f"constant '{name}': {exc}") from None
    if array.dtype.kind in "SU" or array.dtype == object:
        # numpy's fixed-width bytes drop trailing NULs (b"a\x00" -> b"a"): keep the
        # Python strings themselves, as TF does.
        array = _string_array(value, array, name)
    if array.dtype == object and dtype is None:
        dtype = dtypes.string
    if dtype is None:
        dt = _default_dtype(array, value)
    else:
        dt = dtypes.as_dtype(dtype)
    if dt.as_numpy_dtype is not None and dt != dtypes.string:
        if array.dtype.kind == "f" and dt.is_integer and not np.all(np.mod(array, 1) == 0):
            raise TypeError(
                f"Expected {dt.name}, got {value!r} of type "
                f"'{type(value).__name__}' instead (constant '{name}')."
            )
        if array.dtype.kind in "US" or array.dtype == object:
            raise TypeError(f"constant '{name}': cannot convert strings to {dt.name}")
        array = array.astype(dt.as_numpy_dtype)
    elif dt == dtypes.string:
        if array.dtype != object and array.size:  # numbers or bools: TF1 refuses
            raise TypeError(
                f"Expected string, got {value!r} of type '{type(value).__name__}' "
                f"instead (constant '{name}')."
            )
        # TF strings are bytes: hold them as an object array of bytes.
        array = np.array(
            [v.encode() if isinstance(v, str) else bytes(v) for v in array.reshape(-1).tolist()]
            or [],
            dtype=object,
        ).reshape(array.shape)
    if shape is not None:
        shape = as_shape(shape).as_list()
        size = int(np.prod(shape, dtype=np.int64))
        if verify_shape and array.shape != tuple(shape):
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {array.shape}.")
        if array.size == 1 and array.shape != tuple(shape):
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == size:
            array = array.reshape(shape)
        elif array.size > size or array.size == 0:
            raise ValueError(
                f"Too many elements provided. Takes at most {size}, but got "
                f"{array.size} (constant '{name}' of shape {tuple(shape)})."
            )
        else:
            # TF1's graph-mode rule: a shorter value is padded with its last element.
            flat = array.reshape(-1)
            array = np.concatenate([flat, np.repeat(flat[-1:], size - flat.size)]).reshape(shape)
    array = np.array(array, copy=True)
    array.flags.writeable = False
    return (
        get_default_graph()
        .create_op("Const", [], {"value": array, "dtype": dt}, name=name)
        .outputs[0]
    )


# ``convert_to_tensor`` calls ``constant`` itself (with ``name=None`` for "Const"): a
# wrapper would add a frame to every constant's ``user_frame`` walk.
graph_module.register_constant_builder(constant)


# --- placeholders --------------------------------------------------------------------------
def _infer_placeholder(op: Any) -> list:
    return [(op.attrs["dtype"], op.attrs["shape"])]


def _placeholder_kernel(ctx: Any, attrs: dict) -> Any:
    # Reached only when a step needs the placeholder and nobody fed it.
    shape = attrs["shape"]
    shape_str = (
        "<unknown>"
        if shape.rank is None
        else "[" + ",".join("?" if d is None else str(d) for d in shape.as_tuple()) + "]"
    )
    raise errors.InvalidArgumentError(
        None,
        ctx.op_name,
        f"You must feed a value for placeholder tensor '{ctx.op_name}' with dtype "
        f"{attrs['dtype'].name} and shape {shape_str}",
    )


registry.register(
    registry.OpDef(
        "Placeholder",
        _infer_placeholder,
        _placeholder_kernel,
        registry.NOT_DIFFERENTIABLE,
        # Never folded or merged; running one alone does nothing but fail unfed.
        stateful=True,
        effectful=False,
        feed_only=True,
    )
)


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Tensor:
    """A tensor whose value must be fed with ``feed_dict`` when a step needs it.

    Args:
        dtype: element type.
        shape: optional static shape; ``None`` dims are unknown, ``None`` for the whole
            shape means unknown rank. Fed values are checked against it.
        name: the op name.
    """
    return (
        get_default_graph()
        .create_op(
            "Placeholder",
            [],
            {"dtype": dtypes.as_dtype(dtype), "shape": TensorShape(shape)},
            name=name,
        )
        .outputs[0]
    )


def _infer_placeholder_with_default(op: Any) -> list:
    t = op.inputs[0]
    shape = op.attrs["shape"]
    if not shape.is_compatible_with(t.shape):
        raise ValueError(
            f"default value of shape {t.shape} is not compatible with the placeholder shape {shape}"
        )
    return [(t.dtype, shape)]


def _identity_kernel(ctx: Any, attrs: dict) -> Any:
    return _identity


def _identity(x: Any) -> Any:
    return x


def _grad_passthrough(op: Any, grad: Any) -> list:
    return [grad]


registry.register(
    registry.OpDef(
        "PlaceholderWithDefault",
        _infer_placeholder_with_default,
        _identity_kernel,
        _grad_passthrough,
    )
)


def placeholder_with_default(input: Any, shape: Any, name: str | None = None) -> Tensor:
    """A placeholder that passes ``input`` through when it is not fed."""
    return apply_op("PlaceholderWithDefault", [input], {"shape": TensorShape(shape)}, name)


def identity_kernel_factory(ctx: Any, attrs: dict) -> Any:
    """Kernel factory of every op that passes its input through unchanged."""
    return _identity


def _string_array(value: Any, array: np.ndarray, name: str) -> np.ndarray:
    """``value`` as an object array of its own ``str``/``bytes`` elements.

    Raises:
        TypeError: an element is neither (``array`` holds other Python objects).
    """
    strings = np.asarray(value, dtype=object)
    if strings.shape != array.shape or not all(
        isinstance(v, (bytes, str)) for v in strings.reshape(-1).tolist()
    ):
        raise TypeError(f"constant '{name}': cannot make a tensor from {value!r}")
    return strings
