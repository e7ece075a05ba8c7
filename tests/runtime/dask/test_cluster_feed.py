"""``ClusterFeed``, the handle a step feeds for a dask array computed on the cluster
(``runtime/dask/feeds.py``): unpickled where no worker holds its key it stays a handle,
and a kernel that converts or indexes it fails with TF1's ``UnavailableError`` naming
the fed tensor (a lost worker, which recovery retries), not a ``TypeError``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.dask.feeds import ClusterFeed


def _unpickled_without_a_worker() -> ClusterFeed:
    handle = ClusterFeed({"tcp://127.0.0.1:1": "key-1"}, (4, 2), np.dtype(np.float64), "x:0")
    out = pickle.loads(pickle.dumps(handle))
    assert isinstance(out, ClusterFeed) and out.shape == (4, 2) and out.ndim == 2
    return out


@pytest.mark.parametrize(
    "use",
    [np.asarray, lambda h: h[1:3], lambda h: np.add(h, 1.0)],
    ids=["asarray", "slice", "ufunc"],
)
def test_a_handle_without_its_value_is_unavailable(use):
    handle = _unpickled_without_a_worker()
    with pytest.raises(tf.errors.UnavailableError, match="Tensor 'x:0' is no longer held"):
        use(handle)
