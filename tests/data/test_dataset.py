"""``tf.data`` behaviour TF1 defines only loosely: shuffling (our random stream, TF1's
rules), iterators as resources, training loops that end on ``OutOfRangeError``, and the
graph the pipeline becomes."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf


def _drain(sess, element):
    out = []
    while True:
        try:
            out.append(sess.run(element))
        except tf.errors.OutOfRangeError:
            return out


def _shuffled(seed, reshuffle, epochs=2, graph_seed=None):
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        dataset = tf.data.Dataset.range(20).shuffle(
            8, seed=seed, reshuffle_each_iteration=reshuffle
        )
        element = dataset.repeat(epochs).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            values = [int(v) for v in _drain(sess, element)]
    return [values[i * 20 : (i + 1) * 20] for i in range(epochs)]


def test_shuffle_is_a_permutation_seeded_and_reshuffled_per_pass():
    first, second = _shuffled(seed=3, reshuffle=True)
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != list(range(20)) and first != second
    assert _shuffled(seed=3, reshuffle=True) == [first, second]  # same seed, same orders
    same_each_pass = _shuffled(seed=3, reshuffle=False)
    assert same_each_pass[0] == same_each_pass[1]
    assert _shuffled(seed=None, reshuffle=True, graph_seed=5) == _shuffled(
        seed=None, reshuffle=True, graph_seed=5
    )


def test_shuffle_buffer_bounds_how_far_an_element_moves():
    (order,) = _shuffled(seed=1, reshuffle=True, epochs=1)
    # With a buffer of 8, output i is one of the first i + 8 inputs.
    assert all(v < i + 8 for i, v in enumerate(order))


def test_monitored_session_stops_at_the_end_of_the_data():
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        element = tf.data.Dataset.range(7).batch(2).make_one_shot_iterator().get_next()
        seen = []
        with tf.train.MonitoredSession() as sess:
            while not sess.should_stop():
                seen.append(sess.run(element).tolist())
    assert seen == [[0, 1], [2, 3], [4, 5], [6]]


def test_training_from_a_dataset_matches_feeding_the_same_batches():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(32, 3)).astype(np.float32)
    ys = xs @ np.array([[1.0], [-2.0], [0.5]], np.float32)

    def train(use_dataset):
        with tf.Graph().as_default():
            if use_dataset:
                x, y = (
                    tf.data.Dataset.from_tensor_slices((xs, ys))
                    .batch(8)
                    .make_one_shot_iterator()
                    .get_next()
                )
            else:
                x = tf.placeholder(tf.float32, [None, 3])
                y = tf.placeholder(tf.float32, [None, 1])
            w = tf.Variable(tf.zeros([3, 1]))
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for i in range(4):
                    feed = (
                        None
                        if use_dataset
                        else {x: xs[8 * i : 8 * i + 8], y: ys[8 * i : 8 * i + 8]}
                    )
                    sess.run(step, feed)
                return sess.run(w)

    np.testing.assert_allclose(train(True), train(False), rtol=1e-6)


def test_map_function_is_traced_once_into_the_graph():
    calls = []

    def double(x):
        calls.append(x)
        return x * 2

    with tf.Graph().as_default() as g:
        element = tf.data.Dataset.range(5).map(double).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert [int(v) for v in _drain(sess, element)] == [0, 2, 4, 6, 8]
        types = [op.type for op in g.get_operations()]
    assert len(calls) == 1 and isinstance(calls[0], tf.Tensor)
    assert {"RangeDataset", "MapDataset", "OneShotIterator", "IteratorGetNext"} <= set(types)


def test_map_captures_outer_tensors_and_random_ops_draw_per_element():
    with tf.Graph().as_default():
        scale = tf.placeholder(tf.float32, [])
        dataset = tf.data.Dataset.from_tensor_slices(np.ones(6, np.float32)).map(
            lambda x: x * scale + tf.random_uniform([], seed=1)
        )
        iterator = dataset.make_initializable_iterator()
        element = iterator.get_next()
        with tf.Session() as sess:
            sess.run(iterator.initializer, {scale: 10.0})
            values = np.array(_drain(sess, element))
    assert np.all((values >= 10.0) & (values < 11.0))
    assert len(set(values.tolist())) == 6


def test_iterator_is_a_resource_shared_by_its_get_next_ops():
    with tf.Graph().as_default():
        iterator = tf.data.Dataset.range(6).make_one_shot_iterator()
        a, b = iterator.get_next(), iterator.get_next()
        with tf.Session() as sess:
            assert [int(sess.run(a)), int(sess.run(b)), int(sess.run(a))] == [0, 1, 2]
        with tf.Session() as fresh:  # state belongs to the session
            assert int(fresh.run(b)) == 0


def test_compat_v1_data_and_output_classes():
    import dataflow.compat.v1 as v1

    assert v1.data.Dataset is tf.data.Dataset
    assert tf.data.experimental.AUTOTUNE == -1
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices({"a": np.zeros((2, 3)), "b": [1, 2]})
        assert dataset.output_classes == {"a": tf.Tensor, "b": tf.Tensor}
        assert tf.data.get_output_classes(dataset) == dataset.output_classes
        assert repr(dataset).startswith("<Dataset shapes: ")


def test_generator_args_are_evaluated_when_the_iterator_starts():
    def count_to(n):
        yield from range(int(n))

    with tf.Graph().as_default():
        limit = tf.placeholder(tf.int64, [])
        dataset = tf.data.Dataset.from_generator(
            count_to, tf.int64, tf.TensorShape([]), args=[limit]
        )
        iterator = dataset.make_initializable_iterator()
        element = iterator.get_next()
        with tf.Session() as sess:
            sess.run(iterator.initializer, {limit: 3})
            assert [int(v) for v in _drain(sess, element)] == [0, 1, 2]


def test_cache_to_a_file_is_reused(tmp_path):
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)

    path = str(tmp_path / "cache")
    for _ in range(2):
        with tf.Graph().as_default():
            dataset = tf.data.Dataset.from_generator(gen, tf.int64, tf.TensorShape([])).cache(path)
            element = dataset.make_one_shot_iterator().get_next()
            with tf.Session() as sess:
                assert [int(v) for v in _drain(sess, element)] == [0, 1, 2]
    assert len(calls) == 1


def test_errors_inside_the_pipeline_reach_get_next_and_the_session_survives():
    def boom():
        yield 1
        raise RuntimeError("the generator failed")

    with tf.Graph().as_default():
        element = (
            tf.data.Dataset.from_generator(boom, tf.int64)
            .prefetch(1)
            .make_one_shot_iterator()
            .get_next()
        )
        with tf.Session() as sess:
            assert int(sess.run(element)) == 1
            with pytest.raises(Exception, match="the generator failed"):
                sess.run(element)
            assert sess.run(tf.constant(2)) == 2


def _map_subgraph(fn, specs):
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices(specs).map(fn)
        op = dataset.variant.op
        return op.attrs["vectorizable"]


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda x, y: (x * 2.0 - 1.0, y), True),
        (lambda x, y: (tf.cast(tf.exp(-x), tf.float64), y + 1), True),
        (lambda x, y: (tf.reduce_sum(x), y), False),  # not elementwise
        (lambda x, y: (x + tf.random_uniform([3]), y), False),  # random: not deterministic
        (lambda x, y: (x * tf.constant([1.0, 2.0, 3.0]), y), False),  # a non-scalar constant
        (lambda x, y: (x * tf.cast(y, tf.float32), y), False),  # element ranks 1 and 0 meet
        (lambda x, y: (x, tf.constant(1)), False),  # an output no element feeds
    ],
)
def test_which_map_functions_run_per_batch(fn, expected):
    specs = (np.zeros((4, 3), np.float32), np.zeros(4, np.int64))
    assert _map_subgraph(fn, specs) is expected


def test_batched_map_and_gathered_shuffle_give_the_per_element_results():
    # A debug session runs every map per element and stacks; a plain one gathers the
    # shuffled positions and runs the elementwise map once per batch. Same seed, same
    # arrays.
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(50, 3)).astype(np.float32), np.arange(50)

    def run(debug):
        with tf.Graph().as_default():
            dataset = (
                tf.data.Dataset.from_tensor_slices((xs, ys))
                .map(lambda x, y: (x * 2.0 - 1.0, y * 3))
                .shuffle(16, seed=4)
                .batch(8)
                .repeat(2)
            )
            element = dataset.make_one_shot_iterator().get_next()
            with tf.Session(config=tf.ConfigProto(debug=debug)) as sess:
                return _drain(sess, element)

    fast, slow = run(False), run(True)
    assert len(fast) == len(slow) == 14
    for (fx, fy), (sx, sy) in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(fx, sx)
        np.testing.assert_array_equal(fy, sy)
    assert sorted(np.concatenate([y for _, y in fast[:7]]).tolist()) == (ys * 3).tolist()


def test_batch_runs_a_batched_map_once_per_batch_over_gathered_slices():
    from dataflow.ops.data import pipeline as pipe

    calls = []

    def run(args):
        calls.append(args[0].shape)
        return [args[0] * 2.0, args[1]]

    arrays = [np.arange(20.0).reshape(10, 2), np.arange(10)]

    def batches(batched):
        mapped = pipe.Map(pipe.Slices(arrays), run, [], 1, batched)
        return list(pipe.Batch(pipe.Shuffle(mapped, 4, 7, True), 3, False).elements())

    fast = batches(True)
    assert calls == [(3, 2), (3, 2), (3, 2), (1, 2)]  # once per batch
    calls.clear()
    slow = batches(False)
    assert calls == [(2,)] * 10  # once per element
    for (fx, fy), (sx, sy) in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(fx, sx)
        np.testing.assert_array_equal(fy, sy)
