"""``tf.contrib.staging.StagingArea`` against TF 1.15's (``data_flow_ops.StagingArea``,
still in TensorFlow 2.21): the same program of puts, gets, sizes and clears gives the
same values and static shapes, and the same arguments are refused."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1
StagingAreaTF = pytest.importorskip("tensorflow.python.ops.data_flow_ops").StagingArea


def staging_area(tf):
    return dataflow.contrib.staging.StagingArea if tf is dataflow else StagingAreaTF


def pipeline(tf, names):
    """Baselines' HER pattern: put a batch each step while getting the previous one."""
    area = staging_area(tf)([tf.float32, tf.int32], shapes=[[None, 2], [None]], names=names)
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.int32, [None])
    put = area.put(dict(zip(names, (x, y))) if names else [x, y])
    got = area.get()
    gx, gy = (got[n] for n in names) if names else got
    total = tf.reduce_sum(gx) + tf.cast(tf.reduce_sum(gy), tf.float32)
    shapes = [gx.shape.as_list(), gy.shape.as_list()]
    out = []
    with tf.Session() as sess:
        for step in range(3):
            feed = {x: np.full((step + 1, 2), step, np.float32), y: np.arange(step + 1)}
            sess.run(put, feed)
        out.append(sess.run(area.size()))
        out.append(sess.run([gx, gy]))
        out.append(sess.run(total))  # a get and a size in one step have no order
        out.append(sess.run(area.size()))
        sess.run(area.clear())
        out.append(sess.run(area.size()))
        sess.run(put, {x: np.ones((1, 2)), y: [7]})
        out.append(sess.run([gx, gy]))
    return shapes, out


@pytest.mark.parametrize("names", [None, ["x", "y"]])
def test_staging_area_matches_tf(names):
    with dataflow.Graph().as_default():
        ours = pipeline(dataflow, names)
    with tf1.Graph().as_default():
        theirs = pipeline(tf1, names)
    assert ours[0] == theirs[0] == [[None, 2], [None]]
    assert str(ours[1]) == str(theirs[1])


def test_get_waits_for_a_put_and_shared_names_share():
    tf = dataflow
    with tf.Graph().as_default():
        a = tf.contrib.staging.StagingArea([tf.float32], shared_name="buf")
        b = tf.contrib.staging.StagingArea([tf.float32], shared_name="buf")
        got = a.get()
        assert isinstance(got, list) and len(got) == 1
        with tf.Session() as sess:
            result = {}
            reader = threading.Thread(target=lambda: result.setdefault("v", sess.run(got)))
            reader.start()
            reader.join(0.2)
            assert reader.is_alive()  # nothing staged yet
            sess.run(b.put(tf.constant(3.0)))
            reader.join(10)
            assert result["v"] == [3.0]


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda tf, A: A([tf.float32], shapes=[[1], [2]]), "shapes must be the same length"),
        (lambda tf, A: A([tf.float32], names=["a", "b"]), "names must be the same length"),
        (lambda tf, A: A([tf.float32]).put({"a": tf.constant(1.0)}), "must have names"),
        (lambda tf, A: A([tf.float32], names=["a"]).put([tf.constant(1.0)]), "dictionary"),
        (lambda tf, A: A([tf.float32]).put(tf.constant(1)), "Datatypes do not match"),
        (lambda tf, A: A([tf.float32]).put([tf.constant(1.0)] * 2), "number of inputs"),
        (lambda tf, A: A([tf.float32], shapes=[[2]]).put(tf.zeros([3])), "compatible"),
    ],
)
def test_refusals_match_tf(build, message):
    for tf in (dataflow, tf1):
        with tf.Graph().as_default(), pytest.raises(ValueError, match=message):
            build(tf, staging_area(tf))
