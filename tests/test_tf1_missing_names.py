"""The TF1 names issue 28 (defect 11) found missing, as real programs use them, against
``tensorflow.compat.v1``: ``tf.nn.static_bidirectional_rnn``, ``tf.nn.lrn``,
``tf.train.ExponentialMovingAverage``, ``tf.image.resize_image_with_crop_or_pad``,
``tf.image.rgb_to_grayscale``, ``tf.read_file``, ``tf.sequence_mask``,
``tf.RegisterGradient`` with ``Graph.gradient_override_map``, ``tf.custom_gradient`` and
``tf.make_template``.

Each program is a function of the module ``tf``, built in a fresh graph of each
library; values, static shapes, dtypes, and the names of variables and ops are compared.
"""

from __future__ import annotations

import itertools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import run_in_fresh_graph

tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()
pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

LIBS = (dataflow, tf1)
RNG = np.random.default_rng(28)
_NAMES = itertools.count()


def _both(program):
    """``program(tf)`` -> (fetches, feeds) run in a fresh graph of each library."""
    return [run_in_fresh_graph(tf, program) for tf in LIBS]


def assert_same_fetches(ours, theirs, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Per fetch: the same shape and dtype, floats within ``rtol``/``atol`` (float32
    rounding of the same computation), everything else (names, shapes, bytes) equal."""
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"fetch {k}: shape {a.shape} != TF's {b.shape}"
        assert a.dtype == b.dtype, f"fetch {k}: dtype {a.dtype} != TF's {b.dtype}"
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"fetch {k}")
        else:
            assert a.tolist() == b.tolist(), f"fetch {k}"


def _unique(prefix: str) -> str:
    # Gradient registries are per process in both libraries: one name per registration.
    return f"{prefix}{next(_NAMES)}_{id(RNG)}"


# --- tf.sequence_mask ----------------------------------------------------------------------
def test_sequence_mask_masks_a_padded_batch_as_tf1() -> None:
    lengths = np.array([2, 0, 4], dtype=np.int32)

    def program(tf):
        n = tf.placeholder(tf.int32, [None], name="lengths")
        masks = [tf.sequence_mask(n), tf.sequence_mask(n, 6, dtype=tf.float32)]
        masks.append(tf.sequence_mask(tf.constant([[1, 3], [2, 0]]), maxlen=tf.constant(4)))
        shapes = tf.constant(" ".join(str(m.shape.as_list()) for m in masks))
        names = tf.constant(" ".join(m.name for m in masks))
        # A loss masked past each sequence's end, the idiom real programs use it for.
        x = tf.constant(np.arange(18, dtype=np.float32).reshape(3, 6))
        loss = tf.reduce_sum(x * masks[1]) / tf.reduce_sum(masks[1])
        return [*masks, shapes, names, loss], {n: lengths}

    ours, theirs = _both(program)
    assert_same_fetches(ours, theirs)


def test_sequence_mask_refuses_a_maxlen_that_is_not_a_scalar() -> None:
    for tf in LIBS:
        with (
            tf.Graph().as_default(),
            pytest.raises(ValueError, match="must be scalar for sequence_mask"),
        ):
            tf.sequence_mask([1, 2], maxlen=[3, 4])


# --- tf.nn.lrn -----------------------------------------------------------------------------
def _lrn_reference(x, radius, bias, alpha, beta):
    sq = x * x
    sums = anp.stack(
        [anp.sum(sq[..., max(0, d - radius) : d + radius + 1], -1) for d in range(x.shape[-1])],
        -1,
    )
    return x / (bias + alpha * sums) ** beta


def test_lrn_values_and_gradients_match_tf1_and_autograd() -> None:
    x = RNG.standard_normal((2, 5, 4, 9)).astype(np.float32)
    cotangent = RNG.standard_normal(x.shape).astype(np.float32)
    # cifar10's first normalization layer, and the defaults.
    settings = [dict(depth_radius=4, bias=1.0, alpha=0.001 / 9.0, beta=0.75), {}]

    def program(tf):
        images = tf.placeholder(tf.float32, [None, 5, 4, 9])
        outs = [tf.nn.lrn(images, name=f"norm{i}", **kw) for i, kw in enumerate(settings)]
        outs.append(tf.nn.local_response_normalization(images, 2, 0.5, 0.3, 0.6))
        grads = [tf.gradients(o, images, grad_ys=cotangent)[0] for o in outs]
        names = tf.constant(" ".join(o.name for o in outs))
        return [*outs, *grads, names], {images: x}

    ours, theirs = _both(program)
    # float32 sums of a few dozen terms: a few ulps of the outputs.
    assert_same_fetches(ours, theirs, rtol=1e-5, atol=1e-6)
    full = [(4, 1.0, 0.001 / 9.0, 0.75), (5, 1.0, 1.0, 0.5), (2, 0.5, 0.3, 0.6)]
    x64 = x.astype(np.float64)
    for k, args in enumerate(full):
        want = _lrn_reference(x64, *args)
        np.testing.assert_allclose(ours[k], want, rtol=1e-5, atol=1e-6)
        vjp = autograd.grad(lambda v, a=args: anp.sum(_lrn_reference(v, *a) * cotangent))
        np.testing.assert_allclose(ours[3 + k], vjp(x64), rtol=1e-4, atol=1e-5)


def test_lrn_second_order_matches_autograd() -> None:
    """TF1's ``LRNGrad`` has no gradient; the composite here does (float32, against
    autograd's in float64)."""
    x = RNG.standard_normal((1, 2, 2, 5)).astype(np.float32)
    w = RNG.standard_normal(x.shape)
    args = (1, 2.0, 0.5, 0.75)
    with dataflow.Graph().as_default():
        images = dataflow.constant(x)
        y = dataflow.nn.lrn(images, 1, bias=2.0, alpha=0.5, beta=0.75)
        (g,) = dataflow.gradients(dataflow.reduce_sum(y * y), images)
        (hvp,) = dataflow.gradients(dataflow.reduce_sum(g * w.astype(np.float32)), images)
        with dataflow.Session() as sess:
            got = sess.run(hvp)

    def first(v):
        return autograd.grad(lambda u: anp.sum(_lrn_reference(u, *args) ** 2))(v)

    want = autograd.grad(lambda v: anp.sum(first(v) * w))(x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_lrn_refuses_what_tf1_refuses() -> None:
    for tf in LIBS:
        with tf.Graph().as_default():
            with pytest.raises(TypeError):
                tf.nn.lrn(tf.zeros([1, 2, 2, 3], dtype=tf.float64))
            with pytest.raises(ValueError, match="rank 4"):
                tf.nn.lrn(tf.zeros([2, 2, 3]))


# --- tf.nn.static_bidirectional_rnn ------------------------------------------------------------
def _birnn_program(use_lengths: bool):
    steps, batch, depth = 4, 3, 2
    xs = RNG.standard_normal((steps, batch, depth)).astype(np.float32)
    lengths = np.array([4, 1, 2], dtype=np.int32)
    weights: dict[str, np.ndarray] = {}

    def program(tf):
        inputs = [tf.placeholder(tf.float32, [None, depth]) for _ in range(steps)]
        feeds = dict(zip(inputs, xs))
        kwargs = {}
        if use_lengths:
            n = tf.placeholder(tf.int32, [None])
            feeds[n] = lengths
            kwargs["sequence_length"] = n
        outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(
            tf.nn.rnn_cell.BasicLSTMCell(3),
            tf.nn.rnn_cell.GRUCell(2),
            inputs,
            dtype=tf.float32,
            **kwargs,
        )
        loss = tf.reduce_sum(tf.square(tf.stack(outputs)))
        grads = tf.gradients(loss, inputs)
        variables = tf.global_variables()
        names = tf.constant(" ".join(f"{v.name}{v.shape.as_list()}" for v in variables))
        shapes = tf.constant(" ".join(str(o.shape.as_list()) for o in outputs))
        init = tf.global_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            for v in variables:  # the same weights in both libraries, by name
                if v.name not in weights:
                    weights[v.name] = RNG.uniform(-0.5, 0.5, v.shape.as_list()).astype("f4")
                v.load(weights[v.name], sess)
            values = sess.run(
                [outputs, state_fw.c, state_fw.h, state_bw, grads, names, shapes], feeds
            )
        return [tf.constant(np.asarray(v)) for v in _flat(values)], None

    return program


def _flat(values):
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flat(v))
        else:
            out.append(v)
    return out


@pytest.mark.parametrize("use_lengths", [False, True], ids=["full", "sequence_length"])
def test_static_bidirectional_rnn_matches_tf1(use_lengths: bool) -> None:
    ours, theirs = _both(_birnn_program(use_lengths))
    assert_same_fetches(ours, theirs, rtol=1e-5, atol=1e-6)


def test_static_bidirectional_rnn_refuses_empty_inputs() -> None:
    for tf in LIBS:
        with tf.Graph().as_default(), pytest.raises(ValueError, match="must not be empty"):
            cell = tf.nn.rnn_cell.BasicLSTMCell(2)
            tf.nn.static_bidirectional_rnn(cell, cell, [], dtype=tf.float32)


# --- tf.train.ExponentialMovingAverage ---------------------------------------------------------
def _ema_program(tf):
    with tf.variable_scope("net"):
        w = tf.get_variable("w", initializer=tf.constant([1.0, -2.0]))
        b = tf.get_variable("b", initializer=tf.constant(0.5))
    step = tf.train.get_or_create_global_step()
    loss = tf.reduce_sum(w * w) + b
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
    name_before = ema.average_name(w)
    with tf.control_dependencies([train]):
        train_op = ema.apply([w, b, loss])
    debiased = tf.train.ExponentialMovingAverage(0.5, zero_debias=True, name="avg")
    loss_avg_op = debiased.apply([loss])
    averages = [ema.average(w), ema.average(b), ema.average(loss), debiased.average(loss)]
    restore = ema.variables_to_restore()
    facts = [
        name_before,
        train_op.name,
        train_op.type,
        ema.name,
        *(a.name for a in averages),
        ema.average_name(b),
        *(f"{k}->{v.name}" for k, v in sorted(restore.items())),
        *sorted(v.name for v in tf.global_variables()),
        *sorted(v.name for v in tf.trainable_variables()),
        *(v.name for v in tf.moving_average_variables()),
    ]
    return train_op, loss_avg_op, averages, facts


def test_exponential_moving_average_matches_tf1() -> None:
    def program(tf):
        train_op, loss_avg_op, averages, facts = _ema_program(tf)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            history = []
            for _ in range(4):
                sess.run([train_op, loss_avg_op])
                history.extend(sess.run(averages))
        return [tf.constant(np.asarray(h)) for h in history] + [tf.constant(facts)], None

    ours, theirs = _both(program)
    assert_same_fetches(ours, theirs)


def test_variables_to_restore_loads_the_averages_for_evaluation(tmp_path) -> None:
    """Train with averages, save; an evaluation graph restores each weight from its
    shadow variable: the way TF1 programs evaluate averaged weights."""

    def program(tf):
        prefix = str(tmp_path / f"{tf.__name__.split('.')[0]}" / "model.ckpt")
        with tf.Graph().as_default():
            train_op, _, averages, _ = _ema_program(tf)
            saver = tf.train.Saver()
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(train_op)
                trained_averages = sess.run(averages[:2])
                saver.save(sess, prefix)
        with tf.Graph().as_default():
            with tf.variable_scope("net"):
                w = tf.get_variable("w", shape=[2])
                b = tf.get_variable("b", shape=[])
            ema = tf.train.ExponentialMovingAverage(0.9)
            to_restore = ema.variables_to_restore()
            with tf.Session() as sess:
                tf.train.Saver(to_restore).restore(sess, prefix)
                restored = sess.run([w, b])
        for got, want in zip(restored, trained_averages):
            np.testing.assert_array_equal(got, want)
        return [tf.constant(np.asarray(r)) for r in restored] + [
            tf.constant(sorted(to_restore))
        ], None

    ours, theirs = _both(program)
    assert_same_fetches(ours, theirs)


def test_moving_average_refuses_integer_variables() -> None:
    for tf in LIBS:
        with tf.Graph().as_default():
            v = tf.Variable(1, name="count")
            with pytest.raises(TypeError, match="half, float, or double"):
                tf.train.ExponentialMovingAverage(0.9).apply([v])


# --- tf.image.resize_image_with_crop_or_pad, rgb_to_grayscale --------------------------------
def test_resize_image_with_crop_or_pad_matches_tf1() -> None:
    image = RNG.uniform(0, 1, (5, 6, 3)).astype(np.float32)
    batch = (RNG.uniform(0, 255, (2, 4, 7, 1))).astype(np.uint8)
    targets = [(5, 6), (3, 2), (8, 9), (2, 10), (9, 1), (4, 7)]

    def program(tf):
        x = tf.placeholder(tf.float32, [5, 6, 3])
        unknown = tf.placeholder(tf.float32, [None, None, 3])
        outs = [tf.image.resize_image_with_crop_or_pad(x, h, w) for h, w in targets]
        outs += [tf.image.resize_image_with_crop_or_pad(unknown, h, w) for h, w in targets]
        outs += [tf.image.resize_image_with_crop_or_pad(batch, h, w) for h, w in targets[:3]]
        outs.append(tf.image.resize_image_with_crop_or_pad(x, tf.constant(4), 8))
        grad = tf.gradients(tf.reduce_sum(tf.square(outs[3])), x)[0]
        shapes = tf.constant(" ".join(str(o.shape.as_list()) for o in outs))
        return [*outs, grad, shapes], {x: image, unknown: image}

    ours, theirs = _both(program)
    assert_same_fetches(ours, theirs)


def test_resize_image_with_crop_or_pad_to_sizes_fed_at_run_time() -> None:
    image = RNG.uniform(0, 1, (5, 6, 2)).astype(np.float32)

    def program(tf):
        h, w = tf.placeholder(tf.int32, []), tf.placeholder(tf.int32, [])
        x = tf.placeholder(tf.float32, [None, None, 2])
        outs = [
            tf.image.resize_image_with_crop_or_pad(x, h, w),
            tf.image.resize_image_with_crop_or_pad(image, h, 3),
        ]
        shapes = tf.constant(" ".join(str(o.shape.as_list()) for o in outs))
        return [*outs, shapes], {x: image, h: 7, w: 4}

    ours, theirs = _both(program)
    assert_same_fetches(ours, theirs)


def test_resize_image_with_crop_or_pad_refuses_what_tf1_refuses() -> None:
    for tf in LIBS:
        with tf.Graph().as_default():
            with pytest.raises(ValueError, match="target_width must be > 0"):
                tf.image.resize_image_with_crop_or_pad(tf.zeros([4, 4, 3]), 2, 0)
            with pytest.raises(ValueError, match="must have either 3 or 4 dimensions"):
                tf.image.resize_image_with_crop_or_pad(tf.zeros([4, 4]), 2, 2)


def test_grayscale_conversions_match_tf1() -> None:
    rgb = RNG.uniform(0, 1, (2, 3, 4, 3)).astype(np.float32)
    rgb8 = (RNG.uniform(0, 255, (3, 4, 3))).astype(np.uint8)

    def program(tf):
        x = tf.placeholder(tf.float32, [None, 3, 4, 3])
        gray = tf.image.rgb_to_grayscale(x)
        gray8 = tf.image.rgb_to_grayscale(rgb8)
        back = tf.image.grayscale_to_rgb(gray8)
        grad = tf.gradients(tf.reduce_sum(gray * gray), x)[0]
        names = tf.constant(" ".join(t.name for t in (gray, gray8, back)))
        shapes = tf.constant(" ".join(str(t.shape.as_list()) for t in (gray, gray8, back)))
        return [gray, gray8, back, grad, names, shapes], {x: rgb}

    ours, theirs = _both(program)
    assert_same_fetches(ours, theirs)
    np.testing.assert_allclose(
        ours[0][..., 0], rgb @ np.array([0.2989, 0.5870, 0.1140]), rtol=1e-6, atol=1e-7
    )


# --- tf.read_file ----------------------------------------------------------------------------
def test_read_file_reads_bytes_as_tf1(tmp_path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) + b"\n\x00end")

    def program(tf):
        name = tf.placeholder(tf.string, [])
        contents = [tf.read_file(name), tf.io.read_file(str(path), name="again")]
        facts = tf.constant(" ".join(f"{c.name}{c.shape.as_list()}" for c in contents))
        return [*contents, tf.strings.length(contents[0]), facts], {name: str(path)}

    ours, theirs = _both(program)
    assert ours[0] == path.read_bytes()
    assert_same_fetches(ours, theirs)


