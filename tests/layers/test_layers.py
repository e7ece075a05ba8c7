"""``tf.layers`` behaviour beyond fixed values: dropout when training, batch
normalization's ``training`` tensor, what a layer object records, and the names not
provided yet."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf


def test_dropout_drops_and_scales_only_when_training():
    x = tf.ones([200, 50])
    training = tf.placeholder(tf.bool, [])
    out = tf.layers.dropout(x, rate=0.25, training=training, seed=3)
    with tf.Session() as sess:
        kept = sess.run(out, {training: True})
        same = sess.run(out, {training: False})
    np.testing.assert_allclose(np.unique(kept), [0.0, 1.0 / 0.75], rtol=1e-6)
    assert abs((kept == 0).mean() - 0.25) < 0.02
    np.testing.assert_array_equal(same, np.ones([200, 50]))


def test_batch_norm_training_tensor_picks_statistics_and_updates():
    x = tf.placeholder(tf.float32, [None, 2])
    training = tf.placeholder(tf.bool, [])
    out = tf.layers.batch_normalization(x, training=training, momentum=0.5, epsilon=0.0)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    (moving_mean,) = [v for v in tf.global_variables() if v.name.endswith("moving_mean:0")]
    data = np.array([[1.0, 10.0], [3.0, 30.0]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        normalized, _ = sess.run([out, updates], {x: data, training: True})
        np.testing.assert_allclose(normalized, [[-1.0, -1.0], [1.0, 1.0]], atol=1e-5)
        np.testing.assert_allclose(sess.run(moving_mean), [1.0, 10.0])  # halfway to [2, 20]
        inference, _ = sess.run([out, updates], {x: data, training: False})
        np.testing.assert_allclose(sess.run(moving_mean), [1.0, 10.0])  # no update
    assert len(updates) == 2
    assert not np.allclose(inference, normalized)


def test_a_layer_object_records_weights_losses_and_updates():
    layer = tf.layers.BatchNormalization(gamma_regularizer=lambda g: tf.reduce_sum(g))
    dense = tf.layers.Dense(3, kernel_regularizer=lambda w: tf.nn.l2_loss(w), name="head")
    out = dense(layer(tf.ones([4, 2]), training=True))
    assert [w.name for w in dense.trainable_weights] == ["head/kernel:0", "head/bias:0"]
    assert [w.name for w in layer.non_trainable_weights] == [
        "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0",
    ]
    assert len(layer.updates) == 2 and dense.name == "head" and out.shape.as_list() == [4, 3]
    assert len(tf.losses.get_regularization_losses()) == 2


def test_activity_regularizer_adds_a_loss_of_the_outputs():
    out = tf.layers.dense(
        tf.ones([2, 3]),
        4,
        kernel_initializer=tf.ones_initializer(),
        activity_regularizer=lambda y: tf.reduce_sum(y),
    )
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(tf.losses.get_regularization_loss()) == pytest.approx(24.0)
        assert sess.run(out).sum() == pytest.approx(24.0)


def test_layer_names_we_lack_say_so():
    with pytest.raises(tf.NotProvidedError, match="tf.layers.experimental"):
        tf.layers.experimental  # noqa: B018
