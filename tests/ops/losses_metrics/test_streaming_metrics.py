"""The rest of ``tf.metrics`` against ``tensorflow.compat.v1``: one streaming program
(local variables initialized, the update op run on three batches, the value read before
and after each) gives the same values, dtypes, local variable names and collections."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

RNG = np.random.default_rng(11)
N = 12
BATCHES = [
    {
        "labels": RNG.integers(0, 4, N),
        "classes": RNG.integers(0, 4, N),
        "binary": RNG.integers(0, 2, N),
        "scores": RNG.random(N).astype(np.float32),
        "weights": RNG.random(N).astype(np.float32),
        "real": RNG.normal(size=N).astype(np.float32),
        "real2": RNG.normal(size=N).astype(np.float32),
        "normalizer": np.where(RNG.random(N) < 0.2, 0, RNG.random(N) + 0.5).astype(np.float32),
        "grid": RNG.normal(size=(3, 4)).astype(np.float32),
        "logits": RNG.normal(size=(N, 6)).astype(np.float32),
        "multi": np.stack([RNG.permutation(6)[:3] for _ in range(N)]).astype(np.int64),
        "multi_dup": RNG.integers(0, 6, (N, 3)).astype(np.int64),
    }
    for _ in range(3)
]


def unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


for b in BATCHES:
    b["dir1"] = unit(RNG.normal(size=(N, 3))).astype(np.float32)
    b["dir2"] = unit(RNG.normal(size=(N, 3))).astype(np.float32)

THRESHOLDS = [0.1, 0.35, 0.5, 0.8]

METRICS = {
    "true_positives": lambda tf, f: tf.metrics.true_positives(f["binary"], f["scores"] > 0.5),
    "false_positives_w": lambda tf, f: tf.metrics.false_positives(
        f["binary"], f["scores"] > 0.4, weights=f["weights"]
    ),
    "true_negatives": lambda tf, f: tf.metrics.true_negatives(f["binary"], f["scores"] > 0.5),
    "false_negatives_named": lambda tf, f: tf.metrics.false_negatives(
        f["binary"], f["scores"] > 0.5, name="fneg"
    ),
    "tp_at_thresholds": lambda tf, f: tf.metrics.true_positives_at_thresholds(
        f["binary"], f["scores"], THRESHOLDS
    ),
    "fp_at_thresholds_w": lambda tf, f: tf.metrics.false_positives_at_thresholds(
        f["binary"], f["scores"], THRESHOLDS, weights=f["weights"]
    ),
    "tn_at_thresholds": lambda tf, f: tf.metrics.true_negatives_at_thresholds(
        f["binary"], f["scores"], THRESHOLDS
    ),
    "fn_at_thresholds": lambda tf, f: tf.metrics.false_negatives_at_thresholds(
        f["binary"], f["scores"], THRESHOLDS
    ),
    "precision_at_thresholds": lambda tf, f: tf.metrics.precision_at_thresholds(
        f["binary"], f["scores"], THRESHOLDS, weights=f["weights"]
    ),
    "recall_at_thresholds": lambda tf, f: tf.metrics.recall_at_thresholds(
        f["binary"], f["scores"], THRESHOLDS
    ),
    "auc_roc_minoring": lambda tf, f: tf.metrics.auc(
        f["binary"], f["scores"], num_thresholds=30, summation_method="minoring"
    ),
    "auc_roc_majoring_w": lambda tf, f: tf.metrics.auc(
        f["binary"], f["scores"], weights=f["weights"], summation_method="majoring"
    ),
    "auc_pr_careful": lambda tf, f: tf.metrics.auc(
        f["binary"], f["scores"], curve="PR", summation_method="careful_interpolation"
    ),
    "auc_roc_careful": lambda tf, f: tf.metrics.auc(
        f["binary"], f["scores"], summation_method="careful_interpolation"
    ),
    "auc_thresholds": lambda tf, f: tf.metrics.auc(f["binary"], f["scores"], thresholds=THRESHOLDS),
    "sensitivity_at_specificity": lambda tf, f: tf.metrics.sensitivity_at_specificity(
        f["binary"], f["scores"], 0.6, num_thresholds=50
    ),
    "specificity_at_sensitivity_w": lambda tf, f: tf.metrics.specificity_at_sensitivity(
        f["binary"], f["scores"], 0.4, weights=f["weights"]
    ),
    "mae": lambda tf, f: tf.metrics.mean_absolute_error(f["real"], f["real2"]),
    "mae_w": lambda tf, f: tf.metrics.mean_absolute_error(
        f["real"], f["real2"], weights=f["weights"]
    ),
    "mre": lambda tf, f: tf.metrics.mean_relative_error(f["real"], f["real2"], f["normalizer"]),
    "cosine": lambda tf, f: tf.metrics.mean_cosine_distance(f["dir1"], f["dir2"], dim=1),
    "rmse_w": lambda tf, f: tf.metrics.root_mean_squared_error(
        f["real"], f["real2"], weights=f["weights"]
    ),
    "percentage_below": lambda tf, f: tf.metrics.percentage_below(f["real"], 0.3),
    "mean_tensor": lambda tf, f: tf.metrics.mean_tensor(f["grid"]),
    "mean_tensor_w": lambda tf, f: tf.metrics.mean_tensor(
        f["grid"], weights=tf.reshape(f["weights"], [3, 4])
    ),
    "mean_per_class_accuracy": lambda tf, f: tf.metrics.mean_per_class_accuracy(
        f["labels"], f["classes"], num_classes=5
    ),
    "mean_per_class_accuracy_w": lambda tf, f: tf.metrics.mean_per_class_accuracy(
        f["labels"], f["classes"], num_classes=4, weights=f["weights"]
    ),
    "precision_at_k": lambda tf, f: tf.metrics.precision_at_k(f["multi"], f["logits"], 2),
    "precision_at_k_one_label": lambda tf, f: tf.metrics.precision_at_k(
        f["labels"], f["logits"], 3
    ),
    "precision_at_k_class": lambda tf, f: tf.metrics.precision_at_k(
        f["multi"], f["logits"], 3, class_id=2
    ),
    "sparse_precision_at_k_w": lambda tf, f: tf.metrics.sparse_precision_at_k(
        f["multi"], f["logits"], 2, weights=f["weights"]
    ),
    "recall_at_k": lambda tf, f: tf.metrics.recall_at_k(f["multi"], f["logits"], 2),
    "recall_at_k_dup_labels": lambda tf, f: tf.metrics.recall_at_k(f["multi_dup"], f["logits"], 2),
    "recall_at_k_class_w": lambda tf, f: tf.metrics.recall_at_k(
        f["multi"], f["logits"], 4, class_id=1, weights=f["weights"]
    ),
    "precision_at_top_k": lambda tf, f: tf.metrics.precision_at_top_k(
        f["multi"], f["multi_dup"][:, :2]
    ),
    "recall_at_top_k": lambda tf, f: tf.metrics.recall_at_top_k(
        f["multi"], tf.nn.top_k(f["logits"], 3).indices, k=3
    ),
    "average_precision_at_k": lambda tf, f: tf.metrics.average_precision_at_k(
        f["multi"], f["logits"], 3
    ),
    "sparse_average_precision_at_k_w": lambda tf, f: tf.metrics.sparse_average_precision_at_k(
        f["multi"], f["logits"], 4, weights=f["weights"]
    ),
}


def stream(tf, metric):
    with tf.Graph().as_default():
        feeds = {
            key: tf.placeholder(tf.as_dtype(value.dtype), value.shape)
            for key, value in BATCHES[0].items()
        }
        value, update = metric(tf, feeds)
        value2, update2 = metric(tf, feeds)  # a second metric: scopes made unique
        names = sorted(v.name for v in tf.local_variables())
        metric_names = sorted(v.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES))
        out = []
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            out.append(sess.run(value))
            for batch in BATCHES:
                feed = {feeds[k]: batch[k] for k in feeds}
                out.append(sess.run(update, feed))
                out.append(sess.run(value))
            assert sess.run(value2).shape == out[0].shape
        return names, metric_names, value.dtype.name, update.dtype.name, out


@pytest.mark.parametrize("name", sorted(METRICS))
def test_metric_streams_like_tf(name):
    ours, theirs = stream(dataflow, METRICS[name]), stream(tf1, METRICS[name])
    assert ours[:4] == theirs[:4]
    for a, b in zip(ours[4], theirs[4], strict=True):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


def collections_of(tf):
    with tf.Graph().as_default():
        labels, scores = BATCHES[0]["binary"], BATCHES[0]["scores"]
        value, update = tf.metrics.auc(
            labels, scores, metrics_collections=["m"], updates_collections=["u"]
        )
        v2, u2 = tf.metrics.precision_at_k(
            BATCHES[0]["multi"],
            BATCHES[0]["logits"],
            2,
            metrics_collections=["m"],
            updates_collections=["u"],
        )
        graph = tf.get_default_graph()
        return (
            [t is value for t in graph.get_collection("m")][:1]
            + [graph.get_collection("m")[1] is v2],
            [graph.get_collection("u")[0] is update, graph.get_collection("u")[1] is u2],
            len(tf.trainable_variables()),
        )


def test_collections_like_tf():
    assert collections_of(dataflow) == collections_of(tf1) == ([True, True], [True, True], 0)


@pytest.mark.parametrize(
    "build",
    [
        lambda tf: tf.metrics.auc([1, 0], [0.2, 0.4], curve="XY"),
        lambda tf: tf.metrics.auc(
            np.array([1, 0]), np.array([0.2, 0.4], np.float32), summation_method="simpson"
        ),
        lambda tf: tf.metrics.sensitivity_at_specificity([1, 0], [0.2, 0.4], 1.5),
        lambda tf: tf.metrics.specificity_at_sensitivity([1, 0], [0.2, 0.4], -0.1),
        lambda tf: tf.metrics.average_precision_at_k([[1]], [[0.2, 0.4]], 0),
        lambda tf: tf.metrics.true_positives([1, 0, 1], [True, False]),
    ],
)
def test_bad_arguments_raise_like_tf(build):
    errors = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default(), pytest.raises(ValueError) as info:
            build(tf)
        errors.append(info.type)
    assert errors[0] is errors[1] or issubclass(errors[0], errors[1])


def test_predictions_outside_unit_interval_fail_at_run_time():
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            p = tf.placeholder(tf.float32, [None])
            _, update = tf.metrics.auc([1, 0], p)
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                sess.run(update, {p: [0.2, 0.9]})
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(update, {p: [0.2, 1.5]})


def test_sparse_labels_like_dense_ones():
    """A SparseTensor of label ids per row counts like the dense rows it lists."""
    logits = BATCHES[0]["logits"][:4]
    rows = [[0, 3], [5], [1, 2, 4], [2]]
    indices = [[i, j] for i, row in enumerate(rows) for j in range(len(row))]
    values = [v for row in rows for v in row]

    def run(tf):
        with tf.Graph().as_default():
            labels = tf.SparseTensor(indices, tf.constant(values, tf.int64), [4, 3])
            p, p_up = tf.metrics.precision_at_k(labels, logits, 2)
            r, r_up = tf.metrics.recall_at_k(labels, logits, 3)
            a, a_up = tf.metrics.average_precision_at_k(labels, logits, 3)
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                return sess.run([p_up, r_up, a_up])

    np.testing.assert_allclose(run(dataflow), run(tf1), rtol=1e-6)
