"""``tf.create_partitioned_variables``: TF1's deprecated helper for a variable split
along one axis, as a list of its parts.

It is ``get_variable`` with a fixed partitioner (``slicing``, one part count per
dimension, at most one above 1) in a variable scope named ``name`` (default
``PartitionedVariable``, made unique): the parts are ``<scope>/part_<i>``, each
initialized with its slice of ``initializer`` when that is a value, or by calling the
initializer with the part's shape (``store.py`` builds them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor, get_default_graph
from .scope import get_variable_scope
from .scope_context import variable_scope


def create_partitioned_variables(
    shape: Any,
    slicing: Any,
    initializer: Any,
    dtype: Any = dtypes.float32,
    trainable: bool = True,
    collections: Any = None,
    name: str | None = None,
    reuse: Any = None,
) -> list:
    """The parts of a variable of ``shape`` split ``slicing[i]`` ways along dimension
    ``i`` (one dimension at most), as a list of variables.

    Args:
        shape: the whole variable's shape (rank >= 1, fully defined).
        slicing: how many parts per dimension, e.g. ``[4, 1]``.
        initializer: a value (or tensor) of the whole shape, sliced for each part, or
            an initializer.
        dtype: the parts' dtype.
        trainable: add the parts to ``TRAINABLE_VARIABLES``.
        collections: their collections (default ``[GLOBAL_VARIABLES]``).
        name: the scope naming them (default ``PartitionedVariable``).
        reuse: reuse an existing partitioned variable of that name.

    Raises:
        ValueError: ``shape`` and ``slicing`` differ in length, ``shape`` is a
            scalar, or more than one dimension is sliced.
    """
    shape, slicing = list(shape), list(slicing)
    if len(shape) != len(slicing):
        raise ValueError(
            "The 'shape' and 'slicing' of a partitioned Variable must have the length: "
            f"shape: {shape}, slicing: {slicing}"
        )
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    dtype = dtypes.as_dtype(dtype)
    if not callable(initializer) and not isinstance(initializer, Tensor):
        # A value is the whole variable's, in the parts' dtype (TF1 converts it so).
        initializer = np.asarray(initializer, dtype=dtype.as_numpy_dtype)
    parent = get_variable_scope()
    with variable_scope(name, "PartitionedVariable", reuse=reuse) as scope:
        # The variable is named after the scope itself: ask the scope outside for the
        # scope's last name component.
        whole = parent.get_variable(
            get_default_graph().variable_store,
            scope.name.rsplit("/", 1)[-1],
            shape=shape,
            dtype=dtype,
            initializer=initializer,
            trainable=trainable,
            collections=collections,
            partitioner=lambda **unused: slicing,
            reuse=scope.reuse,
        )
    return list(whole)
