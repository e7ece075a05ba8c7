"""TF1's housekeeping namespaces against ``tensorflow.compat.v1``: ``tf.app``/``tf.flags``,
``tf.logging``, ``tf.gfile``/``tf.io.gfile``, ``tf.compat``, the old aliases, and the
error a TF1 name we lack gives."""

from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest

import dataflow as tf
from dataflow._util.missing_names import NotProvidedError, tf1_names
from dataflow.testing.tf_parity import assert_parity_on_constants


def _tf1():
    return pytest.importorskip("tensorflow.compat.v1")


# --- tf.app.run and tf.app.flags ----------------------------------------------------------
SCRIPT = """
import {lib} as tf

flags = tf.app.flags
flags.DEFINE_integer("steps", 3, "training steps")
flags.DEFINE_string("logdir", "/tmp/default", "where to write")
flags.DEFINE_float("lr", 0.1, "learning rate")
flags.DEFINE_boolean("verbose", False, "say more")
FLAGS = flags.FLAGS


def main(argv):
    print("steps", FLAGS.steps, "logdir", FLAGS.logdir, "lr", FLAGS.lr, "verbose", FLAGS.verbose)
    print("rest", argv[1:])
    return 0


if __name__ == "__main__":
    tf.app.run()
"""


def _run_script(tmp_path, lib: str, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / f"train_{lib.replace('.', '_')}.py"
    path.write_text(SCRIPT.format(lib=lib))
    return subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.tf
def test_app_run_parses_flags_as_tf1_does(tmp_path) -> None:
    _tf1()
    args = ("--steps=7", "--lr", "0.5", "--verbose", "--unknown=1", "positional")
    ours = _run_script(tmp_path, "dataflow", *args)
    theirs = _run_script(tmp_path, "tensorflow.compat.v1", *args)
    assert ours.returncode == theirs.returncode == 0, ours.stderr[-2000:]
    out = [line for line in ours.stdout.splitlines() if line.startswith(("steps", "rest"))]
    want = [line for line in theirs.stdout.splitlines() if line.startswith(("steps", "rest"))]
    assert out == want
    assert out[0] == "steps 7 logdir /tmp/default lr 0.5 verbose True"


def test_app_run_exits_with_mains_status(tmp_path) -> None:
    path = tmp_path / "fail.py"
    path.write_text("import dataflow as tf\ntf.app.run(main=lambda argv: 3)\n")
    done = subprocess.run([sys.executable, str(path)], capture_output=True, timeout=120)
    assert done.returncode == 3


def test_flags_are_absls() -> None:
    from absl import flags as absl_flags

    assert tf.flags.FLAGS is absl_flags.FLAGS is tf.app.flags.FLAGS
    assert tf.flags.DEFINE_string is absl_flags.DEFINE_string


# --- tf.logging ---------------------------------------------------------------------------
@pytest.mark.tf
def test_logging_names_and_levels_match_tf1() -> None:
    tf1 = _tf1()
    for level in ("DEBUG", "INFO", "WARN", "ERROR", "FATAL"):
        assert getattr(tf.logging, level) == getattr(tf1.logging, level)
    ours = {n for n in dir(tf.logging) if not n.startswith("_")}
    assert set(tf1_names()["logging"]) <= ours


def test_set_verbosity_controls_what_is_shown(caplog) -> None:
    # pytest's handler on the root logger receives what the "dataflow" logger passes on.
    logger = tf.logging.get_logger()
    old = logger.level
    try:
        tf.logging.set_verbosity(tf.logging.WARN)
        assert tf.logging.get_verbosity() == tf.logging.WARN
        tf.logging.info("hidden %d", 1)
        tf.logging.warning("shown %d", 2)
        tf.logging.set_verbosity(tf.logging.INFO)
        tf.logging.info("now shown")
        for _ in range(5):
            tf.logging.log_first_n(tf.logging.INFO, "first", 2)
            tf.logging.log_every_n(tf.logging.INFO, "every", 3)
        messages = [r.getMessage() for r in caplog.records]
        assert "hidden 1" not in messages
        assert messages[:2] == ["shown 2", "now shown"]
        assert messages.count("first") == 2 and messages.count("every") == 2  # calls 0 and 3
    finally:
        logger.setLevel(old)


def test_logging_tensor_hook_logs_through_tf_logging(caplog) -> None:
    logger = tf.logging.get_logger()
    old = logger.level
    try:
        tf.logging.set_verbosity(tf.logging.INFO)
        step = tf.train.get_or_create_global_step()
        loss = tf.constant(2.5, name="loss")
        train = tf.assign_add(step, 1)
        hook = tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=1)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(train)
        assert any("loss = 2.5" in r.getMessage() for r in caplog.records)
        assert all(r.name.startswith("dataflow") for r in caplog.records)
    finally:
        logger.setLevel(old)


