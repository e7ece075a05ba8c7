"""``tf.contrib.util``: ``TensorProto``s from arrays and back (TensorBoard's protobuf,
the one ``tf.Summary`` uses), and ``constant_value``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework import dtypes
from ..framework.tensor_util import constant_value as constant_value
from .missing import contrib_hook


def make_tensor_proto(
    values: Any,
    dtype: Any = None,
    shape: Any = None,
    verify_shape: bool = False,
    allow_broadcast: bool = False,
) -> Any:
    """A ``TensorProto`` holding ``values`` (as ``dtype``, in ``shape`` if given; with
    ``allow_broadcast``, a scalar or length-1 value fills ``shape``).

    Raises:
        ValueError: ``verify_shape`` and ``allow_broadcast`` together, or (with
            ``verify_shape``) values of another shape.
        TypeError: values that do not convert to ``dtype``.
    """
    from tensorboard.util import tensor_util  # loaded on first use, not with dataflow

    if verify_shape and allow_broadcast:
        raise ValueError("allow_broadcast and verify_shape are not both allowed.")
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).as_numpy_dtype
    if allow_broadcast and shape is not None:
        values = np.broadcast_to(np.asarray(values, dtype=dtype), shape)
    return tensor_util.make_tensor_proto(
        values, dtype=dtype, shape=shape, verify_shape=verify_shape
    )


def make_ndarray(tensor: Any) -> np.ndarray:
    """The numpy array a ``TensorProto`` holds."""
    from tensorboard.util import tensor_util

    return tensor_util.make_ndarray(tensor)


__getattr__ = contrib_hook("util", __name__)
