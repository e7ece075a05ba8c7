"""``tf.nn.ctc_loss_v2``, ``safe_embedding_lookup_sparse``, ``raw_rnn`` and
``static_state_saving_rnn`` against ``tensorflow.compat.v1`` (graph + Session): values,
gradients, static shapes and errors."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dataflow

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.nn.rnn_cell needs TF's Keras 2

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(3)


def _run(tf, build):
    with tf.Graph().as_default():
        fetches = build(tf)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run(fetches)


def _assert_same(ours, theirs, rtol, atol):
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, k
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"fetch {k}")


# --- ctc_loss_v2 ----------------------------------------------------------------------------
T, B, C = 8, 3, 5
LOGITS = rng.standard_normal((T, B, C)).astype(np.float32)
LABELS = np.array([[1, 2, 2, 0], [3, 1, 0, 0], [4, 4, 1, 2]], np.int32)
LABEL_LENGTH = np.array([3, 2, 4], np.int32)
LOGIT_LENGTH = np.array([8, 6, 7], np.int32)
SPARSE = (
    np.array([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]], np.int64),
    np.array([1, 3, 4, 0, 1, 2], np.int32),
    [3, 3],
)


def _ctc(tf):
    logits = tf.constant(LOGITS)
    batch_major = tf.constant(np.transpose(LOGITS, (1, 0, 2)))
    out = []
    for blank, labels in ((0, LABELS), (-1, LABELS % 4)):  # the sparse case: blank 2
        loss = tf.nn.ctc_loss_v2(
            tf.constant(labels), logits, LABEL_LENGTH, LOGIT_LENGTH, blank_index=blank
        )
        out += [loss, tf.gradients(tf.reduce_sum(loss * loss), logits)[0]]
    loss = tf.nn.ctc_loss_v2(
        tf.SparseTensor(*SPARSE), batch_major, None, LOGIT_LENGTH, False, blank_index=2
    )
    out += [loss, tf.gradients(tf.reduce_sum(loss), batch_major)[0]]
    return out


def test_ctc_loss_v2_dense_and_sparse_labels_match_tf():
    _assert_same(_run(dataflow, _ctc), _run(tf1, _ctc), rtol=2e-5, atol=2e-5)


def test_ctc_loss_v2_errors_and_shape():
    with dataflow.Graph().as_default():
        with pytest.raises(ValueError, match="blank_index"):
            dataflow.nn.ctc_loss_v2(dataflow.SparseTensor(*SPARSE), LOGITS, None, LOGIT_LENGTH)
        loss = dataflow.nn.ctc_loss_v2(LABELS, LOGITS, LABEL_LENGTH, LOGIT_LENGTH)
        assert loss.shape.as_list() == [B] and loss.dtype == dataflow.float32


# --- safe_embedding_lookup_sparse -----------------------------------------------------------
TABLE = rng.standard_normal((6, 4))
IDS = (
    np.array([[0, 0, 0], [0, 0, 1], [0, 2, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]], np.int64),
    np.array([3, -1, 5, 0, 2, 2], np.int64),
    [2, 3, 2],
)
WEIGHTS = np.array([0.5, 2.0, -1.0, 1.5, 0.25, 3.0])


def _embedding(tf):
    table = tf.constant(TABLE)
    parts = [tf.constant(TABLE[:3]), tf.constant(TABLE[3:])]  # as "div" splits 6 ids
    ids = tf.SparseTensor(*IDS)
    weights = tf.SparseTensor(IDS[0], WEIGHTS, IDS[2])
    out = []
    for combiner, w, default, params, norm in (
        ("mean", weights, None, table, None),
        ("sqrtn", weights, 1, parts, None),
        ("sum", None, 4, table, 1.0),
    ):
        y = tf.nn.safe_embedding_lookup_sparse(
            params, ids, w, combiner=combiner, default_id=default, max_norm=norm
        )
        leaves = params if isinstance(params, list) else [params]
        grads = tf.gradients(tf.reduce_sum(tf.sin(y)), leaves)
        out += [y, *(tf.convert_to_tensor(g) for g in grads)]  # TF's are IndexedSlices
    return out


def test_safe_embedding_lookup_sparse_matches_tf():
    ours = _run(dataflow, _embedding)
    theirs = _run(tf1, _embedding)
    _assert_same(ours, theirs, rtol=1e-10, atol=1e-12)
    shapes = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            ids = tf.sparse_placeholder(tf.int64, [None, None, 2])
            shapes.append(tf.nn.safe_embedding_lookup_sparse(TABLE, ids).shape.as_list())
    assert shapes[0] == shapes[1] == [None, None, 4]
    with dataflow.Graph().as_default():
        with pytest.raises(ValueError, match="combiner"):
            dataflow.nn.safe_embedding_lookup_sparse(
                TABLE, dataflow.SparseTensor(*IDS), combiner="max"
            )


# --- raw_rnn and static_state_saving_rnn ----------------------------------------------------
STEPS, BATCH, DEPTH, UNITS = 5, 3, 4, 6
INPUTS = rng.standard_normal((STEPS, BATCH, DEPTH)).astype(np.float32)
LENGTHS = np.array([5, 2, 3], np.int32)
W1 = rng.uniform(-0.3, 0.3, (DEPTH + UNITS, 4 * UNITS)).astype(np.float32)
W2 = rng.uniform(-0.3, 0.3, (DEPTH + UNITS, 4 * UNITS)).astype(np.float32)


class _Saver:
    """A state saver as TF1's contrib ones: a variable per state name."""

    def __init__(self, tf):
        self.tf, self.vars = tf, {}

    def state(self, name):
        start = np.full((BATCH, UNITS), 0.5 if name == "c" else -0.2, np.float32)
        self.vars[name] = self.tf.Variable(start, name="saved_" + name)
        return self.vars[name]

    def save_state(self, name, value):
        return self.tf.assign(self.vars[name], value)


