"""The TF 2 idiom for TF1 code, ``import dataflow.compat.v1 as tf; tf.disable_v2_behavior()``,
and the rest of that family of switches, against ``tensorflow.compat.v1``."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import dataflow as tf

# A TF1 program as ported to TF 2: the two-line preamble, then graph-mode code.
SCRIPT = """
import json
import {lib} as tf
tf.disable_v2_behavior()
tf.disable_eager_execution()

x = tf.placeholder(tf.float32, [None, 2])
w = tf.Variable([[1.0], [2.0]])
loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
i = tf.while_loop(lambda i: i < 5, lambda i: i + 1, [tf.constant(0)])
report = {{
    "eager": tf.executing_eagerly(),
    "eager_outside": tf.executing_eagerly_outside_functions(),
    "resource": tf.resource_variables_enabled(),
    "cfv2": tf.control_flow_v2_enabled(),
}}
tf.enable_resource_variables()
tf.enable_control_flow_v2()
report["resource_on"] = tf.resource_variables_enabled()
report["cfv2_on"] = tf.control_flow_v2_enabled()
tf.disable_resource_variables()
tf.disable_control_flow_v2()
tf.disable_tensor_equality()
tf.disable_v2_tensorshape()
report["resource_off"] = tf.resource_variables_enabled()
report["cfv2_off"] = tf.control_flow_v2_enabled()
report["dim"] = type(x.shape[1]).__name__
report["hashable"] = len({{x: 1, w: 2}})
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train, {{x: [[1.0, 1.0], [0.5, -1.0]]}})
    report["w"] = sess.run(w).ravel().tolist()
    report["i"] = int(sess.run(i))
print("REPORT", json.dumps(report))
"""


def _report(tmp_path, lib: str) -> dict:
    path = tmp_path / f"ported_{lib.replace('.', '_')}.py"
    path.write_text(SCRIPT.format(lib=lib))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("REPORT ")][-1]
    return json.loads(line[len("REPORT ") :])


@pytest.mark.tf
def test_ported_program_runs_as_under_tf1(tmp_path) -> None:
    pytest.importorskip("tensorflow")
    ours = _report(tmp_path, "dataflow.compat.v1")
    theirs = _report(tmp_path, "tensorflow.compat.v1")
    # float32 weights after three steps of sums of a few products: a few ulps apart.
    assert ours.pop("w") == pytest.approx(theirs.pop("w"), rel=1e-6)
    assert ours == theirs
    assert ours["eager"] is False and ours["resource_on"] is True and ours["dim"] == "Dimension"


def test_compat_v1_is_the_package_with_the_switches() -> None:
    import dataflow.compat.v1 as v1

    assert v1 is tf
    assert v1.disable_v2_behavior() is None
    assert v1.executing_eagerly() is False


@pytest.mark.parametrize(
    ("call", "args"),
    [
        ("enable_v2_behavior", ()),
        ("enable_eager_execution", ()),
        ("enable_tensor_equality", ()),
        ("enable_v2_tensorshape", ()),
    ],
)
def test_v2_only_behaviour_is_a_clear_error(call, args) -> None:
    with pytest.raises(ValueError, match=rf"tf\.{call}: dataflow runs TensorFlow 1 graph mode"):
        getattr(tf, call)(*args)


def test_switches_do_not_leak_between_settings() -> None:
    assert tf.resource_variables_enabled() is False
    tf.enable_resource_variables()
    try:
        assert tf.resource_variables_enabled() is True
        assert tf.control_flow_v2_enabled() is False
    finally:
        tf.disable_resource_variables()
    assert tf.resource_variables_enabled() is False


@pytest.mark.tf
def test_every_switch_tf1_has_is_provided() -> None:
    tf1 = pytest.importorskip("tensorflow").compat.v1
    family = re.compile(
        r"^(enable|disable)_(v2_behavior|eager_execution|resource_variables|tensor_equality|"
        r"control_flow_v2|v2_tensorshape)$|^(executing_eagerly.*|.*_enabled)$"
    )
    theirs = {n for n in dir(tf1) if family.match(n) and callable(getattr(tf1, n))}
    assert theirs >= {"disable_v2_behavior", "executing_eagerly", "resource_variables_enabled"}
    missing = {n for n in theirs if not callable(getattr(tf, n, None))}
    assert not missing
