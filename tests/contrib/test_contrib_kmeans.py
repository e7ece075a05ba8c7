"""``tf.contrib.factorization.KMeans`` against TF's own k-means graph.

TF 2.21 has no ``tf.contrib``, but it keeps the class TF 1.15's contrib ``KMeans``
matches (``tensorflow.python.ops.clustering_ops.KMeans``: same
variables, init op, distances and update rules; TF 1.15's contrib version also returns
the ``clusters`` variable, as the 7-tuple the public programs unpack). Given initial
centers (or a batch no larger than the centers missing), everything is deterministic and
compared value for value, step by step, except where TF's own graph leaves an order open
(``assert_full_batch_same``, ``test_mini_batch_training``). The random initializations
use dataflow's random stream, so they are checked by what they must produce: input
rows, one center per group of identical points for k-means++ and k-MC2 (a point at
distance 0 from a chosen center has probability 0), and TF's kernel choosing the same
groups.
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = [pytest.mark.tf, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
clustering_ops = pytest.importorskip("tensorflow.python.ops.clustering_ops")

RNG = np.random.default_rng(28)
MEANS = np.array([[0, 0, 1], [4, 4, 0], [0, 5, 2], [5, 0, 3]], np.float32)
DATA = (MEANS[RNG.integers(0, 4, 96)] + RNG.normal(0, 0.6, (96, 3))).astype(np.float32)
START = DATA[[0, 1, 2, 3]] + np.float32(0.5)


def run_program(ours, distance_metric, use_mini_batch, steps_per_iteration, shards, initial):
    """The aymericdamien kmeans program's steps on ``DATA`` fed in batches of 24 (all of
    it for full batch): returns, per step, the fetched values and the centers."""
    lib = dataflow if ours else tf1
    with lib.Graph().as_default():
        xs = [lib.placeholder(lib.float32, [None, 3]) for _ in range(shards)]
        cls = dataflow.contrib.factorization.KMeans if ours else clustering_ops.KMeans
        kmeans = cls(
            inputs=xs if shards > 1 else xs[0],
            num_clusters=4,
            initial_clusters=initial,
            distance_metric=distance_metric,
            use_mini_batch=use_mini_batch,
            mini_batch_steps_per_iteration=steps_per_iteration,
        )
        graph = kmeans.training_graph()
        if ours:
            all_scores, cluster_idx, scores, initialized, centers, init_op, train_op = graph
        else:
            all_scores, cluster_idx, scores, initialized, init_op, train_op = graph
            centers = [v for v in tf1.global_variables() if v.op.name == "clusters"][0]
        avg_distance = lib.reduce_mean(scores[0])
        out = []
        with lib.Session() as sess:
            sess.run(lib.global_variables_initializer())
            batches = np.split(DATA, 4) if use_mini_batch else [DATA] * 4
            first = {x: part for x, part in zip(xs, np.array_split(batches[0], shards))}
            sess.run(init_op, first)
            out.append((sess.run(initialized), sess.run(centers)))
            for batch in batches * 2:
                feed = {x: part for x, part in zip(xs, np.array_split(batch, shards))}
                fetched = sess.run([all_scores, cluster_idx, scores, avg_distance, train_op], feed)[
                    :-1
                ]
                out.append((fetched, sess.run(centers)))
        return out


def assert_same(ours, theirs, path="out"):
    if isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{path}[{i}]")
    else:
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, path
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-5, err_msg=path)


def normalized(a):
    return a / np.sqrt(np.maximum((a * a).sum(-1, keepdims=True), 1e-12))


def mini_batch_reference(metric, steps_per_iteration, batches):
    """TF 1.15's documented mini-batch rule in numpy: each step assigns the batch with
    the centers as the step starts, then (with ``steps_per_iteration > 1``) counts down
    and syncs the updated copy into ``clusters``, then moves each center ``x`` with count
    ``n`` and ``k`` new points by ``(sum d_i - k x) / (n + k)``."""
    cosine = metric == "cosine"
    centers = normalized(START) if cosine else START.copy()
    synced = steps_per_iteration > 1
    updated = centers.copy()
    counts = np.zeros(4) if synced else np.ones(4)
    left = steps_per_iteration
    out = []
    for batch in batches:
        x = normalized(batch) if cosine else batch
        used = normalized(centers) if cosine and not synced else centers
        nearest = ((x[:, None] - used[None]) ** 2).sum(-1) * (0.5 if cosine else 1)
        idx = nearest.argmin(1)
        if synced and left <= 0:
            left, counts = steps_per_iteration - 1, np.zeros(4)
            centers = normalized(updated) if cosine else updated.copy()
        elif synced:
            left -= 1
        target = updated if synced else centers
        for j in np.unique(idx):
            k = (idx == j).sum()
            target[j] += (x[idx == j].sum(0) - k * target[j]) / (counts[j] + k)
            counts[j] += k
        out.append((idx, nearest.min(1), centers.copy()))
    return out


def full_batch_distances(metric, points, centers):
    """``all_scores`` of ``points`` against ``centers`` as TF's graph defines them."""
    points, centers = points.astype(np.float64), centers.astype(np.float64)
    if metric == "cosine":
        return 1 - normalized(points) @ normalized(centers).T
    return ((points[:, None] - centers[None]) ** 2).sum(-1)


