"""tf.nn activations, softmax, cross-entropies, bias_add, l2_loss, moments, l2_normalize,
dropout and embedding_lookup, against ``autograd.numpy`` references and formulas."""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import pytest

import dataflow as tf
from dataflow.testing.grad_check import check_forward, check_op

from .. import specs_nn

# Piecewise linear ops (relu, pools, lookups) have zero second derivatives; autograd warns
# that its second derivative "seems independent of input" (it is, and so is ours).
pytestmark = pytest.mark.filterwarnings("ignore:Output seems independent of input")
rng = np.random.default_rng(2)

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def ref_log_softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)  # a constant shift: no gradient needed
    s = x - m
    return s - anp.log(anp.sum(anp.exp(s), axis=axis, keepdims=True))


def ref_softmax(x, axis=-1):
    return anp.exp(ref_log_softmax(x, axis))


def _away_from(x, points, gap=1e-3):
    """Moves values off the kinks so finite differences are meaningful."""
    x = np.array(x)
    for p in points:
        close = np.abs(x - p) < gap
        x[close] = p + 2 * gap
    return x


# --- activations: their rows are in the op table (tests/ops/specs_nn.py) ---------------------
ACTIVATIONS = {row.name: row for row in specs_nn.ACTIVATIONS}


@pytest.mark.parametrize(
    "name",
    [
        "relu",
        "relu6",
        "elu",
        "selu",
        "softplus",
        "leaky_relu",
        "nn_sigmoid",
        "nn_tanh",
        "softsign",
        "swish",
    ],
)
def test_activation_float32_and_extremes(name, sess):
    build, ref = ACTIVATIONS[name].builder(tf), ACTIVATIONS[name].reference
    x = np.array([-1e4, -50.0, -1.5, 0.5, 3.0, 7.0, 50.0, 1e4], np.float32)
    xt = tf.constant(x)
    y = build(xt)
    got, grad = sess.run([y, tf.gradients(y, xt)[0]])
    assert got.dtype == np.float32 and grad.dtype == np.float32
    assert np.all(np.isfinite(got)) and np.all(np.isfinite(grad))
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=1e-6, atol=1e-6)


def test_relu_gradient_at_zero_and_with_nan_upstream(sess):
    """As TF: 0 at 0; a NaN upstream gradient stays NaN even at inactive units."""
    x = tf.constant([-1.0, 0.0, 2.0])
    g = tf.gradients(tf.nn.relu(x), x, grad_ys=tf.constant([2.0, 2.0, 3.0]))[0]
    np.testing.assert_array_equal(sess.run(g), [0.0, 0.0, 3.0])
    g = tf.gradients(tf.nn.relu(x), x, grad_ys=tf.constant([np.nan, np.nan, 3.0]))[0]
    np.testing.assert_array_equal(sess.run(g), [np.nan, np.nan, 3.0])


def test_relu_integer(sess):
    assert sess.run(tf.nn.relu(tf.constant([-2, 0, 3]))).tolist() == [0, 0, 3]


def test_relu_grad_op_second_order():
    """ReluGrad's own gradient (ReluGrad again), reached through tf.gradients."""
    x = _away_from(rng.standard_normal((3, 4)), [0.0])

    def build(g):
        xt = tf.constant(x)
        return tf.gradients(tf.nn.relu(xt), xt, grad_ys=g)[0]

    check_op(build, lambda g: g * (x > 0), [rng.standard_normal((3, 4))])


# --- softmax / log_softmax -----------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
def test_softmax_and_log_softmax(axis):
    x = rng.standard_normal((2, 3, 4))
    check_op(lambda a: tf.nn.softmax(a, axis=axis), lambda a: ref_softmax(a, axis), [x])
    check_op(lambda a: tf.nn.log_softmax(a, axis=axis), lambda a: ref_log_softmax(a, axis), [x])


def test_softmax_dim_alias_and_default_axis():
    x = rng.standard_normal((3, 5))
    check_forward(lambda a: tf.nn.softmax(a, dim=0), lambda a: ref_softmax(a, 0), [x])
    check_forward(lambda a: tf.nn.log_softmax(a), lambda a: ref_log_softmax(a, -1), [x])
    with pytest.raises(ValueError, match="both"):
        tf.nn.softmax(tf.constant(x), axis=0, dim=0)
    with pytest.raises(ValueError, match="out of range"):
        tf.nn.softmax(tf.constant(x), axis=2)


