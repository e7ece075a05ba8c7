"""A worker's stages run their kernels on the worker's threads (``worker_state``).

Dask's nanny starts every worker with ``OPENBLAS_NUM_THREADS=1`` (and OpenMP's and MKL's
alike) for the sake of its own parallel tasks, so until the worker gave its stages an
intra-op budget every kernel of a distributed step ran on one thread, where TF1's
servers use every core. Now a stage's kernels split their work over the worker's Dask
``nthreads`` (at most the cores it may use), BLAS held to one thread meanwhile, as an
embedded session's step does.
"""

from __future__ import annotations

import os

import dask
import numpy as np
import pytest
from threadpoolctl import threadpool_info

import dataflow as tf
from dataflow._util import intra_op

from .conftest import started_cluster


def _cores() -> int:
    return len(os.sched_getaffinity(0))


def _blas_threads() -> int:
    return min(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


def _in_a_step(cluster, probe):
    """What ``probe()`` returns inside a stage of a step on worker 0 of ``cluster``."""
    graph = tf.Graph()
    with graph.as_default(), tf.device("/job:worker/task:0"):
        seen = tf.py_func(lambda: np.array(probe(), np.int32), [], tf.int32)
    with tf.Session(cluster, graph=graph) as sess:
        return int(sess.run(seen))


@pytest.mark.parametrize("resident", [True, False], ids=["resident", "task-graph"])
def test_a_stage_gets_the_workers_threads(clean_cluster, resident):
    # The shared cluster's workers have Dask's default two threads here.
    (nthreads,) = set(clean_cluster.client.nthreads().values())
    (cores,) = set(clean_cluster.client.run(_cores).values())
    graph = tf.Graph()
    with graph.as_default(), tf.device("/job:worker/task:1"):
        seen = tf.py_func(lambda: np.array(intra_op.threads(), np.int32), [], tf.int32)
    config = tf.ConfigProto(resident_steps=resident)
    with tf.Session(clean_cluster, graph=graph, config=config) as sess:
        assert sess.run(seen) == min(nthreads, cores)
    # Outside a stage the worker's threads are their own (Dask's tasks, its loop).
    assert set(clean_cluster.client.run(intra_op.threads).values()) == {1}


def test_one_dask_thread_means_one_kernel_thread():
    with started_cluster(ps=0, worker=1, threads_per_worker=1) as cluster:
        assert _in_a_step(cluster, intra_op.threads) == 1


def test_blas_runs_on_one_thread_inside_a_stage_and_as_set_outside(monkeypatch):
    # A worker whose BLAS the user set to two threads (Dask's nanny sets one before the
    # worker starts unless its configuration says otherwise): its stages split their own
    # work, so BLAS must not thread beside them.
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    for name in names:  # (this suite sets one thread for its own process)
        monkeypatch.setenv(name, "2")
    with (
        dask.config.set({f"distributed.nanny.pre-spawn-environ.{name}": 2 for name in names}),
        started_cluster(ps=0, worker=1, threads_per_worker=2) as cluster,
    ):
        assert set(cluster.client.run(_blas_threads).values()) == {2}
        assert _in_a_step(cluster, _blas_threads) == 1
        assert set(cluster.client.run(_blas_threads).values()) == {2}


def test_split_kernels_on_a_worker_give_numpys_values(clean_cluster):
    # Products large enough to split (``ops/parallel_products``) and a convolution with
    # its gradients, on a worker with two threads: the values of one thread's numpy.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((512, 768)).astype(np.float32)
    b = rng.standard_normal((768, 640)).astype(np.float32)
    images = rng.standard_normal((16, 24, 24, 8)).astype(np.float32)
    filters = rng.standard_normal((3, 3, 8, 16)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default(), tf.device("/job:worker/task:0"):
        product = tf.matmul(tf.constant(a), tf.constant(b))
        x, w = tf.constant(images), tf.constant(filters)
        conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
        dx, dw = tf.gradients(tf.reduce_sum(conv * conv), [x, w])
    with tf.Session(clean_cluster, graph=graph) as sess:
        got, got_conv, got_dx, got_dw = sess.run([product, conv, dx, dw])
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-3)
    # The convolution as a sum over taps (float64), its gradients by the chain rule.
    padded = np.pad(images.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    want = np.zeros((16, 24, 24, 16))
    for i in range(3):
        for j in range(3):
            want += padded[:, i : i + 24, j : j + 24, :] @ filters[i, j].astype(np.float64)
    scale = np.abs(want).max()
    np.testing.assert_allclose(got_conv, want, rtol=1e-4, atol=1e-5 * scale)
    upstream = 2 * want
    want_dw = np.zeros((3, 3, 8, 16))
    want_dpadded = np.zeros_like(padded)
    for i in range(3):
        for j in range(3):
            window = padded[:, i : i + 24, j : j + 24, :]
            want_dw[i, j] = np.einsum("nhwc,nhwo->co", window, upstream)
            want_dpadded[:, i : i + 24, j : j + 24, :] += upstream @ filters[i, j].T
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-4, atol=1e-5 * np.abs(want_dw).max())
    want_dx = want_dpadded[:, 1:-1, 1:-1, :]
    np.testing.assert_allclose(got_dx, want_dx, rtol=1e-4, atol=1e-5 * np.abs(want_dx).max())
