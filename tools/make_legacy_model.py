"""Writes ``notebooks/data/legacy_mlp.pb``: a small classifier trained and frozen by
TensorFlow's ``tensorflow.compat.v1``, the legacy model ``notebooks/legacy_model_on_dask.ipynb``
scores over Dask collections without TensorFlow installed.

The model: 4 features -> 16 ReLU units -> 3 classes (``probs``, softmax; ``label``,
argmax), trained with Adam on points labelled by a fixed linear rule (``RULE`` below:
the class is the argmax of ``x @ RULE``), then frozen with
``tf.graph_util.convert_variables_to_constants``. ``legacy_mlp.json`` beside it records
the TensorFlow version that wrote it, the tensor names and the rule.

Run from the repository root with TensorFlow installed: ``python tools/make_legacy_model.py``.
"""

from __future__ import annotations

import json
import os
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "data"
RULE = [[1.0, -0.5, 0.2], [0.3, 1.0, -0.8], [-0.6, 0.4, 1.0], [0.5, 0.2, 0.1]]


def main() -> None:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf1.layers, as TF 1.15 had them
    import tensorflow

    tf1 = tensorflow.compat.v1
    tf1.disable_eager_execution()
    rng = np.random.default_rng(0)
    x_train = rng.normal(size=(20_000, 4)).astype(np.float32)
    y_train = np.argmax(x_train @ np.asarray(RULE, np.float32), axis=1)
    graph = tf1.Graph()
    with graph.as_default():
        tf1.set_random_seed(0)
        x = tf1.placeholder(tf1.float32, [None, 4], name="features")
        y = tf1.placeholder(tf1.int64, [None], name="y")
        hidden = tf1.layers.dense(x, 16, tf1.nn.relu, name="hidden")
        logits = tf1.layers.dense(hidden, 3, name="logits")
        tf1.nn.softmax(logits, name="probs")
        tf1.argmax(logits, axis=1, name="label")
        loss = tf1.losses.sparse_softmax_cross_entropy(y, logits)
        train = tf1.train.AdamOptimizer(0.01).minimize(loss)
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            for _ in range(600):
                rows = rng.integers(0, len(x_train), 256)
                sess.run(train, {x: x_train[rows], y: y_train[rows]})
            accuracy = float(np.mean(sess.run("label:0", {x: x_train}) == y_train))
            frozen = tf1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), ["probs", "label"]
            )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "legacy_mlp.pb").write_bytes(frozen.SerializeToString(deterministic=True))
    info = {
        "written_by": f"tensorflow {tensorflow.__version__} (tensorflow.compat.v1)",
        "inputs": ["features:0"],
        "outputs": ["probs:0", "label:0"],
        "feature_names": ["a", "b", "c", "d"],
        "rule": RULE,
        "train_accuracy": round(accuracy, 4),
    }
    (OUT / "legacy_mlp.json").write_text(json.dumps(info, indent=1) + "\n")
    print(json.dumps(info))


if __name__ == "__main__":
    main()