def test_read_file_of_a_missing_file_is_not_found(tmp_path) -> None:
    for tf in LIBS:
        with tf.Graph().as_default():
            contents = tf.read_file(str(tmp_path / "missing.txt"))
            with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError):
                sess.run(contents)


# --- tf.RegisterGradient, Graph.gradient_override_map ------------------------------------------
_CLIP_NAME = {lib: _unique("ClipGradient") for lib in LIBS}
_CLIP_REGISTERED: set = set()


def _clip_gradient(tf):
    # Registered once per library and process, as a program does at import.
    name = _CLIP_NAME[tf]
    if tf not in _CLIP_REGISTERED:
        tf.RegisterGradient(name)(lambda op, grad: [tf.clip_by_value(grad, -0.5, 0.5)])
        _CLIP_REGISTERED.add(tf)
    return name


def test_gradient_override_map_uses_the_registered_gradient() -> None:
    x0 = np.array([-2.0, -0.1, 0.2, 3.0], dtype=np.float32)

    def program(tf):
        name = _clip_gradient(tf)
        g = tf.get_default_graph()
        x = tf.placeholder(tf.float32, [4])
        with g.gradient_override_map({"Identity": name, "Square": "Neg"}):
            clipped = tf.identity(x * 3.0)
            squared = tf.square(x)  # differentiated as a Neg op: -grad
        plain = tf.identity(x * 3.0)
        with tf.variable_scope("layer"):
            w = tf.get_variable("w", initializer=tf.constant(np.ones(4, np.float32)))
        with g.gradient_override_map({"Identity": name}):
            y = tf.identity(w * x)
        grads = tf.gradients(
            [tf.reduce_sum(clipped), tf.reduce_sum(squared), tf.reduce_sum(plain * y)], [x, w]
        )
        attr = clipped.op.get_attr("_gradient_op_type") == name.encode()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(grads, {x: x0})
        return [tf.constant(v) for v in values] + [tf.constant(attr)], None

    ours, theirs = _both(program)
    assert_same_fetches(ours, theirs)