def _rnns(tf):
    inputs = tf.constant(INPUTS)
    cell = tf.nn.rnn_cell.LSTMCell(UNITS, initializer=tf.constant_initializer(W1))

    def loop_fn(time, cell_output, cell_state, loop_state):
        if cell_output is None:
            state, emit, count = cell.zero_state(BATCH, tf.float32), None, tf.constant(0)
        else:
            state, emit, count = cell_state, cell_output, loop_state + 1
        finished = time >= LENGTHS
        next_input = tf.cond(
            tf.reduce_all(finished),
            lambda: tf.zeros([BATCH, DEPTH], tf.float32),
            lambda: inputs[tf.minimum(time, STEPS - 1)],
        )
        return finished, next_input, state, emit, count

    emit_ta, final, count = tf.nn.raw_rnn(cell, loop_fn)
    emitted = emit_ta.stack()
    variables = tf.trainable_variables()
    loss = tf.reduce_sum(emitted * emitted) + tf.reduce_sum(final.h)
    grads = tf.gradients(loss, variables + [inputs])
    saver = _Saver(tf)
    cell2 = tf.nn.rnn_cell.LSTMCell(UNITS, initializer=tf.constant_initializer(W2))
    steps = [tf.constant(x) for x in INPUTS[:3]]
    outputs, state = tf.nn.static_state_saving_rnn(cell2, steps, saver, ("c", "h"), scope="ssr")
    return [emitted, final.c, final.h, count, *grads], outputs[-1], state.h, saver


def _run_rnns(tf):
    with tf.Graph().as_default():
        fetches, last, state_h, saver = _rnns(tf)
        shapes = [t.shape.as_list() for t in fetches[:3]]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(fetches)
            # each run of the last output saves the state the next run starts from
            first, second = (sess.run([last, state_h]) for _ in range(2))
            saved = sess.run(saver.vars["h"])
    return values, shapes, first + second + [saved]


@pytest.fixture(scope="module")
def rnns():
    return _run_rnns(dataflow), _run_rnns(tf1)


def test_raw_rnn_matches_tf(rnns):
    (ours, our_shapes, _), (theirs, their_shapes, _) = rnns
    assert our_shapes == their_shapes
    _assert_same(ours, theirs, rtol=1e-5, atol=1e-6)


def test_static_state_saving_rnn_matches_tf(rnns):
    (_, _, ours), (_, _, theirs) = rnns
    _assert_same(ours, theirs, rtol=1e-5, atol=1e-6)


def _raw_rnn_with_emit_structure(tf):
    """A GRU over a batch known only when the step runs, emitting a structure of its own
    (the first two units and a count of positive units) with no loop state."""
    inputs = tf.placeholder(tf.float32, [STEPS, None, DEPTH])
    cell = tf.nn.rnn_cell.GRUCell(UNITS, kernel_initializer=tf.constant_initializer(0.15))
    batch = tf.shape(inputs)[1]

    def loop_fn(time, cell_output, cell_state, loop_state):
        if cell_output is None:
            emit = (tf.zeros([2], tf.float32), tf.zeros([], tf.int32))
            return (
                tf.fill([batch], False),
                inputs[0],
                cell.zero_state(batch, tf.float32),
                emit,
                None,
            )
        finished = time >= STEPS
        next_input = tf.cond(
            tf.reduce_all(finished),
            lambda: tf.zeros_like(inputs[0]),
            lambda: inputs[tf.minimum(time, STEPS - 1)],
        )
        positive = tf.reduce_sum(tf.cast(cell_output > 0, tf.int32), 1)
        return finished, next_input, cell_state, (cell_output[:, :2], positive), None

    emit_ta, final, loop_state = tf.nn.raw_rnn(cell, loop_fn)
    assert loop_state is None
    first, count = emit_ta[0].stack(), emit_ta[1].stack()
    shapes = [t.shape.as_list() for t in (first, count, final)]
    fetches = [first, count, final, tf.gradients(tf.reduce_sum(first), inputs)[0]]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return shapes, sess.run(fetches, {inputs: INPUTS})


def test_raw_rnn_emit_structure_and_unknown_batch_match_tf():
    results = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            results.append(_raw_rnn_with_emit_structure(tf))
    (our_shapes, ours), (their_shapes, theirs) = results
    assert our_shapes == their_shapes
    _assert_same(ours, theirs, rtol=1e-5, atol=1e-6)


def test_rnn_driver_errors():
    with dataflow.Graph().as_default():
        cell = dataflow.nn.rnn_cell.LSTMCell(UNITS)
        with pytest.raises(TypeError, match="RNNCell"):
            dataflow.nn.raw_rnn(object(), lambda *a: None)
        with pytest.raises(TypeError, match="callable"):
            dataflow.nn.raw_rnn(cell, None)
        with pytest.raises(ValueError, match="same type"):
            dataflow.nn.static_state_saving_rnn(cell, [INPUTS[0]], _Saver(dataflow), "state")
        with pytest.raises(ValueError, match="#elems"):
            dataflow.nn.static_state_saving_rnn(cell, [INPUTS[0]], _Saver(dataflow), ("c",))
