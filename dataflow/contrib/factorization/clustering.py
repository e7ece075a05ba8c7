"""``tf.contrib.factorization.KMeans``: the k-means graph of TF 1.15.

``KMeans(inputs, num_clusters, ...).training_graph()`` builds, for a tensor (or a list of
shards) of points ``[n, d]``:

* variables ``clusters`` (the centers: empty until initialized, any shape:
  ``validate_shape=False``), ``initialized`` (bool), and for mini-batch training the
  per-center counts (and, with ``mini_batch_steps_per_iteration > 1``, a second copy
  ``clusters_updated`` and the countdown ``update_in_steps``);
* ``init_op``: adds initial centers from the batch fed (``initializers.py``); run it
  until ``cluster_centers_initialized`` is true (one run when the batch has at least
  ``num_clusters`` points);
* the assignment of each point to its nearest center (``cluster_idx``, int64), its
  distance (``scores``) and the distances to every center (``all_scores``), one per
  shard;
* ``training_op``: a full-batch Lloyd step (each center becomes the mean of its points,
  ``sum / (count + 1e-6)``, so a center with no points moves to the origin, as TF's
  does), or a mini-batch step (a center with count ``n`` and ``k`` new points ``d_i``
  moves by ``(sum d_i - k x) / (n + k)``).

With ``distance_metric="cosine"`` the points are L2-normalized, distances are ``1 -
cos``, and new centers are normalized whenever TF 1.15 keeps them so.
"""

from __future__ import annotations

from typing import Any

import dataflow as tf

from .initializers import (
    COSINE_DISTANCE,
    KMC2_INIT,
    KMEANS_PLUS_PLUS_INIT,
    RANDOM_INIT,
    SQUARED_EUCLIDEAN_DISTANCE,
    InitializeClusters,
    nearest_centers,
)

CLUSTERS_VAR_NAME = "clusters"


