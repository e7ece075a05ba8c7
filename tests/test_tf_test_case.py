"""``tf.test``: a TF1 project's own test file, written the way TF1 users wrote them (a
``tf.test.TestCase`` subclass), runs on dataflow under pytest and under ``tf.test.main``
in a subprocess, and the same file passes on ``tensorflow.compat.v1``; a failing
assertion fails the run. (``test_session``, TestCase's helper, is collected by name and
skips itself, in TF1 too: 9 tests pass, 1 skips.)"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dataflow as tf

PROJECT_TEST = """
    import os
    import threading

    import numpy as np
    import {module} as tf


    def scaled_softmax(x, scale):
        return tf.nn.softmax(x * scale)


    class ModelTest(tf.test.TestCase):

        def testSessionsAndEvaluate(self):
            x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
            y = tf.matmul(x, x)
            with self.cached_session() as sess:
                self.assertAllClose(sess.run(y), [[7.0, 10.0], [15.0, 22.0]])
                self.assertIs(tf.get_default_session(), sess)
            with self.test_session() as again:
                self.assertIs(again, sess)
            with self.session() as fresh:
                self.assertIsNot(fresh, sess)
                self.assertAllEqual(fresh.run(tf.shape(y)), [2, 2])
            expected = {{"y": np.array([[7, 10], [15, 22]]), "t": ([[1, 2], [3, 4]], [1, 2])}}
            self.assertAllClose(self.evaluate({{"y": y, "t": (x, x[0])}}), expected)

        def testFreshGraphPerTest(self):
            self.assertEqual(len(tf.get_default_graph().get_operations()), 0)
            tf.constant(1.0, name="only")
            self.assertEqual(tf.get_default_graph().seed, 87654321)

        def testSessionOnAnotherGraph(self):
            g = tf.Graph()
            with g.as_default():
                c = tf.constant(5)
            with self.session(graph=g) as sess:
                self.assertIs(sess.graph, g)
                self.assertEqual(sess.run(c), 5)

        def testAssertions(self):
            self.assertAllCloseAccordingToType(np.float16([1.0, 2.0]), [1.0005, 2.001])
            with self.assertRaises(AssertionError):
                self.assertAllCloseAccordingToType(np.float64([1.0]), [1.0005])
            with self.assertRaises(AssertionError):
                self.assertAllClose([1.0, 2.0], [1.0, 2.0, 3.0])
            self.assertNotAllClose([1.0], [1.1])
            self.assertNear(1.0, 1.05, 0.1)
            self.assertArrayNear([1.0, 2.0], [1.01, 1.99], 0.02)
            self.assertShapeEqual(np.zeros((2, 3)), tf.zeros([2, 3]))
            self.assertDeviceEqual("/cpu:0", "/device:CPU:0")
            self.assertAllInRange([0.1, 0.5], 0.0, 1.0)
            self.assertAllInSet([1, 2, 1], {{1, 2, 3}})
            self.assertAllGreater([2, 3], 1)
            self.assertDTypeEqual(np.zeros(2, np.float32), tf.float32)
            self.assertAllEqual([[1, 2]], np.array([[1, 2]]))
            with self.assertRaises(AssertionError):
                self.assertAllEqual([1, 2], [1, 3])
            graph_def = tf.Graph().as_graph_def()
            self.assertProtoEquals(str(graph_def), graph_def)

        def testOpErrors(self):
            x = tf.placeholder(tf.float32)
            checked = tf.debugging.check_numerics(x, "found a NaN")
            with self.cached_session() as sess:
                with self.assertRaisesOpError("found a NaN"):
                    sess.run(checked, {{x: np.nan}})
                with self.assertRaisesWithPredicateMatch(
                        tf.errors.InvalidArgumentError, lambda e: "NaN" in e.message):
                    sess.run(checked, {{x: np.nan}})

        def testGradientCheck(self):
            x = tf.placeholder(tf.float64, [2, 3])
            y = scaled_softmax(x, 2.0)
            with self.cached_session():
                error = tf.test.compute_gradient_error(x, [2, 3], y, [2, 3])
                theoretical, numerical = tf.test.compute_gradient(
                    x, [2, 3], y, [2, 3], x_init_value=np.arange(6.0).reshape(2, 3) / 6)
            self.assertLess(error, 1e-6)
            self.assertEqual(theoretical.shape, (6, 6))
            self.assertAllClose(theoretical, numerical, atol=1e-6)

        def testTempDirAndThreads(self):
            path = os.path.join(self.get_temp_dir(), "file.txt")
            with open(path, "w") as f:
                f.write("x")
            self.assertTrue(os.path.isdir(tf.test.get_temp_dir()))
            results = []
            threads = [self.checkedThread(target=results.append, args=(i,)) for i in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertCountEqual(results, [0, 1, 2])

        def testGpuQueries(self):
            self.assertEqual(bool(tf.test.gpu_device_name()), tf.test.is_gpu_available())
            self.assertIsInstance(tf.test.is_built_with_cuda(), bool)

        def testStubOut(self):
            stubs = tf.test.StubOutForTesting()
            stubs.Set(os.path, "isdir", lambda p: "stubbed")
            self.assertEqual(os.path.isdir("/"), "stubbed")
            stubs.CleanUp()
            self.assertTrue(os.path.isdir("/"))
            with tf.test.mock.patch.object(os, "getcwd", return_value="here"):
                self.assertEqual(os.getcwd(), "here")
{failing}

    if __name__ == "__main__":
        tf.test.main()
"""

FAILING = """
        def testThatFails(self):
            self.assertAllClose([1.0], [2.0])
"""


def write(tmp_path, module, failing=""):
    path = tmp_path / "model_test.py"
    path.write_text(textwrap.dedent(PROJECT_TEST.format(module=module, failing=failing)))
    return path


def run(args, cwd):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_project_tests_run_under_tf_test_main(tmp_path):
    path = write(tmp_path, "dataflow")
    done = run([str(path)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Ran 10 tests" in done.stderr and "OK (skipped=1)" in done.stderr


def test_project_tests_run_under_pytest(tmp_path):
    path = write(tmp_path, "dataflow")
    done = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "9 passed, 1 skipped" in done.stdout


def test_a_failing_assertion_fails_the_run(tmp_path):
    path = write(tmp_path, "dataflow", FAILING)
    done = run([str(path)], tmp_path)
    assert done.returncode != 0
    assert "testThatFails" in done.stderr and "Arrays not close" in done.stderr


@pytest.mark.tf
def test_the_same_file_passes_on_tensorflow(tmp_path):
    pytest.importorskip("tensorflow")
    path = write(tmp_path, "tensorflow.compat.v1")
    path.write_text(
        path.read_text().replace(
            "import tensorflow.compat.v1 as tf",
            "import tensorflow.compat.v1 as tf\ntf.disable_eager_execution()",
        )
    )
    done = run([str(path)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Ran 10 tests" in done.stderr and "OK (skipped=1)" in done.stderr


class InProcessTest(tf.test.TestCase):
    """The TestCase collected by this suite's own pytest run."""

    def testCachedSessionIsClosedAtTearDown(self):
        with self.cached_session() as sess:
            self.assertEqual(sess.run(tf.constant(3)), 3)
        self.tearDown()
        self.assertIsNone(self._cached_session)

    def testUnjoinedThreadFailsTheTest(self):
        gate = __import__("threading").Event()
        thread = self.checkedThread(target=gate.wait)
        thread.start()
        with self.assertRaises(AssertionError):
            thread.check_termination()
        gate.set()
        thread.join()

    def testThreadExceptionFailsJoin(self):
        thread = self.checkedThread(target=lambda: 1 / 0)
        thread.start()
        with self.assertRaises(AssertionError):
            thread.join()

    def testEqualGraphDefs(self):
        def build():
            g = tf.Graph()
            with g.as_default():
                a = tf.constant(1.0, name="a")
                tf.add(a, a, name="b")
            return g.as_graph_def()

        tf.test.assert_equal_graph_def(build(), build())
        other = build()
        other.node[1].name = "c"
        with self.assertRaises(AssertionError):
            tf.test.assert_equal_graph_def(build(), other)
        with self.assertRaises(TypeError):
            tf.test.assert_equal_graph_def(build(), "node {}")

    def testBenchmark(self):
        x = tf.random_normal([20, 20])
        with self.session() as sess:
            result = tf.test.Benchmark().run_op_benchmark(
                sess, tf.matmul(x, x), burn_iters=1, min_iters=3, name="mm"
            )
        self.assertEqual(result["iters"], 3)
        self.assertEqual(result["name"], "mm")
        self.assertGreater(result["wall_time"], 0)
        self.assertIsInstance(tf.test.benchmark_config(), tf.ConfigProto)


def test_unknown_test_name_is_reported():
    with pytest.raises(AttributeError):
        tf.test.create_local_cluster  # noqa: B018
    np.testing.assert_equal(tf.test.is_built_with_rocm(), False)