def test_softmax_large_logits_are_stable(sess):
    x = tf.constant([[1e4, 0.0, -1e4], [5e3, 5e3, 5e3]], tf.float32)
    sm, lsm = sess.run([tf.nn.softmax(x), tf.nn.log_softmax(x)])
    np.testing.assert_allclose(sm, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)
    np.testing.assert_allclose(lsm, [[0, -1e4, -2e4], [-np.log(3)] * 3], rtol=1e-6)
    g = sess.run(tf.gradients(tf.reduce_sum(tf.nn.log_softmax(x) * [[1.0, 2, 3]] * 1), x)[0])
    assert np.all(np.isfinite(g))


# --- cross-entropies -------------------------------------------------------------------------
def _distribution(shape, axis=-1):
    p = rng.random(shape) + 0.1
    return p / p.sum(axis=axis, keepdims=True)


def ref_xent(labels, logits, axis=-1):
    return -anp.sum(labels * ref_log_softmax(logits, axis), axis=axis)


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_cross_entropy_v2(axis):
    logits = rng.standard_normal((4, 5)) * 3
    labels = _distribution((4, 5), axis)

    def build(lab, lg):
        return tf.nn.softmax_cross_entropy_with_logits_v2(labels=lab, logits=lg, axis=axis)

    # Both inputs to first order (labels get -log_softmax(logits)).
    check_op(build, lambda lab, lg: ref_xent(lab, lg, axis), [labels, logits], order=1)
    # Logits to second order (through the op's second output, the softmax Jacobian).
    check_op(build, lambda lab, lg: ref_xent(lab, lg, axis), [labels, logits], wrt=[1])


def test_softmax_cross_entropy_v1_stops_label_gradient(sess):
    logits = tf.constant(rng.standard_normal((3, 4)))
    labels = tf.constant(_distribution((3, 4)))
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    g_labels, g_logits = tf.gradients(loss, [labels, logits])
    assert g_labels is None
    want = sess.run(tf.nn.softmax(logits) - labels)
    np.testing.assert_allclose(sess.run(g_logits), want, rtol=1e-12)
    loss_dim0 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, dim=0)
    assert loss_dim0.shape.as_list() == [4]
    with pytest.raises(ValueError, match="named"):
        tf.nn.softmax_cross_entropy_with_logits(labels, logits)


def test_softmax_cross_entropy_rank3_and_broadcast_labels():
    logits = rng.standard_normal((2, 3, 4))
    labels = _distribution((3, 4))
    check_op(
        lambda lab, lg: tf.nn.softmax_cross_entropy_with_logits_v2(labels=lab, logits=lg),
        lambda lab, lg: ref_xent(lab, lg),
        [labels, logits],
        wrt=[1],
    )


def test_sparse_softmax_cross_entropy():
    logits = rng.standard_normal((5, 4)) * 2
    labels = np.array([0, 3, 1, 1, 2], np.int64)
    onehot = np.eye(4)[labels]
    check_op(
        lambda lg, lab: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=lab, logits=lg),
        lambda lg, lab: ref_xent(onehot, lg),
        [logits, labels],
    )


def test_sparse_softmax_cross_entropy_rank3_int32():
    logits = rng.standard_normal((2, 3, 4))
    labels = rng.integers(0, 4, (2, 3)).astype(np.int32)
    onehot = np.eye(4)[labels]
    check_op(
        lambda lg, lab: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=lab, logits=lg),
        lambda lg, lab: ref_xent(onehot, lg),
        [logits, labels],
    )


def test_sparse_softmax_cross_entropy_errors(sess):
    logits = tf.constant(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="Rank mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[[0, 1]], logits=logits)
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0.0, 1.0], logits=logits)
    bad = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 3], logits=logits)
    with pytest.raises(tf.errors.InvalidArgumentError, match="valid range of \\[0, 3\\)"):
        sess.run(bad)


