"""The initial centers of ``tf.contrib.factorization.KMeans`` (TF 1.15's
``_InitializeClustersOpFactory``), and the nearest-center search.

The init op reads how many centers the ``clusters`` variable holds. If it holds
``num_clusters``, it only checks that ``initialized`` is set. Otherwise it adds centers
chosen from the batch fed, at most the number still missing:

* ``"random"``: rows drawn uniformly (with replacement) over all shards (op seed
  ``random_seed``), or the whole batch when it has no more rows than centers missing;
* ``"kmeans_plus_plus"``: k-means++ on the first shard, which must hold at least the
  centers missing (else the run fails on an assertion): the first center uniformly,
  each next one drawn with probability proportional to the squared distance to the
  nearest center chosen, keeping the best (lowest total distance) of ``1 + retries``
  draws;
* ``"kmc2"``: one center per chain of ``kmc2_chain_length`` points of the first shard
  (the first point when there are no centers yet, then a k-MC2 Markov chain over the
  chain's squared distances to the centers);
* a tensor of centers (its row count must be the number missing) or a function of
  ``(inputs, num_remaining)``.

Centers are L2-normalized for the cosine distance. When the variable then holds
``num_clusters`` centers, ``initialized`` becomes true. The random draws are
dataflow's (TF's seed rules, not TF's Philox stream), so the centers chosen differ
from TF's run for run while following the same distributions.
"""

from __future__ import annotations

from typing import Any

import dataflow as tf

SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"
RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
KMC2_INIT = "kmc2"


def squared_distances(points: Any, centers: Any) -> Any:
    """``[n, k]`` squared Euclidean distances, ``|x|^2 - 2 x.c + |c|^2``, at least 0."""
    d = (
        tf.reduce_sum(tf.square(points), 1, keepdims=True)
        - 2 * tf.matmul(points, centers, transpose_b=True)
        + tf.transpose(tf.reduce_sum(tf.square(centers), 1, keepdims=True))
    )
    return tf.maximum(d, tf.zeros_like(d))


def nearest_centers(points: Any, centers: Any) -> tuple[Any, Any]:
    """Each point's nearest center (int64 ``[n]``) and squared distance to it ``[n]``."""
    d = squared_distances(points, centers)
    return tf.argmin(d, 1, output_type=tf.int64), tf.reduce_min(d, 1)


def _draw(weights: Any, count: Any, seed: int | None) -> Any:
    """``count`` indices drawn with probabilities proportional to ``weights`` ``[n]``
    (a uniform draw against the cumulative sums, as TF's kernel samples)."""
    cumulative = tf.cumsum(weights)
    u = tf.random_uniform(tf.reshape(count, [1]), dtype=weights.dtype, seed=seed)
    u = u * cumulative[-1]
    below = tf.cast(tf.less_equal(cumulative[None, :], u[:, None]), tf.int64)
    return tf.minimum(tf.reduce_sum(below, 1), tf.cast(tf.size(weights), tf.int64) - 1)


def kmeans_plus_plus(points: Any, num_to_sample: Any, seed: int, num_retries: int) -> Any:
    """``num_to_sample`` centers ``[m, d]`` chosen from ``points`` by k-means++."""
    n = tf.shape(points, out_type=tf.int64)[0]
    m = tf.cast(num_to_sample, tf.int32)
    if num_retries >= 0:
        draws: Any = tf.constant(1 + num_retries)
    else:  # TF's heuristic: 2 + log(num_to_sample) extra draws
        draws = 3 + tf.cast(tf.floor(tf.log(tf.cast(m, tf.float32))), tf.int32)
    first = tf.random_uniform([], 0, n, dtype=tf.int64, seed=seed)
    first_center = tf.gather(points, first)
    chosen = tf.TensorArray(points.dtype, size=m).write(0, first_center)
    nearest = tf.reshape(squared_distances(points, first_center[None, :]), [-1])
    draw_seed = None if seed is None else seed + 1

    def body(i: Any, chosen: Any, nearest: Any) -> tuple[Any, Any, Any]:
        candidates = tf.gather(points, _draw(nearest, draws, draw_seed))
        after = tf.minimum(nearest[:, None], squared_distances(points, candidates))
        best = tf.argmin(tf.reduce_sum(after, 0), output_type=tf.int32)
        return i + 1, chosen.write(i, candidates[best]), after[:, best]

    _, chosen, _ = tf.while_loop(lambda i, *_: i < m, body, [tf.constant(1), chosen, nearest])
    return chosen.stack()


def kmc2_chain(distances: Any, seed: int | None) -> Any:
    """The index a k-MC2 Markov chain over ``distances`` ``[n]`` ends at: it starts at
    0, and moves to point ``i`` (in order) when ``distances[i] > u_i *
    distances[current]`` for a uniform ``u_i``."""
    n = tf.size(distances)
    u = tf.random_uniform(tf.reshape(n, [1]), dtype=distances.dtype, seed=seed)

    def body(i: Any, current: Any) -> tuple[Any, Any]:
        accept = tf.greater(distances[i], u[i] * distances[current])
        return i + 1, tf.where(accept, i, current)

    _, current = tf.while_loop(lambda i, _: i < n, body, [tf.constant(1), tf.constant(0)])
    return current


