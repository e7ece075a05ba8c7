"""Recurrent cells and ``static_rnn``/``dynamic_rnn``/``bidirectional_dynamic_rnn``
against ``tensorflow.compat.v1``: the same variable names and shapes, and from TF's
initial values the same outputs, final states and gradient steps, with and without
``sequence_length``."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow.compat.v1")

RNG = np.random.default_rng(8)
SEQUENCES = RNG.normal(size=(3, 5, 4)).astype(np.float32)
LENGTHS = np.array([5, 2, 4], np.int32)
STATE = RNG.normal(size=(2, 3, 5)).astype(np.float32)


def _flat(state):
    if isinstance(state, (tuple, list)):
        return [leaf for part in state for leaf in _flat(part)]
    return [state]


def lstm_dynamic(tf):
    x = tf.constant(SEQUENCES)
    cell = tf.nn.rnn_cell.BasicLSTMCell(6)
    return tf.nn.dynamic_rnn(cell, x, sequence_length=LENGTHS, dtype=tf.float32)


def gru_time_major(tf):
    x = tf.constant(np.transpose(SEQUENCES, (1, 0, 2)))
    cell = tf.nn.rnn_cell.GRUCell(5)
    return tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, time_major=True)


def stacked_with_initial_state(tf):
    x = tf.constant(SEQUENCES)
    cells = [
        tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, num_proj=3, cell_clip=2.0),
        tf.nn.rnn_cell.BasicRNNCell(3),
    ]
    cell = tf.nn.rnn_cell.MultiRNNCell(cells)
    initial = cell.zero_state(3, tf.float32)
    return tf.nn.dynamic_rnn(cell, x, initial_state=initial, sequence_length=LENGTHS)


def static_with_residual(tf):
    steps = [tf.constant(SEQUENCES[:, t]) for t in range(5)]
    cell = tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.GRUCell(4))
    outputs, state = tf.nn.static_rnn(cell, steps, dtype=tf.float32, sequence_length=LENGTHS)
    return tf.stack(outputs, 1), state


def bidirectional(tf):
    x = tf.constant(SEQUENCES)
    fw, bw = tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.GRUCell(2)
    (out_fw, out_bw), states = tf.nn.bidirectional_dynamic_rnn(
        fw, bw, x, sequence_length=LENGTHS, dtype=tf.float32
    )
    return tf.concat([out_fw, out_bw], 2), states


def lstm_stack_fused(tf):
    """No ``sequence_length``, plain LSTM cells: one ``LSTMSequence`` op per layer."""
    x = tf.constant(SEQUENCES)
    cell = tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.BasicLSTMCell(6, forget_bias=0.5), tf.nn.rnn_cell.LSTMCell(3)]
    )
    return tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)


def lstm_fused_time_major_initial(tf):
    x = tf.constant(np.transpose(SEQUENCES, (1, 0, 2)))
    initial = tf.nn.rnn_cell.LSTMStateTuple(tf.constant(STATE[0]), tf.constant(STATE[1]))
    cell = tf.nn.rnn_cell.BasicLSTMCell(5)
    return tf.nn.dynamic_rnn(cell, x, initial_state=initial, time_major=True)


def _unknown_time(tf, values):
    """``values`` behind a placeholder whose time (and batch) sizes are unknown, so that
    ``dynamic_rnn`` runs its ``while_loop`` over a ``TensorArray``."""
    return tf.placeholder_with_default(values, [None, None, values.shape[2]])


def lstm_loop(tf):
    cell = tf.nn.rnn_cell.BasicLSTMCell(6)
    x = _unknown_time(tf, SEQUENCES)
    return tf.nn.dynamic_rnn(cell, x, sequence_length=LENGTHS, dtype=tf.float32)


def gru_time_major_loop(tf):
    x = _unknown_time(tf, np.transpose(SEQUENCES, (1, 0, 2)))
    cell = tf.nn.rnn_cell.GRUCell(5)
    return tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, time_major=True)


def stacked_loop(tf):
    x = _unknown_time(tf, SEQUENCES)
    cells = [
        tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, num_proj=3, cell_clip=2.0),
        tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(3), output_keep_prob=1.0),
    ]
    cell = tf.nn.rnn_cell.MultiRNNCell(cells)
    initial = cell.zero_state(3, tf.float32)
    return tf.nn.dynamic_rnn(cell, x, initial_state=initial, sequence_length=LENGTHS)


def bidirectional_loop(tf):
    x = _unknown_time(tf, SEQUENCES)
    fw, bw = tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.GRUCell(2)
    (out_fw, out_bw), states = tf.nn.bidirectional_dynamic_rnn(
        fw, bw, x, sequence_length=LENGTHS, dtype=tf.float32
    )
    return tf.concat([out_fw, out_bw], 2), states


PROGRAMS = {
    "lstm_stack_fused": lstm_stack_fused,
    "lstm_fused_time_major_initial": lstm_fused_time_major_initial,
    "lstm_loop": lstm_loop,
    "gru_time_major_loop": gru_time_major_loop,
    "stacked_loop": stacked_loop,
    "bidirectional_loop": bidirectional_loop,
    "lstm_dynamic": lstm_dynamic,
    "gru_time_major": gru_time_major,
    "stacked_with_initial_state": stacked_with_initial_state,
    "static_with_residual": static_with_residual,
    "bidirectional": bidirectional,
}


def run(tf, program, initial=None):
    with tf.Graph().as_default():
        outputs, state = program(tf)
        flat_state = _flat(state)
        loss = tf.reduce_sum(tf.square(outputs)) + tf.add_n([tf.reduce_sum(s) for s in flat_state])
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        variables = {v.name: v for v in tf.global_variables()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            if initial is not None:
                for name, value in initial.items():
                    variables[name].load(value, sess)
            start = {name: sess.run(v) for name, v in variables.items()}
            values = sess.run([outputs, *flat_state])
            sess.run(train)
            after = {name: sess.run(v) for name, v in variables.items()}
    shapes = {name: tuple(v.shape.as_list()) for name, v in variables.items()}
    return shapes, start, values, after


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_rnn_matches_tf(name):
    their_shapes, initial, theirs, their_after = run(tf1, PROGRAMS[name])
    our_shapes, _, ours, our_after = run(dataflow, PROGRAMS[name], initial)
    assert our_shapes == their_shapes
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    for key in their_after:
        np.testing.assert_allclose(
            our_after[key], their_after[key], rtol=1e-4, atol=1e-5, err_msg=key
        )


def test_plain_lstm_layers_run_as_one_op_each():
    with dataflow.Graph().as_default() as graph:
        lstm_stack_fused(dataflow)
        types = [op.type for op in graph.get_operations()]
    assert types.count("LSTMSequence") == 2
    assert "MatMul" not in types


def test_second_derivatives_through_the_fused_lstm_name_its_gradient_op():
    with dataflow.Graph().as_default():
        outputs, _ = lstm_stack_fused(dataflow)
        kernel = dataflow.trainable_variables()[0]
        (grad,) = dataflow.gradients(dataflow.reduce_sum(outputs), [kernel])
        with pytest.raises(LookupError, match="LSTMSequenceGrad"):
            dataflow.gradients(dataflow.reduce_sum(grad), [kernel])


def test_reverse_sequence_matches_tf():
    def build(tf):
        with tf.Graph().as_default():
            x = tf.constant(SEQUENCES)
            out = tf.reverse_sequence(x, LENGTHS, seq_axis=1, batch_axis=0)
            with tf.Session() as sess:
                return sess.run(out)

    np.testing.assert_array_equal(build(dataflow), build(tf1))


def test_dynamic_rnn_over_unknown_time_steps_is_one_while_loop():
    tf = dataflow
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [2, None, 3])
        outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), x, dtype=tf.float32)
        types = [op.type for op in graph.get_operations()]
        assert types.count("StatelessWhile") + types.count("While") == 1
        assert outputs.shape.as_list() == [2, None, 2]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for steps in (1, 4, 0):
                out = sess.run(outputs, {x: np.ones((2, steps, 3), np.float32)})
                assert out.shape == (2, steps, 2)


def test_dynamic_rnn_needs_rank_three_and_a_dtype():
    tf = dataflow
    cell = tf.nn.rnn_cell.GRUCell(2)
    with pytest.raises(ValueError, match="rank >= 3"):
        tf.nn.dynamic_rnn(cell, tf.placeholder(tf.float32, [2, 3]), dtype=tf.float32)
    with pytest.raises(ValueError, match="dtype"):
        tf.nn.dynamic_rnn(cell, tf.placeholder(tf.float32, [2, None, 3]))


# --- bad arguments (issue 29): refused when built, with TF1's class ---------------------------
def _rank_two_lengths(tf):
    cell = tf.nn.rnn_cell.BasicLSTMCell(6)
    lengths = tf.constant(LENGTHS.reshape(3, 1))
    tf.nn.dynamic_rnn(cell, tf.constant(SEQUENCES), sequence_length=lengths, dtype=tf.float32)


def _lstm_state_of_another_size(tf):
    # [3, 5, 4] inputs over 6 units: a fused LSTM here, the state sizes read from the cell.
    cell = tf.nn.rnn_cell.LSTMCell(6)
    state = tf.nn.rnn_cell.LSTMStateTuple(tf.zeros([3, 5]), tf.zeros([3, 5]))
    tf.nn.dynamic_rnn(cell, tf.constant(SEQUENCES), initial_state=state)


def _stacked_state_of_another_size(tf):
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(6), tf.nn.rnn_cell.GRUCell(3)])
    tf.nn.dynamic_rnn(cell, tf.constant(SEQUENCES), initial_state=(tf.zeros([3, 6]),) * 2)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (_rank_two_lengths, "sequence_length must be a vector"),
        (_lstm_state_of_another_size, "5 units where the cell's state_size is 6"),
        (_stacked_state_of_another_size, "6 units where the cell's state_size is 3"),
    ],
    ids=["rank_two_lengths", "lstm_state", "stacked_state"],
)
def test_bad_rnn_arguments_raise_tf1s_class_when_built(build, match):
    with tf1.Graph().as_default(), pytest.raises(ValueError):
        build(tf1)
    with dataflow.Graph().as_default(), pytest.raises(ValueError, match=match):
        build(dataflow)
