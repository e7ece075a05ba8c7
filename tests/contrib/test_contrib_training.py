"""``tf.contrib.layers.optimize_loss`` and ``embed_sequence`` against the core TF1
programs TF 1.15's contrib source builds for them; ``tf.contrib.training.HParams`` and
``tf.contrib.learn.preprocessing.VocabularyProcessor`` against TF 1.15's documented
behaviour; ``tf.contrib.rnn.DeviceWrapper`` against ``tf.nn.rnn_cell.DeviceWrapper``."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1

RNG = np.random.default_rng(1528)
X = RNG.normal(size=(8, 4)).astype(np.float32)
Y = RNG.normal(size=(8, 1)).astype(np.float32)
IDS = RNG.integers(0, 7, size=(3, 5)).astype(np.int32)
STEPS = 3


def train(tf, build):
    """Runs ``build(tf) -> (train_tensor, global_step)`` STEPS times from TF's initial
    values; returns the fetched losses, the steps, and the final variables."""
    with tf.Graph().as_default():
        train_op, step = build(tf)
        variables = {v.name: v for v in tf.global_variables()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            start = {n: sess.run(v) for n, v in variables.items()}
            losses = [sess.run(train_op) for _ in range(STEPS)]
            final = {n: sess.run(v) for n, v in variables.items()}
            return start, losses, sess.run(step), final, len(tf.get_collection("summaries"))


def model(tf):
    w = tf.get_variable("w", [4, 1])
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    return tf.reduce_mean(tf.square(tf.matmul(tf.constant(X), w) + b - Y))


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "Momentum"])
def test_optimize_loss_matches_core_tf1(optimizer):
    def contrib(tf):
        loss = model(tf)
        step = tf.train.get_or_create_global_step()
        decay = lambda lr, gs: tf.train.exponential_decay(lr, gs, 1, 0.5)
        op = tf.contrib.layers.optimize_loss(
            loss,
            step,
            0.1,
            optimizer,
            clip_gradients=0.5,
            learning_rate_decay_fn=decay,
            summaries=["loss", "gradients", "global_gradient_norm"],
        )
        return op, step

    def reference(tf):
        """TF 1.15's optimize_loss, in core TF1."""
        loss = model(tf)
        step = tf.train.get_or_create_global_step()
        with tf.variable_scope("OptimizeLoss"):
            lr = tf.get_variable(
                "learning_rate", [], trainable=False, initializer=tf.constant_initializer(0.1)
            )
            lr = tf.train.exponential_decay(lr, step, 1, 0.5)
            opt = {
                "SGD": lambda: tf.train.GradientDescentOptimizer(lr),
                "Adam": lambda: tf.train.AdamOptimizer(lr),
                "Momentum": lambda: tf.train.MomentumOptimizer(lr, momentum=0.9),
            }[optimizer]()
            grads, variables = zip(*opt.compute_gradients(loss))
            tf.summary.scalar("global_norm/gradient_norm", tf.global_norm(grads))
            grads, _ = tf.clip_by_global_norm(list(grads), 0.5)
            tf.summary.scalar("loss", loss)
            for g, v in zip(grads, variables):
                tf.summary.histogram("gradients/" + v.name.replace(":", "_"), g)
            tf.summary.scalar("global_norm/clipped_gradient_norm", tf.global_norm(grads))
            update = opt.apply_gradients(
                list(zip(grads, variables)), global_step=step, name="train"
            )
            with tf.control_dependencies([update]):
                return tf.identity(loss), step

    start, their_losses, their_step, theirs, their_summaries = train(tf1, reference)

    def contrib_from_tf_start(tf):
        op, step = contrib(tf)
        for v in tf.global_variables():
            if v.name in ("w:0", "b:0"):
                tf.add_to_collection("start", v.assign(start[v.name]))
        return tf.group(*tf.get_collection("start")), step, op

    with dataflow.Graph().as_default():
        init_from_tf, step, op = contrib_from_tf_start(dataflow)
        variables = {v.name: v for v in dataflow.global_variables()}
        with dataflow.Session() as sess:
            sess.run(dataflow.global_variables_initializer())
            sess.run(init_from_tf)
            our_losses = [sess.run(op) for _ in range(STEPS)]
            assert sess.run(step) == their_step == STEPS
            ours = {n: sess.run(v) for n, v in variables.items()}
        assert len(dataflow.get_collection("summaries")) == their_summaries
    assert sorted(ours) == sorted(theirs)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-5)
    for name in theirs:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_optimize_loss_bad_input():
    tf = dataflow
    loss = model(tf)
    step = tf.train.get_or_create_global_step()
    with pytest.raises(ValueError, match="Optimizer name should be one of"):
        tf.contrib.layers.optimize_loss(loss, step, 0.1, "Adadelta")
    with pytest.raises(ValueError, match="Invalid learning_rate"):
        tf.contrib.layers.optimize_loss(loss, step, -0.1, "SGD", name="a")
    with pytest.raises(ValueError, match="Summaries should be one of"):
        tf.contrib.layers.optimize_loss(loss, step, 0.1, "SGD", summaries=["norms"], name="b")
    with pytest.raises(ValueError, match="Learning rate is None"):
        tf.contrib.layers.optimize_loss(loss, step, None, "SGD", name="c")
    with pytest.raises(ValueError, match="Unrecognized optimizer"):
        tf.contrib.layers.optimize_loss(loss, step, 0.1, 3, name="d")


