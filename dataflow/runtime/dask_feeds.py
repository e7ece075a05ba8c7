"""A dask array as a ``feed_dict`` value.

``Session.run(..., feed_dict={x: dask_array})`` computes the array when the step runs,
in this process: with Dask's threaded scheduler for a lazy array (the chunks are
computed here, in parallel, and assembled into one numpy array), or through the
distributed client holding it for an array that refers to futures (persisted on a
cluster). numpy's implicit ``__array__`` would compute it too, but silently and through
whatever scheduler happens to be the default; this module makes the choice explicit and
refuses what cannot be fed (a dask dataframe: feed its ``.to_dask_array()`` or use
``Dataset.from_dask``). For data that should stay on the cluster's workers, read it
with ``tf.data.Dataset.from_dask`` instead (docs/dask_collections.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def is_dask_collection(value: Any) -> bool:
    return type(value).__module__.startswith(("dask.array", "dask.dataframe")) and hasattr(
        value, "__dask_graph__"
    )


def compute_feed(value: Any, name: str) -> np.ndarray:
    """``value`` (a dask array) computed into a numpy array.

    Raises:
        TypeError: ``value`` is a dask collection other than an array.
    """
    if not type(value).__module__.startswith("dask.array"):
        raise TypeError(
            f"Cannot feed a {type(value).__name__} for Tensor '{name}': feed a dask array "
            "(e.g. .to_dask_array(lengths=True)) or read it with tf.data.Dataset.from_dask"
        )
    from distributed import futures_of

    if futures_of(value):
        (out,) = futures_of(value)[0].client.compute([value], sync=True)
        return np.asarray(out)
    return np.asarray(value.compute(scheduler="threads"))
