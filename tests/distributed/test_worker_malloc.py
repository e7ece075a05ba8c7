"""Dask workers reuse memory for large arrays once dataflow prepared them
(``execute/malloc_policy.py``), although Dask's nanny started them with a setting that
refaults every block over 128 KiB."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.execute import malloc_policy

from ..runtime.test_malloc_policy import FAULTS, PAGES

pytestmark = pytest.mark.distributed


def _faults_here(dask_worker=None):
    scope: dict = {}
    exec(FAULTS, scope)
    return scope["out"][0], os.environ.get(malloc_policy.DASK_VARIABLE)


@pytest.mark.skipif(not malloc_policy._glibc(), reason="mallopt is glibc's")
def test_a_prepared_worker_reuses_large_blocks(csess):
    """Each worker runs with Dask's ``MALLOC_TRIM_THRESHOLD_``; once a session prepared
    it, ten 3 MiB blocks fault in (almost) no fresh pages (in a process with only Dask's
    setting, every page of every block: ``tests/runtime/test_malloc_policy.py``)."""
    x = tf.placeholder(tf.float32, [None])
    csess.run(tf.reduce_sum(x), {x: np.ones(8, np.float32)})  # prepares the workers
    for address, (faults, setting) in csess.backend.client.run(_faults_here).items():
        assert setting == "65536", address  # Dask's nanny default, as on any cluster
        assert faults < PAGES, (address, faults)