def assert_full_batch_same(ours, theirs, metric, shards):
    """Every step's centers, nearest clusters, scores and mean distance as TF's; and
    ``all_scores`` as the distances to the step's starting centers (numpy), and as TF's
    in the first step. (TF's graph gives ``all_scores`` no order against the ``assign``
    of the centers, since the nearest clusters come from a kernel of their own: on some
    CPUs TF 2.21 computes it after the assign in some steps and not others, and in CI
    during it, with distances that were neither the old centers' nor the new ones', a
    read of rows being written. So TF's later ``all_scores`` are no reference; dataflow
    reads the centers as the step starts, so its ``all_scores`` is always the distances
    to the step's starting centers.)"""
    assert_same(ours[0], theirs[0], "out[0]")
    assert len(ours) == len(theirs)
    parts = np.array_split(DATA, shards)
    for i in range(1, len(theirs)):
        (fetched, centers), (tf_fetched, tf_centers) = ours[i], theirs[i]
        assert_same(fetched[1:], tf_fetched[1:], f"out[{i}] fetched")
        assert_same(centers, tf_centers, f"out[{i}] centers")
        for s, part in enumerate(parts):
            before = full_batch_distances(metric, part, ours[i - 1][1])
            np.testing.assert_allclose(fetched[0][s], before, rtol=1e-4, atol=1e-3)
            assert np.asarray(fetched[0][s]).dtype == np.asarray(tf_fetched[0][s]).dtype


@pytest.mark.parametrize("distance_metric", ["squared_euclidean", "cosine"])
def test_full_batch_training_matches_tf(distance_metric):
    args = (distance_metric, False, 1, 1, START)
    assert_full_batch_same(run_program(True, *args), run_program(False, *args), distance_metric, 1)