def test_gradient_override_map_reaches_ops_built_in_a_cond_branch() -> None:
    """TF 1.15 builds a branch in the graph itself, so an enclosing override applies to
    its ops (TF 2's ``compat.v1`` builds branches as functions, which do not see it)."""
    name = _clip_gradient(dataflow)
    with dataflow.Graph().as_default() as g:
        y = dataflow.constant(3.0)
        pred = dataflow.placeholder(dataflow.bool, [])
        with g.gradient_override_map({"Identity": name}):
            c = dataflow.cond(pred, lambda: dataflow.identity(y * 2.0), lambda: y)
        (grad,) = dataflow.gradients(c * 4.0, y)
        with dataflow.Session() as sess:
            assert sess.run(grad, {pred: True}) == 1.0  # 4 clipped to 0.5, times 2
            assert sess.run(grad, {pred: False}) == 4.0


def test_gradient_registry_errors_match_tf1() -> None:
    for tf in LIBS:
        name = _clip_gradient(tf)
        with pytest.raises(KeyError):
            tf.RegisterGradient(name)(lambda op, grad: [grad])
        with tf.Graph().as_default() as g:
            with pytest.raises(TypeError):
                with g.gradient_override_map({"Identity": 3}):
                    pass
            x = tf.constant(1.0)
            with g.gradient_override_map({"Identity": _unique("NeverRegistered")}):
                y = tf.identity(x)
            with pytest.raises(LookupError):
                tf.gradients(y, x)


