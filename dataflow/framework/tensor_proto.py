"""``tf.make_tensor_proto`` and ``tf.make_ndarray``: numpy arrays to and from TF's
``TensorProto``, with the codec dataflow's ``GraphDef`` constants use (TensorBoard's,
which writes TF's encoding: ``tensor_content`` bytes, or typed value fields)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes
from .graph_def import datatype_enum


def _codec() -> Any:
    # Imported on first use, as graph_def.py does (it loads TensorBoard's TF stub).
    from tensorboard.util import tensor_util

    return tensor_util


def make_tensor_proto(
    values: Any,
    dtype: Any = None,
    shape: Any = None,
    verify_shape: bool = False,
    allow_broadcast: bool = False,
) -> Any:
    """A ``TensorProto`` holding ``values`` (``tf.make_tensor_proto``).

    Args:
        values: a Python scalar, nested list or numpy array.
        dtype: the proto's dtype (a ``tf.DType``, numpy dtype or name); default: the
            values' own (Python floats as float32, ints as int32, as TF1).
        shape: the proto's shape; a scalar value fills it (with ``allow_broadcast``,
            a one-element vector too).
        verify_shape: refuse values whose shape is not ``shape``.
        allow_broadcast: let a one-element value fill ``shape``; any other value must
            have that shape.

    Raises:
        TypeError: values not convertible to ``dtype``, or not of ``shape`` (with
            ``verify_shape`` or ``allow_broadcast``).
        ValueError: values that do not fit ``shape``; both ``verify_shape`` and
            ``allow_broadcast``.
    """
    tf_dtype = None
    if dtype is not None:
        tf_dtype = _codec().dtypes.as_dtype(datatype_enum(dtypes.as_dtype(dtype).name))
    if allow_broadcast and verify_shape:
        raise ValueError("allow_broadcast and verify_shape are not both allowed.")
    if allow_broadcast and shape is not None:
        array = np.asarray(values)
        target = tuple(int(d) for d in shape)
        if array.size == 1:  # a scalar or one-element vector fills the shape
            # A numpy value keeps its dtype; a Python one gets TF's default for its kind.
            values = array.reshape(()) if isinstance(values, np.ndarray) else array.item()
        elif array.shape != target:
            raise TypeError(f"Expected Tensor's shape: {target}, but got {array.shape}.")
    return _codec().make_tensor_proto(
        values, dtype=tf_dtype, shape=shape, verify_shape=verify_shape
    )


def make_ndarray(tensor: Any) -> np.ndarray:
    """The numpy array a ``TensorProto`` holds (``tf.make_ndarray``), of its dtype and
    shape (strings as an object array of ``bytes``).

    Raises:
        TypeError: the proto's dtype has no numpy equivalent.
    """
    array: np.ndarray = _codec().make_ndarray(tensor)
    return array