# --- tf.gfile and tf.io.gfile -------------------------------------------------------------
@pytest.mark.tf
@pytest.mark.parametrize("root", ["local", "memory"])
def test_gfile_round_trip_and_listing(tmp_path, root: str) -> None:
    base = str(tmp_path) if root == "local" else f"memory://gfile-{id(tmp_path)}"
    g = tf.gfile
    g.MakeDirs(f"{base}/a/b")
    g.MakeDirs(f"{base}/a/b")  # exists already: fine, as in TF1
    with g.GFile(f"{base}/a/b/x.txt", "w") as f:
        f.write("line 1\nline 2\n")
    with g.GFile(f"{base}/a/y.bin", "wb") as f:
        f.write(b"\x00\x01")
    assert g.Exists(f"{base}/a/b/x.txt") and g.IsDirectory(f"{base}/a/b")
    with g.GFile(f"{base}/a/b/x.txt") as f:
        assert f.readlines() == ["line 1\n", "line 2\n"]
    with g.Open(f"{base}/a/y.bin", "rb") as f:
        assert f.read() == b"\x00\x01"
    assert sorted(g.ListDirectory(f"{base}/a")) == ["b", "y.bin"]
    assert [p.rsplit("/", 1)[-1] for p in g.Glob(f"{base}/a/b/*.txt")] == ["x.txt"]
    assert g.Stat(f"{base}/a/y.bin").length == 2
    walked = [(d.rsplit("/", 1)[-1], sub, files) for d, sub, files in g.Walk(f"{base}/a")]
    assert walked == [("a", ["b"], ["y.bin"]), ("b", [], ["x.txt"])]
    g.Copy(f"{base}/a/y.bin", f"{base}/a/z.bin")
    with pytest.raises(tf.errors.AlreadyExistsError):
        g.Copy(f"{base}/a/y.bin", f"{base}/a/z.bin")
    g.Rename(f"{base}/a/z.bin", f"{base}/a/w.bin")
    assert tf.io.gfile.exists(f"{base}/a/w.bin") and not g.Exists(f"{base}/a/z.bin")
    g.Remove(f"{base}/a/w.bin")
    g.DeleteRecursively(f"{base}/a")
    assert not g.Exists(f"{base}/a")


@pytest.mark.tf
def test_gfile_errors_are_tf1s(tmp_path) -> None:
    tf1 = _tf1()
    missing = str(tmp_path / "missing.txt")
    for lib in (tf, tf1):
        with pytest.raises(lib.errors.NotFoundError):
            lib.gfile.GFile(missing).read()
        with pytest.raises(lib.errors.NotFoundError):
            lib.gfile.Remove(missing)
        with pytest.raises(lib.errors.NotFoundError):
            lib.gfile.ListDirectory(missing)
        assert lib.gfile.Exists(missing) is False
        with pytest.raises(lib.errors.NotFoundError):
            lib.gfile.Copy(missing, str(tmp_path / "copy.txt"))
        with pytest.raises(lib.errors.NotFoundError):
            lib.gfile.MkDir(str(tmp_path / "no" / "parent"))
    assert not tf.gfile.Exists(str(tmp_path / "copy.txt"))
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("b")
    for lib in (tf, tf1):
        lib.gfile.MkDir(str(tmp_path / "d"))  # existing: no error
        with pytest.raises(lib.errors.AlreadyExistsError):
            lib.gfile.Rename(str(tmp_path / "a"), str(tmp_path / "b"))


@pytest.mark.tf
def test_gfile_reads_what_tf1_wrote(tmp_path) -> None:
    tf1 = _tf1()
    path = str(tmp_path / "from_tf.txt")
    with tf1.gfile.GFile(path, "w") as f:
        f.write("written by TF\n")
    with tf.gfile.GFile(path) as f:
        assert f.read() == "written by TF\n"
    assert tf.io.gfile.listdir(str(tmp_path)) == tf1.io.gfile.listdir(str(tmp_path))