# --- tf.custom_gradient ------------------------------------------------------------------------
def test_custom_gradient_replaces_the_gradient_as_tf1() -> None:
    x0 = np.array([-3.0, 0.0, 2.0, 100.0], dtype=np.float32)

    def program(tf):
        @tf.custom_gradient
        def log1pexp(x):
            e = tf.exp(x)

            def grad(dy):
                return dy * (1 - 1 / (1 + e))

            return tf.log(1 + e), grad

        @tf.custom_gradient
        def clip_gradient_norm(x, scale):
            def grad(dy):
                return tf.clip_by_norm(dy, 1.0) * scale, tf.reduce_sum(dy)

            return tf.identity(x), grad

        x = tf.placeholder(tf.float32, [4])
        scale = tf.constant(2.0)
        y = log1pexp(x)
        z = clip_gradient_norm(x * 5.0, scale)
        grads = tf.gradients([tf.reduce_sum(y), tf.reduce_sum(z * z)], [x, scale])
        return [y, z, *grads], {x: x0}

    ours, theirs = _both(program)
    assert_same_fetches(ours, theirs)
    assert np.isfinite(ours[2]).all()  # the plain gradient of log(1 + exp(100)) is nan


def test_custom_gradient_of_a_function_reading_variables() -> None:
    def program(tf):
        w = tf.get_variable("w", initializer=tf.constant([1.5, -0.5]), use_resource=True)

        @tf.custom_gradient
        def scaled(x):
            def grad(dy, variables=None):
                return dy * w * 0.5, [dy * x * 10.0]

            return x * w, grad

        x = tf.constant([2.0, 3.0])
        grads = tf.gradients(tf.reduce_sum(scaled(x)), [x, w])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(grads)
        return [tf.constant(v) for v in values], None

    ours, theirs = _both(program)
    assert_same_fetches(ours, theirs)