def test_cross_entropies_with_huge_logits_are_finite_and_exact(sess):
    logits = tf.constant([[1e4, 0.0, -1e4], [-1e4, 1e4, 0.0]], tf.float32)
    onehot = tf.constant([[1.0, 0, 0], [1.0, 0, 0]], tf.float32)
    dense = tf.nn.softmax_cross_entropy_with_logits_v2(labels=onehot, logits=logits)
    sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 0], logits=logits)
    sig = tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.constant([1.0, 0.0, 1.0, 0.0]), logits=tf.constant([1e4, 1e4, -1e4, -1e4])
    )
    grads = tf.gradients([dense, sparse], logits)[0]
    d, s, sg, g = sess.run([dense, sparse, sig, grads])
    np.testing.assert_allclose(d, [0.0, 2e4], rtol=1e-6)
    np.testing.assert_allclose(s, [0.0, 2e4], rtol=1e-6)
    np.testing.assert_allclose(sg, [0.0, 1e4, 1e4, 0.0], rtol=1e-6)
    np.testing.assert_allclose(g, 2 * np.array([[0, 0, 0], [-1.0, 1, 0]]), atol=1e-6)


def test_sigmoid_cross_entropy():
    logits = rng.standard_normal((3, 4)) * 3
    labels = rng.random((3, 4))

    def ref(lab, lg):
        return anp.maximum(lg, 0) - lg * lab + anp.log1p(anp.exp(-anp.abs(lg)))

    check_op(
        lambda lab, lg: tf.nn.sigmoid_cross_entropy_with_logits(labels=lab, logits=lg),
        ref,
        [labels, logits],
    )
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros([2]), logits=tf.zeros([3]))


def test_weighted_cross_entropy():
    logits = rng.standard_normal((3, 4)) * 3
    labels = rng.random((3, 4))

    def ref(lab, lg):
        p = 1 / (1 + anp.exp(-lg))
        return -(lab * anp.log(p) * 2.5 + (1 - lab) * anp.log(1 - p))

    check_op(
        lambda lab, lg: tf.nn.weighted_cross_entropy_with_logits(
            labels=lab, logits=lg, pos_weight=2.5
        ),
        ref,
        [labels, logits],
    )


def test_weighted_cross_entropy_huge_logits_and_targets_alias(sess):
    out = tf.nn.weighted_cross_entropy_with_logits(
        targets=tf.constant([1.0, 0.0, 1.0, 0.0]),
        logits=tf.constant([1e4, 1e4, -1e4, -1e4]),
        pos_weight=3.0,
    )
    np.testing.assert_allclose(sess.run(out), [0.0, 1e4, 3e4, 0.0], rtol=1e-6)


# --- bias_add, l2_loss, moments, l2_normalize ------------------------------------------------
def test_bias_add():
    x = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal(4)
    check_op(lambda a, c: tf.nn.bias_add(a, c), lambda a, c: a + c, [x, b])
    check_op(
        lambda a, c: tf.nn.bias_add(a, c, data_format="NCHW"),
        lambda a, c: a + c[:, None],
        [rng.standard_normal((2, 4, 3)), b],
    )
    check_op(
        lambda a, c: tf.nn.bias_add(a, c, data_format="NCHW"),
        lambda a, c: a + c[:, None, None],
        [rng.standard_normal((2, 4, 3, 2)), b],
    )


def test_bias_add_errors():
    with pytest.raises(ValueError, match="must be equal"):
        tf.nn.bias_add(tf.zeros([2, 3]), tf.zeros([4]))
    with pytest.raises(ValueError, match="1-D"):
        tf.nn.bias_add(tf.zeros([2, 3]), tf.zeros([1, 3]))
    with pytest.raises(ValueError, match="rank at least 2"):
        tf.nn.bias_add(tf.zeros([3]), tf.zeros([3]))


def test_xw_plus_b_and_relu_layer():
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal(2)
    check_op(tf.nn.xw_plus_b, lambda a, c, d: anp.dot(a, c) + d, [x, w, b])
    check_op(tf.nn.relu_layer, lambda a, c, d: anp.maximum(anp.dot(a, c) + d, 0.0), [x, w, b])