@pytest.mark.parametrize("distance_metric", ["squared_euclidean", "cosine"])
@pytest.mark.parametrize("steps_per_iteration", [1, 3])
def test_mini_batch_training(distance_metric, steps_per_iteration):
    """The init is TF's; every step follows the documented rule. (TF's graph reads the
    centers and the counts with no order against their ``scatter_add`` in the same
    step: TF 2.21's run reads both after it, so its distances are to the moved centers
    and its rate is ``1 / (n + 2k)``; that race is not the reference. dataflow reads
    them as the step starts.)"""
    args = (distance_metric, True, steps_per_iteration, 1, START)
    ours = run_program(True, *args)
    theirs = run_program(False, *args)
    assert_same(ours[0], theirs[0])
    reference = mini_batch_reference(distance_metric, steps_per_iteration, np.split(DATA, 4) * 2)
    for (fetched, centers), (idx, scores, want) in zip(ours[1:], reference):
        np.testing.assert_array_equal(fetched[1][0], idx)
        np.testing.assert_allclose(fetched[2][0], scores, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(centers, want, rtol=1e-4, atol=1e-5)


def test_sharded_inputs_match_tf():
    args = ("squared_euclidean", False, 1, 2, START)
    assert_full_batch_same(
        run_program(True, *args), run_program(False, *args), "squared_euclidean", 2
    )


def test_random_init_takes_small_batches_whole_until_initialized():
    def program(lib, cls):
        with lib.Graph().as_default():
            x = lib.placeholder(lib.float32, [None, 3])
            graph = cls(x, 5, use_mini_batch=True).training_graph()
            initialized, init_op = graph[3], graph[-2]
            centers = [v for v in lib.global_variables() if v.op.name == "clusters"][0]
            with lib.Session() as sess:
                sess.run(lib.global_variables_initializer())
                out = []
                for batch in (DATA[:3], DATA[3:5], DATA[5:40]):
                    sess.run(init_op, {x: batch})
                    out.append((sess.run(initialized), sess.run(centers)))
                return out

    ours = program(dataflow, dataflow.contrib.factorization.KMeans)
    assert_same(ours, program(tf1, clustering_ops.KMeans))
    assert [done for done, _ in ours] == [False, True, True]
    np.testing.assert_array_equal(ours[-1][1], DATA[:5])


def initial_centers(initial_clusters, data, k, seed=0, **kwargs):
    with dataflow.Graph().as_default():
        x = dataflow.placeholder(dataflow.float32, [None, data.shape[1]])
        kmeans = dataflow.contrib.factorization.KMeans(
            x, k, initial_clusters=initial_clusters, random_seed=seed, **kwargs
        )
        _, _, _, initialized, centers, init_op, _ = kmeans.training_graph()
        with dataflow.Session() as sess:
            sess.run(dataflow.global_variables_initializer())
            for _ in range(k):
                if sess.run(initialized):
                    break
                sess.run(init_op, {x: data})
            assert sess.run(initialized)
            return sess.run(centers)


def test_random_init_draws_input_rows_reproducibly():
    centers = initial_centers("random", DATA, 6, seed=3)
    assert centers.shape == (6, 3)
    assert all((row == DATA).all(1).any() for row in centers)
    np.testing.assert_array_equal(centers, initial_centers("random", DATA, 6, seed=3))


GROUPS = np.repeat(MEANS, [30, 5, 12, 1], axis=0)[RNG.permutation(48)]


def groups_of(centers):
    return sorted(int(np.argmin(((MEANS - c) ** 2).sum(1))) for c in centers)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("retries", [0, 2, -1])
def test_kmeans_plus_plus_picks_one_center_per_group(seed, retries):
    centers = initial_centers(
        "kmeans_plus_plus", GROUPS, 4, seed=seed, kmeans_plus_plus_num_retries=retries
    )
    assert all((row == GROUPS).all(1).any() for row in centers)
    assert groups_of(centers) == [0, 1, 2, 3]
    # In a graph: the suite's TF1 tests turn eager execution off when they are collected.
    with tf1.Graph().as_default():
        op = tf.raw_ops.KmeansPlusPlusInitialization(
            points=GROUPS,
            num_to_sample=np.int64(4),
            seed=np.int64(seed),
            num_retries_per_sample=np.int64(retries),
        )
        with tf1.Session() as sess:
            theirs = sess.run(op)
    assert groups_of(theirs) == [0, 1, 2, 3]


@pytest.mark.parametrize("seed", [0, 5])
def test_kmc2_picks_one_center_per_group(seed):
    """Each chain of 12 points holds every group, so each chain ends in a new group."""
    block = np.repeat(MEANS, [6, 3, 2, 1], axis=0)
    chains = np.concatenate([block[RNG.permutation(12)] for _ in range(4)])
    centers = initial_centers("kmc2", chains, 4, seed=seed, kmc2_chain_length=12)
    assert all((row == chains).all(1).any() for row in centers)
    assert groups_of(centers) == [0, 1, 2, 3]


def test_draws_follow_the_squared_distances():
    from dataflow.contrib.factorization.initializers import _draw, kmc2_chain

    weights = np.array([0.0, 1.0, 3.0, 0.0, 6.0], np.float32)
    with dataflow.Graph().as_default(), dataflow.Session() as sess:
        draws = sess.run(_draw(dataflow.constant(weights), 20000, seed=11))
        chain = sess.run(kmc2_chain(dataflow.constant([0.0, 0.0, 2.0, 0.0]), seed=1))
    p = weights / weights.sum()
    counts = np.bincount(draws, minlength=5)
    assert counts[0] == counts[3] == 0
    assert (np.abs(counts - 20000 * p) <= 5 * np.sqrt(20000 * p * (1 - p)) + 1e-9).all()
    assert chain == 2


def test_errors_as_tf():
    x = dataflow.placeholder(dataflow.float32, [None, 3])
    with pytest.raises(ValueError, match="initialization"):
        dataflow.contrib.factorization.KMeans(x, 2, initial_clusters="kmeans")
    with pytest.raises(ValueError, match="distance"):
        dataflow.contrib.factorization.KMeans(x, 2, distance_metric="manhattan")
    graph = dataflow.contrib.factorization.KMeans(x, 5, "kmeans_plus_plus").training_graph()
    with dataflow.Session() as sess:
        sess.run(dataflow.global_variables_initializer())
        with pytest.raises(dataflow.errors.InvalidArgumentError):
            sess.run(graph[5], {x: DATA[:3]})  # k-means++ needs the 5 centers in one batch
    with pytest.raises(dataflow.NotProvidedError, match="factorization.KMeansClustering"):
        dataflow.contrib.factorization.KMeansClustering  # noqa: B018
