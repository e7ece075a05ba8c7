"""The natural-exponential, inverse-time and cosine learning-rate schedules of
``tf.train`` against ``tensorflow.compat.v1``: the value at each global step (fed
through a placeholder, as a training loop's step variable would give it), the result's
name and dtype, and the error for a missing step."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()

# Near a cosine's zero, 1 + cos(x) loses float32's relative precision: the error is
# absolute, about the rate (0.1) times a few float32 epsilons.
ATOL = 0.1 * 2e-7

STEPS = [0, 1, 5, 9, 10, 11, 25, 40, 99, 100, 150, 1000]

# (schedule, positional args after (lr, step), keyword args)
CASES = [
    ("natural_exp_decay", (10, 0.3), {}),
    ("natural_exp_decay", (10, 0.3), {"staircase": True}),
    ("inverse_time_decay", (10, 0.5), {}),
    ("inverse_time_decay", (10, 0.5), {"staircase": True}),
    ("cosine_decay", (100,), {}),
    ("cosine_decay", (100,), {"alpha": 0.1}),
    ("cosine_decay_restarts", (10,), {}),
    ("cosine_decay_restarts", (10,), {"t_mul": 1.0, "m_mul": 0.5, "alpha": 0.05}),
    ("cosine_decay_restarts", (7,), {"t_mul": 1.5, "m_mul": 0.9}),
    ("linear_cosine_decay", (100,), {}),
    ("linear_cosine_decay", (100,), {"num_periods": 2.0, "alpha": 0.1, "beta": 0.01}),
]


def _values(lib, schedule, args, kwargs, dtype):
    graph = lib.Graph()
    with graph.as_default():
        step = lib.placeholder(lib.int64, [])
        lr = getattr(lib.train, schedule)(lib.constant(0.1, dtype), step, *args, **kwargs)
        with lib.Session(graph=graph) as sess:
            values = [sess.run(lr, {step: s}) for s in STEPS]
    return lr.name, lr.dtype.name, np.array(values)


@pytest.mark.parametrize(("schedule", "args", "kwargs"), CASES)
def test_schedule_matches_tf1(schedule, args, kwargs) -> None:
    ours = _values(tf, schedule, args, kwargs, "float32")
    theirs = _values(tf1, schedule, args, kwargs, "float32")
    assert ours[1] == theirs[1]
    if schedule == "cosine_decay":
        # TF's result is an inner multiply of the scope (CosineDecay/Mul_3, its index
        # differing between TF versions); ours is named after the scope, as the others.
        assert ours[0] == "CosineDecay:0" and theirs[0].startswith("CosineDecay/")
    else:
        assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=2e-6, atol=ATOL)


@pytest.mark.parametrize(("schedule", "args", "kwargs"), CASES)
def test_a_float64_rate_computes_in_float64(schedule, args, kwargs) -> None:
    # TF 2's compat.v1 schedules mix in float32 constants here (a TypeError or float32
    # rounding), so the float64 curve is checked against the float32 one at float32's
    # precision, and its dtype against the rate's, as TF 1.15 computed it.
    name, dtype, values = _values(tf, schedule, args, kwargs, "float64")
    assert dtype == "float64" and values.dtype == np.float64
    np.testing.assert_allclose(
        values, _values(tf1, schedule, args, kwargs, "float32")[2], rtol=2e-6, atol=ATOL
    )


def test_piecewise_constant_decay_is_piecewise_constant() -> None:
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant


@pytest.mark.parametrize(
    "schedule",
    [
        "natural_exp_decay",
        "inverse_time_decay",
        "cosine_decay",
        "cosine_decay_restarts",
        "linear_cosine_decay",
        "noisy_linear_cosine_decay",
    ],
)
def test_a_missing_global_step_is_a_value_error_as_in_tf1(schedule) -> None:
    args = (10, 0.5) if schedule in ("natural_exp_decay", "inverse_time_decay") else (10,)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="global_step is required"):
            getattr(tf.train, schedule)(0.1, None, *args)
    with tf1.Graph().as_default():
        with pytest.raises(ValueError):  # TF 1.15's message is ours; TF 2's differs
            getattr(tf1.train, schedule)(0.1, None, *args)


def test_noisy_linear_cosine_decay_is_the_linear_cosine_curve_plus_shrinking_noise() -> None:
    # The noise is a fresh normal sample each run, so compare moments: over many runs
    # the mean is the noiseless curve and the spread is sqrt(variance) * cosine * lr.
    runs = 4000
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int64, [])
        noisy = tf.train.noisy_linear_cosine_decay(
            0.1, step, 100, initial_variance=0.5, variance_decay=0.55
        )
        plain = tf.train.linear_cosine_decay(0.1, step, 100)
        with tf.Session() as sess:
            for s in (0, 30, 80):
                samples = np.array([sess.run(noisy, {step: s}) for _ in range(runs)])
                mean = sess.run(plain, {step: s})
                cosine = 0.5 * (1 + np.cos(np.pi * 2 * 0.5 * s / 100))
                std = 0.1 * cosine * np.sqrt(0.5 / (1 + s) ** 0.55)
                assert noisy.name == "NoisyLinearCosineDecay:0" or s
                assert abs(samples.mean() - mean) < 5 * std / np.sqrt(runs)
                assert samples.std() == pytest.approx(std, rel=0.1)