# --- tf.compat ----------------------------------------------------------------------------
@pytest.mark.tf
def test_compat_helpers_match_tf1(tmp_path) -> None:
    tf1 = _tf1()
    for fn in ("as_bytes", "as_text", "as_str", "as_str_any"):
        for value in ("héllo", b"bytes"):
            assert getattr(tf.compat, fn)(value) == getattr(tf1.compat, fn)(value), fn
    assert tf.compat.as_str_any(12) == tf1.compat.as_str_any(12)
    assert tf.compat.path_to_str(tmp_path) == tf1.compat.path_to_str(tmp_path)
    with pytest.raises(TypeError):
        tf.compat.as_bytes(3)
    assert tf.compat.dimension_value(tf.Dimension(4)) == 4
    assert tf.compat.dimension_value(None) is None


def test_compat_v1_is_the_whole_namespace() -> None:
    import dataflow.compat.v1 as v1

    from dataflow.compat import v1 as v1_again

    assert v1 is tf and v1_again is tf and tf.compat.v1 is tf
    assert v1.placeholder is tf.placeholder


# --- old aliases --------------------------------------------------------------------------
X = np.array([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]], np.float32)


@pytest.mark.tf
@pytest.mark.parametrize(
    "program",
    [
        lambda tf, x: [tf.arg_max(x, 1), tf.arg_min(x, 0)],
        lambda tf, x: [tf.diag(x[0]), tf.diag(x), tf.diag_part(tf.diag(x))],
        lambda tf, x: [tf.linspace(-1.0, 2.0, 7), tf.lin_space(0.0, 1.0, 1)],
        lambda tf, x: [tf.floor_div(x, 0.75), tf.log_sigmoid(x * 40.0)],
        lambda tf, x: [tf.accumulate_n([x, x * 2.0, -x])],
        lambda tf, x: tf.shape_n([x, x[0]]),
        lambda tf, x: tf.gradients(tf.reduce_sum(tf.diag(x) * 3.0), x),
        lambda tf, x: tf.gradients(tf.reduce_sum(tf.log_sigmoid(x)), x),
    ],
    ids=[
        "arg_max",
        "diag",
        "linspace",
        "floor_div",
        "accumulate_n",
        "shape_n",
        "diag_grad",
        "log_sigmoid_grad",
    ],
)
def test_aliases_match_tf1(program) -> None:
    assert_parity_on_constants(_tf1(), program, X)


def test_pre_1_0_names_are_the_current_ops(sess) -> None:
    a, b = tf.constant([3.0, 4.0]), tf.constant([1.0, 2.0])
    got = sess.run([tf.mul(a, b), tf.sub(a, b), tf.neg(a)])
    np.testing.assert_array_equal(got, [[3.0, 8.0], [2.0, 2.0], [-3.0, -4.0]])
    assert tf.mul(a, b).op.type == "Mul" and tf.neg(a).op.type == "Neg"


def test_initializer_aliases_and_moving_average_collection(sess) -> None:
    v = tf.Variable(1.0)
    local = tf.Variable(2.0, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    tf.add_to_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES, v)
    sess.run([tf.initialize_variables([v]), tf.initialize_local_variables()])
    assert sess.run([v, local]) == [1.0, 2.0]
    assert tf.moving_average_variables() == [v]


def test_diag_part_needs_an_even_rank() -> None:
    with pytest.raises(ValueError, match="DiagPart"):
        tf.diag_part(tf.constant([1.0, 2.0, 3.0]))


# --- TF1 names we lack --------------------------------------------------------------------
@pytest.mark.parametrize(
    "namespace,name",
    [("sparse", "cross"), ("nn", "quantized_avg_pool"), ("train", "sdca_optimizer")],
)
def test_a_missing_tf1_name_says_so(namespace: str, name: str) -> None:
    module = tf
    for part in filter(None, namespace.split(".")):
        module = getattr(module, part)
    assert name in tf1_names()[namespace]
    with pytest.raises(NotProvidedError, match="TensorFlow 1 name that dataflow does not"):
        getattr(module, name)
    assert not hasattr(module, name)  # still an AttributeError


def test_a_misspelled_name_is_a_plain_attribute_error() -> None:
    with pytest.raises(AttributeError) as info:
        tf.placeholdr  # noqa: B018 - the lookup is the test
    assert not isinstance(info.value, NotProvidedError)
    assert "has no attribute 'placeholdr'" in str(info.value)


def test_the_name_list_holds_the_namespaces_we_mirror() -> None:
    names = tf1_names()
    assert "placeholder" in names[""] and "FileWriter" in names["summary"]
    assert "dense" in names["layers"] and "BasicLSTMCell" in names["nn.rnn_cell"]
    logging.getLogger(__name__).debug("%d TF1 names", sum(map(len, names.values())))