class KMeans:
    """Creates the graph for k-means clustering (TF 1.15's
    ``tf.contrib.factorization.KMeans``).

    Args:
        inputs: a ``[n, d]`` float tensor, or a list of them (shards).
        num_clusters: the number of centers (a Python or tensor integer); ignored when
            ``initial_clusters`` is a tensor or array of centers.
        initial_clusters: ``"random"`` (input rows drawn with replacement; the whole batch
            when it has at most the centers still missing), ``"kmeans_plus_plus"``
            (from the first shard, which must hold at least the centers missing),
            ``"kmc2"`` (one k-MC2 Markov chain of ``kmc2_chain_length`` points of the
            first shard per new center), a ``[k, d]`` tensor or array, or a function
            ``f(inputs, num_remaining)`` returning up to that many centers.
        distance_metric: ``"squared_euclidean"`` or ``"cosine"``.
        use_mini_batch: mini-batch updates instead of full-batch Lloyd steps.
        mini_batch_steps_per_iteration: steps between copies of the updated centers
            back to the centers used for assignment (mini-batch only).
        random_seed: the op seed of the random initializations.
        kmeans_plus_plus_num_retries: extra candidates drawn per k-means++ center (the
            one lowering the total distance most is kept); negative: ``2 + log(k)``.
        kmc2_chain_length: points per k-MC2 chain.

    Raises:
        ValueError: an unknown ``initial_clusters`` name or ``distance_metric``.
    """

    def __init__(
        self,
        inputs: Any,
        num_clusters: Any,
        initial_clusters: Any = RANDOM_INIT,
        distance_metric: str = SQUARED_EUCLIDEAN_DISTANCE,
        use_mini_batch: bool = False,
        mini_batch_steps_per_iteration: int = 1,
        random_seed: int = 0,
        kmeans_plus_plus_num_retries: int = 2,
        kmc2_chain_length: int = 200,
    ) -> None:
        if isinstance(initial_clusters, str) and initial_clusters not in (
            RANDOM_INIT,
            KMEANS_PLUS_PLUS_INIT,
            KMC2_INIT,
        ):
            raise ValueError(f"Unsupported initialization algorithm '{initial_clusters}'")
        if distance_metric not in (SQUARED_EUCLIDEAN_DISTANCE, COSINE_DISTANCE):
            raise ValueError(f"Unsupported distance metric '{distance_metric}'")
        self._inputs = list(inputs) if isinstance(inputs, list) else [inputs]
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._use_mini_batch = use_mini_batch
        self._mini_batch_steps_per_iteration = int(mini_batch_steps_per_iteration)
        self._random_seed = random_seed
        self._kmeans_plus_plus_num_retries = kmeans_plus_plus_num_retries
        self._kmc2_chain_length = kmc2_chain_length

    def _clusters_l2_normalized(self) -> bool:
        """Whether the stored centers are kept normalized (cosine, full batch or synced
        mini-batch)."""
        return self._distance_metric == COSINE_DISTANCE and (
            not self._use_mini_batch or self._mini_batch_steps_per_iteration > 1
        )

    def _distances(self, inputs: list[Any], clusters: Any) -> list[Any]:
        """Per shard, ``[n, k]`` distances of each point to each center."""
        if self._distance_metric == COSINE_DISTANCE:
            return [1 - tf.matmul(inp, clusters, transpose_b=True) for inp in inputs]
        out = []
        for inp in inputs:
            out.append(
                tf.reduce_sum(tf.square(inp), 1, keepdims=True)
                - 2 * tf.matmul(inp, clusters, transpose_b=True)
                + tf.transpose(tf.reduce_sum(tf.square(clusters), 1, keepdims=True))
            )
        return out

    def _infer_graph(self, inputs: list[Any], clusters: Any) -> tuple[list, list, list]:
        """Per shard: all distances, the nearest distance, the nearest center's index."""
        all_scores = self._distances(inputs, clusters)
        if self._distance_metric == COSINE_DISTANCE and not self._clusters_l2_normalized():
            clusters = tf.nn.l2_normalize(clusters, 1)
        scores, indices = [], []
        for inp in inputs:
            index, distance = nearest_centers(inp, clusters)
            if self._distance_metric == COSINE_DISTANCE:
                distance = distance * 0.5  # |a - b|^2 / 2 = 1 - cos for unit vectors
            scores.append(distance)
            indices.append(index)
        return all_scores, scores, indices

    def _create_variables(self, num_clusters: Any) -> tuple[Any, Any, Any, Any, Any]:
        empty = tf.constant([], dtype=tf.float32)
        centers = tf.Variable(empty, name=CLUSTERS_VAR_NAME, validate_shape=False)
        initialized = tf.Variable(False, dtype=tf.bool, name="initialized")
        if self._use_mini_batch and self._mini_batch_steps_per_iteration > 1:
            updated = tf.Variable(empty, name="clusters_updated", validate_shape=False)
            update_in_steps = tf.Variable(
                self._mini_batch_steps_per_iteration, dtype=tf.int64, name="update_in_steps"
            )
            counts = tf.Variable(tf.zeros([num_clusters], dtype=tf.int64))
            return centers, initialized, counts, updated, update_in_steps
        if not self._use_mini_batch:
            return centers, initialized, None, centers, None
        ones = tf.Variable(tf.ones([num_clusters], dtype=tf.int64))
        return centers, initialized, ones, centers, None

    def training_graph(self) -> tuple[Any, ...]:
        """Build the k-means graph.

        Returns:
            ``(all_scores, cluster_idx, scores, cluster_centers_initialized,
            cluster_centers_var, init_op, training_op)``: the first three are lists with
            one tensor per input shard (distances ``[n, k]``, nearest-center indices
            ``[n]`` int64, nearest distances ``[n]``); ``cluster_centers_var`` is the
            ``clusters`` variable; run ``init_op`` until ``cluster_centers_initialized``
            is true, then ``training_op`` for each step.
        """
        if isinstance(self._initial_clusters, str) or callable(self._initial_clusters):
            initial_clusters = self._initial_clusters
            num_clusters = tf.convert_to_tensor(self._num_clusters)
        else:
            initial_clusters = tf.convert_to_tensor(self._initial_clusters)
            num_clusters = tf.shape(initial_clusters)[0]
        centers_var, initialized, counts, updated, update_in_steps = self._create_variables(
            num_clusters
        )
        init_op = InitializeClusters(
            self._inputs,
            num_clusters,
            initial_clusters,
            self._distance_metric,
            self._random_seed,
            self._kmeans_plus_plus_num_retries,
            self._kmc2_chain_length,
            centers_var,
            updated,
            initialized,
        ).op()
        inputs = self._inputs
        centers = centers_var
        if self._distance_metric == COSINE_DISTANCE:
            inputs = [tf.nn.l2_normalize(inp, 1) for inp in inputs]
            if not self._clusters_l2_normalized():
                centers = tf.nn.l2_normalize(centers, 1)
        all_scores, scores, cluster_idx = self._infer_graph(inputs, centers)
        if self._use_mini_batch:
            sync = self._sync_updates_op(update_in_steps, centers_var, updated, counts)
            with tf.control_dependencies([sync]):
                training_op = self._mini_batch_training_op(inputs, cluster_idx, updated, counts)
        else:
            training_op = self._full_batch_training_op(
                inputs, num_clusters, cluster_idx, centers_var
            )
        return (all_scores, cluster_idx, scores, initialized, centers_var, init_op, training_op)

    def _sync_updates_op(
        self, update_in_steps: Any, centers: Any, updated: Any, counts: Any
    ) -> Any:
        """With ``mini_batch_steps_per_iteration > 1``: count the steps down; at zero,
        copy the updated centers (normalized for cosine) to ``clusters``, zero the
        counts and restart the countdown."""
        if update_in_steps is None:
            return tf.no_op()
        steps = self._mini_batch_steps_per_iteration

        def sync() -> Any:
            with tf.control_dependencies([tf.assign(update_in_steps, steps - 1)]):
                copy = updated
                if self._distance_metric == COSINE_DISTANCE:
                    copy = tf.nn.l2_normalize(updated, 1)
                with tf.control_dependencies([tf.assign(centers, copy, validate_shape=False)]):
                    with tf.control_dependencies([tf.assign(counts, tf.zeros_like(counts))]):
                        return tf.identity(update_in_steps)

        return tf.cond(update_in_steps <= 0, sync, lambda: tf.assign_sub(update_in_steps, 1))

    def _mini_batch_training_op(
        self, inputs: list[Any], cluster_idx: list[Any], centers: Any, counts: Any
    ) -> Any:
        """Per shard: each center ``x`` with count ``n`` and ``k`` new points ``d_i``
        gets ``(sum d_i - k x) / (n + k)`` added, and its count ``k``."""
        updates = []
        for inp, idx in zip(inputs, cluster_idx):
            unique_ids, unique_idx = tf.unique(tf.reshape(idx, [-1]))
            num_unique = tf.size(unique_ids)
            old_counts = tf.gather(counts, unique_ids)
            old_centers = tf.gather(centers, unique_ids)
            count_updates = tf.unsorted_segment_sum(
                tf.ones_like(unique_idx, dtype=counts.dtype.base_dtype), unique_idx, num_unique
            )
            sums = tf.unsorted_segment_sum(inp, unique_idx, num_unique)
            column = tf.reshape(tf.cast(count_updates, inp.dtype), [-1, 1])
            rate = tf.reshape(
                tf.reciprocal(tf.cast(old_counts + count_updates, inp.dtype)), [-1, 1]
            )
            center_updates = (sums - column * old_centers) * rate
            updates.append(tf.scatter_add(counts, unique_ids, count_updates))
            updates.append(tf.scatter_add(centers, unique_ids, center_updates))
        return tf.group(*updates)

    def _full_batch_training_op(
        self, inputs: list[Any], num_clusters: Any, cluster_idx: list[Any], centers: Any
    ) -> Any:
        """One Lloyd step over every shard: each center becomes ``sum / (count +
        1e-6)`` of its points (normalized for cosine)."""
        sums, counts = [], []
        for inp, idx in zip(inputs, cluster_idx):
            sums.append(tf.unsorted_segment_sum(inp, idx, num_clusters))
            ones = tf.ones(tf.reshape(tf.shape(inp)[0], [-1]), dtype=inp.dtype)
            counts.append(tf.unsorted_segment_sum(tf.reshape(ones, [-1, 1]), idx, num_clusters))
        epsilon = tf.constant(1e-6, dtype=inputs[0].dtype)
        new_centers = tf.add_n(sums) / (tf.add_n(counts) + epsilon)
        if self._clusters_l2_normalized():
            new_centers = tf.nn.l2_normalize(new_centers, 1)
        return tf.assign(centers, new_centers, validate_shape=False)