class InitializeClusters:
    """Builds the init op of ``KMeans.training_graph`` (module docstring)."""

    def __init__(
        self,
        inputs: list[Any],
        num_clusters: Any,
        initial_clusters: Any,
        distance_metric: str,
        random_seed: int,
        kmeans_plus_plus_num_retries: int,
        kmc2_chain_length: int,
        cluster_centers: Any,
        cluster_centers_updated: Any,
        cluster_centers_initialized: Any,
    ) -> None:
        self._inputs = inputs
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._cosine = distance_metric == COSINE_DISTANCE
        self._seed = random_seed
        self._retries = kmeans_plus_plus_num_retries
        self._chain_length = kmc2_chain_length
        self._centers = cluster_centers
        self._updated = cluster_centers_updated
        self._initialized = cluster_centers_initialized
        self._num_selected = tf.shape(cluster_centers)[0]
        self._num_remaining = num_clusters - self._num_selected
        self._num_data = tf.add_n([tf.shape(inp)[0] for inp in inputs])

    def _normalized(self, centers: Any) -> Any:
        return tf.nn.l2_normalize(centers, 1) if self._cosine else centers

    def _random(self) -> Any:
        indices = tf.random_uniform(
            tf.reshape(self._num_remaining, [-1]),
            minval=0,
            maxval=tf.cast(self._num_data, tf.int64),
            seed=self._seed,
            dtype=tf.int64,
        )
        return tf.nn.embedding_lookup(self._inputs, indices, partition_strategy="div")

    def _kmeans_plus_plus(self) -> Any:
        points = self._normalized(self._inputs[0])
        return kmeans_plus_plus(points, self._num_remaining, self._seed, self._retries)

    def _choose(self) -> Any:
        init = self._initial_clusters
        if isinstance(init, str) and init == RANDOM_INIT:
            return tf.cond(
                self._num_data <= self._num_remaining,
                lambda: tf.concat(self._inputs, 0),
                self._random,
            )
        if isinstance(init, str):
            check = tf.assert_greater_equal(self._num_data, self._num_remaining)
            with tf.control_dependencies([check]):
                return self._kmeans_plus_plus()
        if callable(init):
            return init(self._inputs, self._num_remaining)
        check = tf.assert_equal(self._num_remaining, tf.shape(init)[0])
        with tf.control_dependencies([check]):
            return tf.identity(init)

    def _store(self, all_centers: Any) -> Any:
        """Assign the centers (to both copies); the number still missing."""
        stored = tf.assign(self._centers, all_centers, validate_shape=False)
        if self._updated is not self._centers:
            stored = tf.assign(self._updated, stored, validate_shape=False)
        return self._num_clusters - tf.shape(stored)[0]

    def _add_new_centers(self) -> Any:
        new = self._normalized(self._choose())
        all_centers = tf.cond(
            tf.equal(self._num_selected, 0),
            lambda: new,
            lambda: tf.concat([self._centers, new], 0),
        )
        return self._store(all_centers)

    def _kmc2(self) -> Any:
        """Adds ``max(min(missing, batch // chain_length), 1)`` centers, one per
        chain."""
        shard = self._inputs[0]
        width = tf.shape(shard)[1]
        length = self._chain_length
        max_to_sample = tf.cast(tf.shape(shard)[0] / length, tf.int32)
        count = tf.maximum(tf.minimum(self._num_remaining, max_to_sample), 1)

        def body(i: Any, centers: Any) -> tuple[Any, Any]:
            def first_point() -> Any:
                return self._normalized(tf.reshape(shard[0], [1, -1]))

            def chain() -> Any:
                subset = shard[i * length : (i + 1) * length]
                _, distances = nearest_centers(subset, centers)
                picked = tf.reshape(subset[kmc2_chain(distances, self._seed)], [1, -1])
                return tf.concat([centers, self._normalized(picked)], 0)

            grown = tf.cond(tf.equal(tf.shape(centers)[0], 0), first_point, chain)
            return i + 1, grown

        start = tf.reshape(self._centers, tf.stack([-1, width]))
        _, centers = tf.while_loop(
            lambda i, _: i < count,
            body,
            [tf.constant(0), start],
            shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, None])],
        )
        return self._store(centers)

    def _initialize(self) -> Any:
        with tf.control_dependencies([tf.assert_positive(self._num_remaining)]):
            if isinstance(self._initial_clusters, str) and self._initial_clusters == KMC2_INIT:
                remaining = self._kmc2()
            else:
                remaining = self._add_new_centers()
            return tf.cond(
                tf.equal(remaining, 0),
                lambda: tf.assign(self._initialized, True),
                lambda: tf.identity(self._initialized),
            )

    def _check_initialized(self) -> Any:
        with tf.control_dependencies([tf.assert_equal(self._initialized, True)]):
            return tf.identity(self._initialized)

    def op(self) -> Any:
        """The init op (an op to run; it returns nothing)."""
        done = tf.cond(tf.equal(self._num_remaining, 0), self._check_initialized, self._initialize)
        return tf.group(done, name="init_op")
