"""Workers started by Dask's nanny reuse memory for large arrays (``malloc_policy``):
each step's fed batch and kernel outputs are not faulted in page by page again."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.dask import malloc_policy

pytestmark = pytest.mark.distributed

PAGES = 768  # a 3 MiB block: over glibc's 128 KiB mmap threshold, under numpy's huge pages

# Page faults (minor: fresh zeroed pages) while a thread allocates and touches a 3 MiB
# block ten times, after once to warm up; run on a worker and in a bare process.
_FAULTS = """
import resource, threading, numpy as np
def once():
    block = np.empty(3 << 20, np.uint8)
    block[::4096] = 1
def faults():
    once()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        once()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
out = []
thread = threading.Thread(target=lambda: out.append(faults()))
thread.start()
thread.join()
"""


def _faults_here(dask_worker=None):
    scope: dict = {}
    exec(_FAULTS, scope)
    return scope["out"][0], os.environ.get(malloc_policy.DASK_VARIABLE)


def test_a_prepared_worker_reuses_large_blocks(csess):
    """The worker runs with Dask's ``MALLOC_TRIM_THRESHOLD_``; once a session prepared
    it, ten 3 MiB blocks fault in (almost) no fresh pages. The same code in a process
    with only Dask's setting faults every page of every block."""
    x = tf.placeholder(tf.float32, [None])
    csess.run(tf.reduce_sum(x), {x: np.ones(8, np.float32)})  # prepares the workers
    for address, (faults, setting) in csess.backend.client.run(_faults_here).items():
        assert setting == "65536", address  # Dask's nanny default, as on any cluster
        assert faults < PAGES, (address, faults)
    env = {**os.environ, malloc_policy.DASK_VARIABLE: "65536"}
    code = _FAULTS + "print(out[0])"
    bare = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert int(bare.stdout) >= 9 * PAGES, bare.stderr


@pytest.mark.parametrize(
    "environ, expected",
    [
        ({"MALLOC_TRIM_THRESHOLD_": "65536"}, True),
        ({}, False),  # glibc's own dynamic thresholds: nothing to change
        ({"MALLOC_TRIM_THRESHOLD_": "1000000"}, False),  # someone's choice
        ({"MALLOC_TRIM_THRESHOLD_": "65536", "MALLOC_ARENA_MAX": "2"}, False),
        (
            {"MALLOC_TRIM_THRESHOLD_": "65536", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"},
            False,
        ),
    ],
)
def test_only_dasks_own_setting_is_replaced(environ, expected):
    assert malloc_policy.dasks_setting_only(environ) is expected


def test_the_opt_out_keeps_dasks_setting(monkeypatch):
    monkeypatch.setenv(malloc_policy.DASK_VARIABLE, "65536")
    monkeypatch.setenv("DATAFLOW_MALLOC", "dask")
    monkeypatch.setattr(malloc_policy, "_applied", False)
    assert malloc_policy.apply() is False