def test_batch_normalization():
    x = rng.standard_normal((4, 3))
    mean, var = rng.standard_normal(3), rng.random(3) + 0.5
    offset, scale = rng.standard_normal(3), rng.standard_normal(3)

    def ref(a, m, v, o, s):
        return (a - m) / anp.sqrt(v + 1e-3) * s + o

    check_op(
        lambda *t: tf.nn.batch_normalization(*t, variance_epsilon=1e-3),
        ref,
        [x, mean, var, offset, scale],
    )
    check_op(
        lambda a, m, v: tf.nn.batch_normalization(a, m, v, None, None, 1e-3),
        lambda a, m, v: (a - m) / anp.sqrt(v + 1e-3),
        [x, mean, var],
    )


def test_zero_fraction(sess):
    x = tf.constant([[0, 1, 0, 2]], tf.int32)
    out = tf.nn.zero_fraction(x)
    assert out.dtype == tf.float32
    assert sess.run(out) == 0.5


def test_l2_loss():
    check_op(tf.nn.l2_loss, lambda a: anp.sum(a**2) / 2, [rng.standard_normal((3, 4))])


@pytest.mark.parametrize("axes,keep", [([0], False), ([0, 1], True), ([1], False), ([0, 2], False)])
def test_moments(axes, keep):
    x = rng.standard_normal((3, 4, 2))
    t = tuple(axes)
    check_op(
        lambda a: tf.nn.moments(a, axes, keep_dims=keep)[0],
        lambda a: anp.mean(a, axis=t, keepdims=keep),
        [x],
    )
    check_op(
        lambda a: tf.nn.moments(a, axes, keep_dims=keep)[1],
        lambda a: anp.var(a, axis=t, keepdims=keep),
        [x],
    )


def test_moments_float16_and_keepdims_alias(sess):
    x = rng.standard_normal((8, 3)).astype(np.float16)
    mean, var = tf.nn.moments(tf.constant(x), [0], keepdims=True)
    assert mean.dtype == tf.float16 and mean.shape.as_list() == [1, 3]
    m, v = sess.run([mean, var])
    np.testing.assert_allclose(m, x.astype(np.float32).mean(0, keepdims=True), rtol=1e-3)
    np.testing.assert_allclose(v, x.astype(np.float32).var(0, keepdims=True), rtol=1e-3)


@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1]])
def test_l2_normalize(axis):
    x = rng.standard_normal((3, 4))
    ax = tuple(axis) if isinstance(axis, list) else axis

    def ref(a):
        return a / anp.sqrt(anp.maximum(anp.sum(a**2, axis=ax, keepdims=True), 1e-12))

    check_op(lambda a: tf.nn.l2_normalize(a, axis=axis), ref, [x])


def test_l2_normalize_dim_alias_and_zero_vector(sess):
    x = tf.constant([[0.0, 0.0], [3.0, 4.0]])
    np.testing.assert_allclose(
        sess.run(tf.nn.l2_normalize(x, dim=1)), [[0, 0], [0.6, 0.8]], rtol=1e-6
    )


# --- dropout ---------------------------------------------------------------------------------
def test_dropout_statistics_and_gradient(sess):
    x = tf.constant(np.ones((200, 100), np.float32))
    y = tf.nn.dropout(x, keep_prob=0.8, seed=3)
    g = tf.gradients(y, x)[0]
    yv, gv = sess.run([y, g])
    assert yv.dtype == np.float32
    kept = yv != 0
    assert set(np.unique(yv)) <= {0.0, np.float32(1 / 0.8)}
    assert abs(kept.mean() - 0.8) < 0.02
    np.testing.assert_array_equal(gv, yv)  # d(x * mask / keep)/dx = mask / keep


def test_dropout_rate_noise_shape_and_seeds(sess):
    x = tf.constant(np.ones((50, 4, 6), np.float32))
    y = tf.nn.dropout(x, rate=0.5, noise_shape=[50, 1, 6], seed=1)
    v = sess.run(y)
    assert np.all(v == v[:, :1, :])  # one mask per (batch, channel)
    assert set(np.unique(v)) <= {0.0, 2.0}
    tf.set_random_seed(7)
    a = tf.nn.dropout(x, rate=0.5, seed=1)
    first = sess.run(a)
    with tf.Session() as other:
        np.testing.assert_array_equal(other.run(a), first)
    assert not np.array_equal(sess.run(a), first)  # a new mask every step