def test_optimize_loss_runs_update_ops_and_multiplies_gradients():
    tf = dataflow
    loss = model(tf)
    counter = tf.Variable(0.0, trainable=False)
    tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, tf.assign_add(counter, 1.0))
    w = tf.trainable_variables()[0]
    step = tf.train.get_or_create_global_step()
    op = tf.contrib.layers.optimize_loss(
        loss,
        step,
        1.0,
        tf.train.GradientDescentOptimizer,
        gradient_multipliers={"w": 0.0},
        increment_global_step=False,
    )
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(w)
        sess.run(op)
        np.testing.assert_array_equal(sess.run(w), before)  # multiplied by 0
        assert sess.run(counter) == 1.0 and sess.run(step) == 0


def test_embed_sequence_matches_core_tf1():
    with tf1.Graph().as_default():
        with tf1.variable_scope("EmbedSequence"):
            table = tf1.get_variable("embeddings", [7, 3])
        out = tf1.nn.embedding_lookup(table, tf1.constant(IDS))
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            table_value, theirs = sess.run([table, out])
    tf = dataflow
    ours = tf.contrib.layers.embed_sequence(tf.constant(IDS), vocab_size=7, embed_dim=3)
    again = tf.contrib.layers.embed_sequence(tf.constant(IDS), scope="EmbedSequence", reuse=True)
    (table,) = tf.model_variables()
    assert table.op.name == "EmbedSequence/embeddings"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        table.load(table_value, sess)
        a, b = sess.run([ours, again])
    np.testing.assert_array_equal(a, theirs)  # a gather: exact
    np.testing.assert_array_equal(b, theirs)
    with pytest.raises(ValueError, match="Must specify vocab size"):
        tf.contrib.layers.embed_sequence(tf.constant(IDS), vocab_size=7)


