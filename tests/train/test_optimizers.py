"""Each optimizer's updates against its formula in numpy (float64), slots, placement.

The references mirror TF1 exactly, including its float32 hyper-parameters: a Python
number becomes a float32 constant cast to the variable's dtype, and Adam's
``beta1_power``/``beta2_power`` are float32 variables. So a float64 reference uses
``f32(lr)``, not ``lr``.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dataflow as tf


def f32(x: float) -> float:
    return float(np.float32(x))


# --- numpy references: (w, grads, **hyper) -> (w_after, {slot: value}) ----------------------
def ref_gradient_descent(w, grads, learning_rate):
    for g in grads:
        w = w - g * f32(learning_rate)
    return w, {}


def ref_momentum(w, grads, learning_rate, momentum, use_nesterov=False):
    lr, mu = f32(learning_rate), f32(momentum)
    accum = np.zeros_like(w)
    for g in grads:
        accum = accum * mu + g
        w = w - (g * lr + accum * mu * lr if use_nesterov else accum * lr)
    return w, {"momentum": accum}


def ref_adagrad(w, grads, learning_rate, initial_accumulator_value=0.1):
    lr = f32(learning_rate)
    accum = np.full_like(w, initial_accumulator_value)
    for g in grads:
        accum = accum + g * g
        w = w - g * lr / np.sqrt(accum)
    return w, {"accumulator": accum}


def ref_rmsprop(w, grads, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, centered=False):
    lr, rho, mu, eps = f32(learning_rate), f32(decay), f32(momentum), f32(epsilon)
    ms, mom, mg = np.ones_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        ms = ms + (g * g - ms) * (1 - rho)
        if centered:
            mg = mg + (g - mg) * (1 - rho)
        mom = mom * mu + g * lr / np.sqrt(ms - mg * mg + eps if centered else ms + eps)
        w = w - mom
    slots = {"rms": ms, "momentum": mom}
    if centered:
        slots["mg"] = mg
    return w, slots


def ref_adam(w, grads, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8):
    lr, b1, b2, eps = f32(learning_rate), f32(beta1), f32(beta2), f32(epsilon)
    b1p, b2p = np.float32(beta1), np.float32(beta2)  # float32 variables, as in TF1
    m, v = np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        alpha = lr * np.sqrt(1 - float(b2p)) / (1 - float(b1p))
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        w = w - m * alpha / (np.sqrt(v) + eps)
        b1p, b2p = b1p * np.float32(beta1), b2p * np.float32(beta2)
    return w, {"m": m, "v": v, "beta1_power": b1p, "beta2_power": b2p}


CASES = {
    "gd": (tf.train.GradientDescentOptimizer, ref_gradient_descent, {"learning_rate": 0.1}),
    "momentum": (tf.train.MomentumOptimizer, ref_momentum, {"learning_rate": 0.1, "momentum": 0.9}),
    "nesterov": (
        tf.train.MomentumOptimizer,
        ref_momentum,
        {"learning_rate": 0.05, "momentum": 0.7, "use_nesterov": True},
    ),
    "adagrad": (
        tf.train.AdagradOptimizer,
        ref_adagrad,
        {"learning_rate": 0.3, "initial_accumulator_value": 0.2},
    ),
    "rmsprop": (tf.train.RMSPropOptimizer, ref_rmsprop, {"learning_rate": 0.01}),
    "rmsprop_momentum": (
        tf.train.RMSPropOptimizer,
        ref_rmsprop,
        {"learning_rate": 0.02, "decay": 0.8, "momentum": 0.5, "epsilon": 1e-6},
    ),
    "rmsprop_centered": (
        tf.train.RMSPropOptimizer,
        ref_rmsprop,
        {"learning_rate": 0.02, "momentum": 0.3, "epsilon": 1e-4, "centered": True},
    ),
    "adam": (tf.train.AdamOptimizer, ref_adam, {}),
    "adam_custom": (
        tf.train.AdamOptimizer,
        ref_adam,
        {"learning_rate": 0.05, "beta1": 0.5, "beta2": 0.75, "epsilon": 1e-3},
    ),
}

# TF1's slot variable names: slot name -> variable name (checked against TF below).
SLOT_NAMES = {
    "gd": {},
    "momentum": {"momentum": "w/Momentum:0"},
    "nesterov": {"momentum": "w/Momentum:0"},
    "adagrad": {"accumulator": "w/Adagrad:0"},
    "rmsprop": {"rms": "w/RMSProp:0", "momentum": "w/RMSProp_1:0"},
    "rmsprop_momentum": {"rms": "w/RMSProp:0", "momentum": "w/RMSProp_1:0"},
    "rmsprop_centered": {"rms": "w/RMSProp:0", "mg": "w/RMSProp_1:0", "momentum": "w/RMSProp_2:0"},
    "adam": {"m": "w/Adam:0", "v": "w/Adam_1:0"},
    "adam_custom": {"m": "w/Adam:0", "v": "w/Adam_1:0"},
}


def _grads(rng, shape, steps):
    return [rng.standard_normal(shape) for _ in range(steps)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_updates_match_formula_float64(case, sess):
    make, ref, hyper = CASES[case]
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 4))
    grads = _grads(rng, (3, 4), 5)
    w = tf.Variable(w0, name="w")
    g = tf.placeholder(tf.float64, (3, 4), name="g")
    opt = make(**hyper)
    train = opt.apply_gradients([(g, w)])
    sess.run(tf.global_variables_initializer())
    for grad in grads:
        assert sess.run(train, {g: grad}) is None
    want_w, want_slots = ref(w0, grads, **hyper)
    got = sess.run(w)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want_w, rtol=1e-12, atol=1e-14)
    assert opt.get_slot_names() == sorted(SLOT_NAMES[case])
    for slot_name, var_name in SLOT_NAMES[case].items():
        slot = opt.get_slot(w, slot_name)
        assert slot.name == var_name
        assert not slot.trainable
        assert slot in tf.global_variables() and slot not in tf.trainable_variables()
        np.testing.assert_allclose(sess.run(slot), want_slots[slot_name], rtol=1e-12, atol=1e-14)
    if case.startswith("adam"):
        b1p, b2p = opt._get_beta_accumulators()
        assert (b1p.name, b2p.name) == ("beta1_power:0", "beta2_power:0")
        assert b1p.dtype == tf.float32 and not b1p.trainable
        assert sess.run(b1p) == want_slots["beta1_power"]
        assert sess.run(b2p) == want_slots["beta2_power"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_float32_stays_float32_and_close(case, sess):
    make, ref, hyper = CASES[case]
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal(7).astype(np.float32)
    grads = [g.astype(np.float32) for g in _grads(rng, 7, 4)]
    w = tf.Variable(w0, name="w")
    g = tf.placeholder(tf.float32, [None], name="g")
    train = make(**hyper).apply_gradients([(g, w)])
    sess.run(tf.global_variables_initializer())
    for grad in grads:
        sess.run(train, {g: grad})
    got = sess.run(w)
    assert got.dtype == np.float32
    want, _ = ref(w0.astype(np.float64), [x.astype(np.float64) for x in grads], **hyper)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["gd", "momentum", "adagrad", "rmsprop_centered", "adam"])
def test_one_update_op_per_variable_colocated_with_it(case, sess):
    make, _, hyper = CASES[case]
    with tf.device("/cpu:0"):
        a = tf.Variable(np.ones((2, 2)), name="a")
        b = tf.Variable(np.ones(3), name="b")
    opt = make(**hyper)
    train = opt.apply_gradients([(tf.constant(np.ones((2, 2))), a), (tf.constant(np.ones(3)), b)])
    ops = tf.get_default_graph().get_operations()
    applies = [op for op in ops if op.type.startswith("ResourceApply")]
    assert len(applies) == 2
    for op, var in zip(applies, [a, b], strict=True):
        assert op.inputs[0] is var.handle
        assert op.colocation_groups == (var.op.name,)
        assert op.name.startswith(f"{opt.get_name()}/update_{var.op.name}/")
        assert op.outputs == ()
    for slot_name in opt.get_slot_names():
        for var in (a, b):
            assert opt.get_slot(var, slot_name).op.colocation_groups == (var.op.name,)
    sess.run(tf.global_variables_initializer())
    placement = sess.placement(train)
    for op in applies:
        assert placement[op.name] == placement[op.inputs[0].op.name]
    assert train.name == opt.get_name()
    assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)


def test_variables_lists_slots_and_non_slot_variables_sorted():
    w = tf.Variable(np.ones(2), name="w")
    b = tf.Variable(np.ones(2), name="a")
    opt = tf.train.AdamOptimizer()
    opt.apply_gradients([(tf.constant(np.ones(2)), w), (tf.constant(np.ones(2)), b)])
    assert [v.name for v in opt.variables()] == [
        "a/Adam:0",
        "a/Adam_1:0",
        "beta1_power:0",
        "beta2_power:0",
        "w/Adam:0",
        "w/Adam_1:0",
    ]
    # beta powers live with the first variable by name.
    assert opt._get_beta_accumulators()[0].op.colocation_groups == (b.op.name,)
    assert opt.get_slot(w, "nope") is None
    assert opt.get_slot(tf.Variable(1.0), "m") is None


def test_slots_are_made_once_across_apply_calls(sess):
    w = tf.Variable(np.array([1.0, 2.0]), name="w")
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    first = opt.apply_gradients([(tf.constant(np.ones(2)), w)])
    second = opt.apply_gradients([(tf.constant(np.ones(2)), w)])
    assert second.name == "Momentum_1"
    assert [v.name for v in opt.variables()] == ["w/Momentum:0"]
    sess.run(tf.global_variables_initializer())
    sess.run(first)
    sess.run(second)
    want, slots = ref_momentum(np.array([1.0, 2.0]), [np.ones(2)] * 2, 0.1, 0.9)
    np.testing.assert_allclose(sess.run(w), want, rtol=1e-12)
    np.testing.assert_allclose(sess.run(opt.get_slot(w, "momentum")), slots["momentum"])


def test_slots_ignore_the_callers_name_scope_and_control_dependencies(sess):
    w = tf.Variable(np.array([1.0, 2.0]), name="w")
    gate = tf.no_op(name="gate")
    with tf.name_scope("outer"), tf.control_dependencies([gate]):
        train = tf.train.AdagradOptimizer(0.1).apply_gradients([(tf.constant(np.ones(2)), w)])
    slot = [v for v in tf.global_variables() if v.name.startswith("w/")][0]
    assert slot.name == "w/Adagrad:0"
    assert slot.initializer.control_inputs == ()
    assert train.name == "outer/Adagrad"
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(slot), [0.1, 0.1])


def test_learning_rate_may_be_a_tensor_or_a_callable(sess):
    w = tf.Variable(np.array([1.0, 2.0]), name="w")
    lr = tf.placeholder(tf.float64, [], name="lr")
    grad = tf.constant(np.array([1.0, -1.0]))
    by_tensor = tf.train.GradientDescentOptimizer(lr).apply_gradients([(grad, w)])
    by_callable = tf.train.MomentumOptimizer(lambda: 0.5, lambda: 0.0).apply_gradients([(grad, w)])
    sess.run(tf.global_variables_initializer())
    sess.run(by_tensor, {lr: 0.25})
    np.testing.assert_allclose(sess.run(w), [0.75, 2.25])
    sess.run(by_tensor, {lr: 0.125})
    np.testing.assert_allclose(sess.run(w), [0.625, 2.375])
    sess.run(by_callable)
    np.testing.assert_allclose(sess.run(w), [0.125, 2.875])


def test_global_step_increments_after_the_updates(sess):
    w = tf.Variable(np.array([1.0]), name="w")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.5).apply_gradients(
        [(tf.constant(np.array([1.0])), w)], global_step=step
    )
    assert train.type == "AssignAddVariableOp" and train.name == "GradientDescent"
    group = tf.get_default_graph().get_operation_by_name("GradientDescent/update")
    assert group in train.control_inputs
    sess.run(tf.global_variables_initializer())
    for i in range(1, 4):
        sess.run(train)
        assert sess.run(step) == i
    assert sess.run(step).dtype == np.int64
    np.testing.assert_allclose(sess.run(w), [-0.5])


def test_concurrent_steps_lose_no_update():
    # Several threads run the train op at once; each update is atomic (the variable's
    # lock), so with a constant gradient the result is exactly steps * lr * g.
    w = tf.Variable(np.zeros(1000, np.float32), name="w")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(1.0).apply_gradients(
        [(tf.constant(np.ones(1000, np.float32)), w)], global_step=step
    )
    threads, per_thread = 4, 50
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())

        def work():
            for _ in range(per_thread):
                sess.run(train)

        pool = [threading.Thread(target=work) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        np.testing.assert_array_equal(sess.run(w), -threads * per_thread)
        assert sess.run(step) == threads * per_thread


# --- errors ---------------------------------------------------------------------------------
def test_apply_gradients_errors():
    w = tf.Variable(np.ones(2), name="w")
    opt = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, w)])
    with pytest.raises(TypeError, match="Gradient must be convertible"):
        opt.apply_gradients([(object(), w)])
    with pytest.raises(NotImplementedError, match="unsupported type"):
        opt.apply_gradients([(tf.constant(np.ones(2)), tf.constant(np.ones(2)))])
    with pytest.raises(TypeError, match="dtype float32, but the variable has dtype float64"):
        opt.apply_gradients([(tf.constant(np.ones(2, np.float32)), w)])
    with pytest.raises(ValueError, match="does not match the variable's shape"):
        opt.apply_gradients([(tf.constant(np.ones(3)), w)])


def test_runtime_shape_mismatch_is_invalid_argument(sess):
    w = tf.Variable(np.ones(2), name="w")
    g = tf.placeholder(tf.float64, [None])
    train = tf.train.AdamOptimizer().apply_gradients([(g, w)])
    sess.run(tf.global_variables_initializer())
    with pytest.raises(tf.errors.InvalidArgumentError, match="same shape"):
        sess.run(train, {g: np.ones(3)})
    np.testing.assert_array_equal(sess.run(w), [1.0, 1.0])  # untouched


def test_constructor_errors():
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        tf.train.Optimizer(False, "")
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


def test_subclass_without_update_rule_raises():
    class Broken(tf.train.Optimizer):
        def __init__(self):
            super().__init__(False, "Broken")

    w = tf.Variable(np.ones(2), name="w")
    with pytest.raises(NotImplementedError, match="_resource_apply_dense"):
        Broken().apply_gradients([(tf.constant(np.ones(2)), w)])


def test_tf1_style_custom_optimizer(sess):
    """A subclass written the TF1 way: slots, ``_prepare``, ``_apply_dense`` with assigns."""

    class SignSGD(tf.train.Optimizer):
        def __init__(self, learning_rate, name="SignSGD"):
            super().__init__(False, name)
            self._lr = learning_rate

        def _create_slots(self, var_list):
            for v in var_list:
                self._get_or_make_slot_with_initializer(
                    v, tf.constant_initializer(0.5), v.shape, v.dtype, "scale", self._name
                )
                self._zeros_slot(v, "count", self._name)

        def _prepare(self):
            self._lr_t = tf.convert_to_tensor(self._lr, name="learning_rate")

        def _apply_dense(self, grad, var):
            scale = self.get_slot(var, "scale")
            count = self.get_slot(var, "count")
            step = tf.cast(self._lr_t, var.dtype) * scale * tf.sign(grad)
            return tf.group(var.assign_sub(step), count.assign_add(tf.ones_like(var)))

    w = tf.Variable(np.array([1.0, -1.0, 0.0]), name="w")
    opt = SignSGD(0.2)
    train = opt.minimize(tf.reduce_sum(w * np.array([3.0, -2.0, 1.0])))
    assert [v.name for v in opt.variables()] == ["w/SignSGD:0", "w/SignSGD_1:0"]
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    sess.run(train)
    np.testing.assert_allclose(
        sess.run(w), [1.0 - 2 * f32(0.2) * 0.5, -1.0 + 2 * f32(0.2) * 0.5, -2 * f32(0.2) * 0.5]
    )
    np.testing.assert_allclose(sess.run(opt.get_slot(w, "count")), [2.0, 2.0, 2.0])


# --- buffer recycling in the update kernels -------------------------------------------------
@pytest.mark.parametrize(
    "case", ["gd", "momentum", "nesterov", "adagrad", "rmsprop_centered", "adam"]
)
def test_a_value_read_before_an_update_never_changes(case, sess):
    """The kernels reuse retired buffers; a read taken before an update (still held by
    the step when the update runs) must keep its value."""
    make, ref, hyper = CASES[case]
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((4, 3))
    grads = _grads(rng, (4, 3), 6)
    w = tf.Variable(w0, name="w")
    g = tf.placeholder(tf.float64, (4, 3))
    before = w.read_value()
    with tf.control_dependencies([before]):
        train = make(**hyper).apply_gradients([(g, w)])
    with tf.control_dependencies([train]):
        after = w.read_value()
        delta = before - after
    sess.run(tf.global_variables_initializer())
    previous = w0
    for i, grad in enumerate(grads):
        got_delta, got_after = sess.run([delta, after], {g: grad})
        want_after, _ = ref(w0, grads[: i + 1], **hyper)
        np.testing.assert_allclose(got_after, want_after, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got_delta, previous - want_after, rtol=1e-9, atol=1e-12)
        previous = want_after


def _address(store, name):
    return store.read(name).__array_interface__["data"][0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_updates_write_in_place_when_nobody_holds_the_buffer(case, sess):
    make, _, hyper = CASES[case]
    w = tf.Variable(np.ones((64, 64)), name="w")
    opt = make(**hyper)
    train = opt.apply_gradients([(tf.constant(np.full((64, 64), 0.5)), w)])
    sess.run(tf.global_variables_initializer())
    store = sess.backend.resource_store()
    names = [
        "w",
        *(s.name.split(":")[0] for s in (opt.get_slot(w, n) for n in opt.get_slot_names())),
    ]
    sess.run(train)
    before = {name: _address(store, name) for name in names}
    for _ in range(3):
        sess.run(train)
    assert {name: _address(store, name) for name in names} == before
    assert not any(store.read(name).flags.writeable for name in names)


def test_a_held_value_is_copied_on_write_then_updates_go_in_place_again(sess):
    # Fetches are private copies already; a py_func, though, receives the stored buffer
    # itself and may keep it. The update must then leave that buffer alone.
    kept = []
    w = tf.Variable(np.ones((8, 8), np.float32), name="w")
    train = tf.train.AdamOptimizer(0.1).apply_gradients(
        [(tf.constant(np.ones((8, 8), np.float32)), w)]
    )
    keep = tf.py_func(lambda a: kept.append(a) or np.float32(0), [w.read_value()], tf.float32)
    sess.run(tf.global_variables_initializer())
    store = sess.backend.resource_store()
    sess.run(keep)
    assert kept[0] is store.read("w")  # the stored buffer, not a copy
    sess.run(train)
    np.testing.assert_array_equal(kept[0], 1)  # the update went to a new buffer
    assert store.read("w") is not kept[0]
    assert (store.read("w") < 1).all()
    kept.clear()
    address = _address(store, "w")
    sess.run(train)
    assert _address(store, "w") == address  # nobody holds it now: in place


def test_buffer_pool_hands_out_only_buffers_nobody_holds():
    from dataflow.ops.state.buffer_pool import BufferPool

    pool = BufferPool(np)
    held = np.zeros(3)
    pool.retire(held)
    fresh = pool.like(held)
    assert fresh is not held  # ``held`` is still referenced here
    fresh.flags.writeable = False  # as stored values are
    fresh_id = id(fresh)
    pool.retire(fresh)
    del fresh  # now only the pool holds it
    reused = pool.like(np.zeros(3))
    assert id(reused) == fresh_id and reused.flags.writeable
    assert pool.like(np.zeros(3)) is not held
    assert pool.like(np.zeros(4)).shape == (4,)