def test_dropout_tensor_keep_prob_and_rate_zero(sess):
    keep = tf.placeholder(tf.float32, [])
    x = tf.constant(np.ones((100, 100), np.float32))
    y = tf.nn.dropout(x, keep_prob=keep)
    np.testing.assert_array_equal(sess.run(y, {keep: 1.0}), np.ones((100, 100)))
    assert abs((sess.run(y, {keep: 0.5}) == 0).mean() - 0.5) < 0.03
    np.testing.assert_array_equal(sess.run(tf.nn.dropout(x, rate=0.0)), np.ones((100, 100)))


def test_dropout_errors():
    x = tf.zeros([3])
    with pytest.raises(ValueError, match="exactly one"):
        tf.nn.dropout(x)
    with pytest.raises(ValueError, match="exactly one"):
        tf.nn.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError, match="range"):
        tf.nn.dropout(x, rate=1.0)
    with pytest.raises(ValueError, match="range"):
        tf.nn.dropout(x, keep_prob=0.0)
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dropout(tf.zeros([3], tf.int32), rate=0.5)


# --- embedding_lookup ----------------------------------------------------------------------
def test_embedding_lookup_tensor_gradient_is_dense():
    table = rng.standard_normal((6, 3))
    ids = np.array([[0, 5], [2, 2]], np.int32)
    check_op(lambda t, i: tf.nn.embedding_lookup(t, i), lambda t, i: t[ids], [table, ids])


def test_embedding_lookup_variable(sess):
    table = rng.standard_normal((5, 2)).astype(np.float32)
    var = tf.Variable(table)
    ids = tf.constant([4, 0, 4])
    out = tf.nn.embedding_lookup(var, ids)
    grad = tf.gradients(tf.reduce_sum(out), var)[0]
    assert isinstance(grad, tf.IndexedSlices)  # as in TF1: the rows looked up
    sess.run(tf.global_variables_initializer())
    o, g, dense = sess.run([out, grad, tf.convert_to_tensor(grad)])
    np.testing.assert_array_equal(o, table[[4, 0, 4]])
    np.testing.assert_array_equal(g.indices, [4, 0, 4])
    np.testing.assert_array_equal(g.values, np.ones((3, 2)))
    want = np.zeros((5, 2), np.float32)
    want[4], want[0] = 2, 1
    np.testing.assert_array_equal(dense, want)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_sharded(strategy):
    vocab, n = 10, 3
    full = rng.standard_normal((vocab, 2))
    if strategy == "mod":
        rows = [list(range(p, vocab, n)) for p in range(n)]
    else:
        rows = [list(range(0, 4)), list(range(4, 7)), list(range(7, 10))]
    shards = [full[r] for r in rows]
    ids = np.array([[9, 0, 4], [3, 3, 8]], np.int64)

    def ref(*args):
        table = anp.concatenate(args[:n], axis=0)
        order = np.argsort(np.concatenate(rows))
        return table[order][ids]

    check_op(
        lambda *args: tf.nn.embedding_lookup(list(args[:n]), args[n], partition_strategy=strategy),
        ref,
        shards + [ids],
        order=1,
    )


def test_embedding_lookup_sharded_variables_and_max_norm(sess):
    shards = [
        tf.Variable(np.full((2, 2), 3.0, np.float32)),
        tf.Variable(np.full((2, 2), 0.1, np.float32)),
    ]
    out = tf.nn.embedding_lookup(shards, tf.constant([0, 1, 2, 3]), max_norm=1.0)
    grads = [tf.convert_to_tensor(g) for g in tf.gradients(tf.reduce_sum(out), shards)]
    sess.run(tf.global_variables_initializer())
    o, g0, g1 = sess.run([out] + grads)
    s = 1 / np.sqrt(2)
    np.testing.assert_allclose(o, [[s, s], [0.1, 0.1], [s, s], [0.1, 0.1]], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g1), np.ones((2, 2)), rtol=1e-6)
    assert np.asarray(g0).shape == (2, 2)


def test_embedding_lookup_errors():
    with pytest.raises(ValueError, match="partition_strategy"):
        tf.nn.embedding_lookup([tf.zeros([2, 2])] * 2, [0], partition_strategy="hash")
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.nn.embedding_lookup(tf.zeros([2, 2]), tf.constant([0.0]))