@pytest.mark.parametrize("tf", LIBS, ids=["dataflow", "tf1"])
def test_custom_gradient_needs_a_variables_argument_when_variables_are_read(tf) -> None:
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=tf.constant(1.0), use_resource=True)

        @tf.custom_gradient
        def scaled(x):
            return x * w, lambda dy: dy * w

        with pytest.raises(TypeError, match="variables"):
            scaled(tf.constant(2.0))


# --- tf.make_template --------------------------------------------------------------------------
def test_make_template_shares_variables_and_names_them_as_tf1() -> None:
    x0 = RNG.standard_normal((2, 3)).astype(np.float32)

    def program(tf):
        def dense(x, units):
            w = tf.get_variable(
                "w", [3, units], initializer=tf.constant_initializer(np.arange(3 * units) / 10)
            )
            b = tf.get_variable("b", [units], initializer=tf.zeros_initializer())
            return tf.matmul(x, w) + b

        layer = tf.make_template("dense", dense, units=2)
        x = tf.placeholder(tf.float32, [None, 3])
        first, second = layer(x), layer(x * 2.0)
        other = tf.make_template("dense", dense, units=4)
        with tf.variable_scope("tower"):
            third = other(x)
            fourth = other(x)
        early = tf.make_template("early", dense, create_scope_now_=True, units=1)
        fifth = early(x)
        facts = [
            *(v.name for v in tf.global_variables()),
            *(t.name for t in (first, second, third, fourth, fifth)),
            layer.variable_scope_name,
            other.variable_scope.name,
            *(v.name for v in early.trainable_variables),
            str(len(layer.variables)),
        ]
        grads = tf.gradients(tf.reduce_sum(first * second), tf.trainable_variables()[:2])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run([first, second, third, fourth, fifth, *grads], {x: x0})
        return [tf.constant(v) for v in values] + [tf.constant(facts)], None

    ours, theirs = _both(program)
    assert_same_fetches(ours, theirs)


@pytest.mark.parametrize("tf", LIBS, ids=["dataflow", "tf1"])
def test_make_template_refuses_a_new_trainable_variable_on_a_later_call(tf) -> None:
    with tf.Graph().as_default():
        template = tf.make_template("bad", lambda x: x * tf.Variable(1.0))
        template(1.0)
        with pytest.raises(ValueError, match="Trainable variable created"):
            template(2.0)