# --- HParams -------------------------------------------------------------------------
def test_hparams_parse_and_casts():
    hp = dataflow.contrib.training.HParams(
        learning_rate=0.1, layers=[64, 32], name="model", use_bn=False, steps=10
    )
    assert hp.learning_rate == 0.1 and hp.layers == [64, 32] and "steps" in hp
    hp.parse("learning_rate=1, layers=[8,16,4], use_bn=true, name=big")
    assert hp.values() == {
        "learning_rate": 1.0,
        "layers": [8, 16, 4],
        "name": "big",
        "use_bn": True,
        "steps": 10,
    }
    assert isinstance(hp.learning_rate, float)
    hp.override_from_dict({"steps": 20})
    assert hp.steps == 20 and hp.get("missing", 3) == 3
    again = dataflow.contrib.training.HParams(**hp.values()).parse_json(hp.to_json())
    assert again.values() == hp.values()
    assert str(hp) == str(sorted(hp.values().items()))
    for bad, match in [
        ("steps=1.5", "Could not parse"),
        ("epochs=3", "Unknown hyperparameter"),
        ("steps=1,steps=2", "Multiple assignments"),
        ("steps", "Malformed"),
    ]:
        with pytest.raises(ValueError, match=match):
            hp.parse(bad)
    with pytest.raises(ValueError, match="Could not cast"):
        hp.set_hparam("steps", 2.5)  # a float never narrows to an int
    with pytest.raises(ValueError, match="Could not cast"):
        hp.set_hparam("use_bn", 1)  # nor does a number become a bool
    with pytest.raises(ValueError, match="Must pass a list"):
        hp.set_hparam("layers", 3)
    with pytest.raises(ValueError, match="reserved"):
        hp.add_hparam("parse", 1)


# --- VocabularyProcessor -----------------------------------------------------------------
def test_vocabulary_processor(tmp_path):
    docs = ["I like the NASA rocket", "the rocket's launch-pad, the MoonLander", "unseen words"]
    vp = dataflow.contrib.learn.preprocessing.VocabularyProcessor(6)
    ids = np.array(list(vp.fit_transform(docs[:2])))
    # words in order of first appearance from 1; "MoonLander" splits at the capital
    words = [
        "<UNK>",
        "I",
        "like",
        "the",
        "NASA",
        "rocket",
        "rocket's",
        "launch-pad",
        "Moon",
        "Lander",
    ]
    assert [vp.vocabulary_.reverse(i) for i in range(len(vp.vocabulary_))] == words
    np.testing.assert_array_equal(ids, [[1, 2, 3, 4, 5, 0], [3, 6, 7, 3, 8, 9]])
    assert ids.dtype == np.int64
    np.testing.assert_array_equal(list(vp.transform(docs[2:])), [[0] * 6])  # frozen
    path = str(tmp_path / "vocab")
    vp.save(path)
    restored = dataflow.contrib.learn.preprocessing.VocabularyProcessor.restore(path)
    np.testing.assert_array_equal(list(restored.transform(docs[:2])), ids)
    assert list(restored.reverse([ids[0][:3]])) == ["I like the"]
    frequent = dataflow.contrib.learn.preprocessing.VocabularyProcessor(4, min_frequency=1)
    np.testing.assert_array_equal(
        list(frequent.fit_transform(["b a b", "a c b"])), [[1, 2, 1, 0], [2, 0, 1, 0]]
    )


# --- DeviceWrapper -----------------------------------------------------------------------
def test_device_wrapper_matches_tf1():
    seq = RNG.normal(size=(2, 3, 4)).astype(np.float32)

    def run(tf, wrapper, initial=None):
        with tf.Graph().as_default():
            cell = wrapper(tf.nn.rnn_cell.GRUCell(3), "/cpu:0")
            outputs, state = tf.nn.static_rnn(
                cell, [tf.constant(seq[:, t]) for t in range(3)], dtype=tf.float32
            )
            variables = {v.name: v for v in tf.global_variables()}
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for name, value in (initial or {}).items():
                    variables[name].load(value, sess)
                start = {n: sess.run(v) for n, v in variables.items()}
                return start, sess.run(outputs + [state]), outputs[-1].device

    start, theirs, _ = run(tf1, tf1.nn.rnn_cell.DeviceWrapper)
    ours_start, ours, device = run(dataflow, dataflow.contrib.rnn.DeviceWrapper, start)
    assert sorted(ours_start) == sorted(start) and "CPU:0" in device
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
