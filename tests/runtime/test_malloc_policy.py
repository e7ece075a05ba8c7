"""A session's process reuses memory for large arrays (``execute/malloc_policy.py``):
each step's blocks are not faulted in page by page again, unless the process's malloc
settings are someone's own choice or ``DATAFLOW_MALLOC=keep``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dataflow.runtime.execute import malloc_policy

PAGES = 768  # a 3 MiB block: over glibc's 128 KiB mmap threshold, under numpy's huge pages

# Page faults (minor: fresh zeroed pages) while a thread allocates and touches a 3 MiB
# block ten times, after once to warm up. ``out`` holds the count.
FAULTS = """
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

_SESSION_THEN_FAULTS = (
    "import dataflow as tf\n"
    "with tf.Session() as sess:\n"
    "    sess.run(tf.constant(1.0))\n" + FAULTS + "print(out[0])\n"
)


def _faults_in_new_process(**environ: str) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.pop(malloc_policy.OPT_OUT, None)
    env.update(environ)
    done = subprocess.run(
        [sys.executable, "-c", _SESSION_THEN_FAULTS], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not malloc_policy._glibc(), reason="mallopt is glibc's")
def test_a_session_makes_its_process_reuse_large_blocks():
    """Under Dask's worker setting (which refaults every block over 128 KiB), a process
    that opened a session faults (almost) no fresh pages for ten 3 MiB blocks; opted
    out, it faults every page of every block."""
    dask_setting = {malloc_policy.DASK_VARIABLE: "65536"}
    assert _faults_in_new_process(**dask_setting) < PAGES
    kept = _faults_in_new_process(**dask_setting, **{malloc_policy.OPT_OUT: "keep"})
    assert kept >= 9 * PAGES


@pytest.mark.parametrize(
    "environ, ours",
    [
        ({}, True),  # glibc's defaults
        ({"MALLOC_TRIM_THRESHOLD_": "65536"}, True),  # Dask's nanny default
        ({"MALLOC_TRIM_THRESHOLD_": "1000000"}, False),  # someone's choice
        ({"MALLOC_TRIM_THRESHOLD_": "65536", "MALLOC_ARENA_MAX": "2"}, False),
        ({"MALLOC_ARENA_MAX": "2"}, False),
        ({"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}, False),
        ({"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2"}, True),  # not malloc's
        ({"DATAFLOW_MALLOC": "keep"}, False),
    ],
)
def test_only_default_settings_are_replaced(environ, ours):
    assert malloc_policy.ours_to_set(environ) is ours
