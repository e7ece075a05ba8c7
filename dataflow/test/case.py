"""``tf.test.TestCase``: a ``unittest.TestCase`` with TF1's helpers, so a TF1 project's
own tests run on dataflow unchanged.

Each test starts with a fresh default graph whose graph-level seed is TF's default
(87654321), as TF1's ``setUp`` does. ``session()`` opens a session on the default graph
(or ``graph``) and makes both the defaults for the block; ``cached_session()`` returns
one session kept for the whole test (closed in ``tearDown``); ``test_session()`` is the
cached one unless a ``graph`` is given. ``evaluate`` runs tensors (nested structures
too) in the default session, or the cached one.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
import unittest
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..framework import dtypes, errors
from ..framework.device_spec import canonical
from ..framework.graph import Graph, Operation, Tensor, get_default_graph, reset_default_graph
from ..ops.random.random_ops import DEFAULT_GRAPH_SEED
from ..runtime.session import BaseSession, Session, get_default_session

_TEMP_ROOT: list[str] = []


def get_temp_dir() -> str:
    """A temporary directory for this test process (made once, under ``$TEST_TMPDIR``
    when set, and kept)."""
    if not _TEMP_ROOT:
        parent = os.environ.get("TEST_TMPDIR") or None
        _TEMP_ROOT.append(tempfile.mkdtemp(prefix="dataflow_test_", dir=parent))
    return _TEMP_ROOT[0]


def _as_array(value: Any) -> np.ndarray:
    return value if isinstance(value, np.ndarray) else np.asarray(value)


class _CheckedThread:
    """A thread whose exception fails the test when it is joined."""

    def __init__(self, case: unittest.TestCase, target: Callable, args: Any, kwargs: Any):
        self._case, self._target = case, target
        self._args, self._kwargs = args or (), kwargs or {}
        self._exception: BaseException | None = None
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        try:
            self._target(*self._args, **self._kwargs)
        except BaseException as e:  # reported in join
            self._exception = e

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        """Waits for the thread; fails the test if it raised."""
        self._thread.join()
        if self._exception is not None:
            self._case.fail(f"{type(self._exception).__name__}: {self._exception}")

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def check_termination(self) -> None:
        """Fails the test if the thread is still running."""
        if self._thread.is_alive():
            self._case.fail("Thread was not joined")


class TestCase(unittest.TestCase):
    """Base class of TF1-style tests (``tf.test.TestCase``)."""

    def __init__(self, methodName: str = "runTest") -> None:
        super().__init__(methodName)
        self._cached_session: Session | None = None
        self._threads: list[_CheckedThread] = []
        self._tempdir: str | None = None

    def setUp(self) -> None:
        self._clear_cached_session()
        np.random.seed(DEFAULT_GRAPH_SEED)
        reset_default_graph()
        get_default_graph().seed = DEFAULT_GRAPH_SEED

    def tearDown(self) -> None:
        for thread in self._threads:
            thread.check_termination()
        self._clear_cached_session()

    def _clear_cached_session(self) -> None:
        if getattr(self, "_cached_session", None) is not None:
            self._cached_session.close()  # type: ignore[union-attr]
            self._cached_session = None

    # --- sessions ------------------------------------------------------------------------
    def get_temp_dir(self) -> str:
        """A temporary directory of its own for this test."""
        if self._tempdir is None:
            self._tempdir = tempfile.mkdtemp(prefix=self._testMethodName + "_", dir=get_temp_dir())
        return self._tempdir

    @contextlib.contextmanager
    def session(
        self,
        graph: Graph | None = None,
        config: Any = None,
        use_gpu: bool = False,
        force_gpu: bool = False,
    ) -> Iterator[BaseSession]:
        """A new session on ``graph`` (default: the default graph), default for the block.
        ``use_gpu`` and ``force_gpu`` are accepted; ops go where the placer puts them."""
        graph = get_default_graph() if graph is None else graph
        with Session(graph=graph, config=config) as sess, graph.as_default(), sess.as_default():
            yield sess

    @contextlib.contextmanager
    def cached_session(
        self,
        graph: Graph | None = None,
        config: Any = None,
        use_gpu: bool = False,
        force_gpu: bool = False,
    ) -> Iterator[BaseSession]:
        """The test's one session (made on first use, on ``graph`` or the default
        graph), default for the block; closed when the test ends."""
        if self._cached_session is None:
            graph = get_default_graph() if graph is None else graph
            self._cached_session = Session(graph=graph, config=config)
        elif graph is not None and self._cached_session.graph is not graph:
            raise ValueError(
                "The graph used to get the cached session is different than the one "
                "that was used to create the session. Maybe create a new session "
                "with self.session()"
            )
        sess = self._cached_session
        with sess.graph.as_default(), sess.as_default():
            yield sess

    def test_session(
        self,
        graph: Graph | None = None,
        config: Any = None,
        use_gpu: bool = False,
        force_gpu: bool = False,
    ) -> Any:
        """TF1's older name: ``cached_session()``, or ``session(graph)`` for a graph.

        Test runners collect it as a test by its name; run that way it skips itself,
        as TF1's does."""
        if self.id().endswith(".test_session"):
            self.skipTest("test_session is the name of TestCase's session helper, not a test")
        manager = self.cached_session if graph is None else self.session
        return manager(graph, config, use_gpu, force_gpu)

    def evaluate(self, tensors: Any) -> Any:
        """Runs ``tensors`` (any nesting) in the default session, or the cached one."""
        sess = get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.cached_session() as sess:
            return sess.run(tensors)

    def checkedThread(
        self, target: Callable, args: Any = None, kwargs: Any = None
    ) -> _CheckedThread:
        """A thread running ``target``: ``join()`` fails the test if it raised, and the
        test fails at its end if the thread was never joined."""
        thread = _CheckedThread(self, target, args, kwargs)
        self._threads.append(thread)
        return thread

    # --- value assertions ------------------------------------------------------------------
    def _value(self, x: Any) -> Any:
        if isinstance(x, (Tensor, Operation)):
            return self.evaluate(x)
        return x

    def _close_arrays(self, a: Any, b: Any, rtol: float, atol: float, msg: Any, path: str) -> None:
        a, b = _as_array(a), _as_array(b)
        self.assertEqual(
            a.shape,
            b.shape,
            f"Shape mismatch{path}: expected {a.shape}, got {b.shape}. {msg or ''}",
        )
        if a.dtype.kind in "OSU" or b.dtype.kind in "OSU":
            self.assertTrue(np.array_equal(a, b), f"Not equal{path}: {a} != {b}. {msg or ''}")
            return
        if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
            where = np.argwhere(bad)[:10]
            detail = "\n".join(f"index {tuple(i)}: {a[tuple(i)]} vs {b[tuple(i)]}" for i in where)
            self.fail(
                f"Arrays not close{path} (rtol={rtol}, atol={atol}); {int(bad.sum())} of "
                f"{a.size} differ:\n{detail}\n{msg or ''}"
            )

    def _close_structures(
        self, a: Any, b: Any, rtol: float, atol: float, msg: Any, path: str
    ) -> None:
        a, b = self._value(a), self._value(b)
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertIsInstance(a, dict, f"{path}: {a!r} is not a dict")
            self.assertIsInstance(b, dict, f"{path}: {b!r} is not a dict")
            self.assertEqual(set(a), set(b), f"mismatched keys{path}: {set(a)} vs {set(b)}")
            for key in a:
                self._close_structures(a[key], b[key], rtol, atol, msg, f"{path}[{key!r}]")
            return
        structured = (list, tuple)
        if isinstance(a, structured) and isinstance(b, structured):
            try:
                arrays = [_as_array(x) for x in (a, b)]
            except ValueError:  # ragged: compare item by item
                arrays = [np.empty(0, object)] * 2
            if all(x.dtype != object for x in arrays) and arrays[0].shape == arrays[1].shape:
                self._close_arrays(arrays[0], arrays[1], rtol, atol, msg, path)
                return
            self.assertEqual(len(a), len(b), f"Length mismatch{path}: {len(a)} vs {len(b)}")
            for i, (x, y) in enumerate(zip(a, b)):
                self._close_structures(x, y, rtol, atol, msg, f"{path}[{i}]")
            return
        self._close_arrays(a, b, rtol, atol, msg, path)

    def assertAllClose(
        self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, msg: Any = None
    ) -> None:
        """``a`` and ``b`` (arrays, tensors, or nested lists, tuples and dicts of them) have
        equal shapes and ``|a - b| <= atol + rtol * |b|`` element-wise (NaNs match)."""
        self._close_structures(a, b, rtol, atol, msg, "")

    def assertNotAllClose(
        self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, msg: Any = None
    ) -> None:
        """The opposite of ``assertAllClose``."""
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        self.fail(msg or "The two values are close at all elements")

    def assertAllCloseAccordingToType(
        self,
        a: Any,
        b: Any,
        rtol: float = 1e-6,
        atol: float = 1e-6,
        float_rtol: float = 1e-6,
        float_atol: float = 1e-6,
        half_rtol: float = 1e-3,
        half_atol: float = 1e-3,
        bfloat16_rtol: float = 1e-2,
        bfloat16_atol: float = 1e-2,
        msg: Any = None,
    ) -> None:
        """``assertAllClose`` with the loosest tolerance the dtypes of ``a`` and ``b``
        call for (float32: ``float_*``, float16: ``half_*``, bfloat16: ``bfloat16_*``)."""
        a, b = _as_array(self._value(a)), _as_array(self._value(b))
        kinds = {a.dtype, b.dtype}
        if kinds & {np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.dtype(np.float16) in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if any(d.name == "bfloat16" for d in kinds):
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertAllEqual(self, a: Any, b: Any, msg: Any = None) -> None:
        """``a`` and ``b`` have equal shapes and equal elements."""
        a, b = _as_array(self._value(a)), _as_array(self._value(b))
        self.assertEqual(
            a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape}. {msg or ''}"
        )
        same = a == b
        if a.dtype.kind == "f" and b.dtype.kind == "f":
            same = np.logical_or(same, np.logical_and(np.isnan(a), np.isnan(b)))
        if not np.all(same):
            where = np.argwhere(~np.asarray(same))[:10]
            detail = "\n".join(f"index {tuple(i)}: {a[tuple(i)]} vs {b[tuple(i)]}" for i in where)
            self.fail(f"Arrays not equal:\n{detail}\n{msg or ''}")

    def assertNotAllEqual(self, a: Any, b: Any, msg: Any = None) -> None:
        """The opposite of ``assertAllEqual``."""
        try:
            self.assertAllEqual(a, b, msg)
        except AssertionError:
            return
        self.fail(msg or "Expected unequal inputs but got equal ones")

    def _compare_all(self, a: Any, ok: Callable[[np.ndarray], Any], what: str) -> None:
        a = _as_array(self._value(a))
        if not np.all(ok(a)):
            self.fail(f"Not all elements {what}: {a}")

    def assertAllGreater(self, a: Any, comparison_target: Any) -> None:
        self._compare_all(a, lambda x: x > comparison_target, f"> {comparison_target}")

    def assertAllGreaterEqual(self, a: Any, comparison_target: Any) -> None:
        self._compare_all(a, lambda x: x >= comparison_target, f">= {comparison_target}")

    def assertAllLess(self, a: Any, comparison_target: Any) -> None:
        self._compare_all(a, lambda x: x < comparison_target, f"< {comparison_target}")

    def assertAllLessEqual(self, a: Any, comparison_target: Any) -> None:
        self._compare_all(a, lambda x: x <= comparison_target, f"<= {comparison_target}")

    def assertAllInRange(
        self,
        target: Any,
        lower_bound: Any,
        upper_bound: Any,
        open_lower_bound: bool = False,
        open_upper_bound: bool = False,
    ) -> None:
        """Every element of ``target`` lies within the bounds (closed unless asked)."""

        def ok(x: np.ndarray) -> Any:
            low = x > lower_bound if open_lower_bound else x >= lower_bound
            high = x < upper_bound if open_upper_bound else x <= upper_bound
            return low & high

        self._compare_all(target, ok, f"in range [{lower_bound}, {upper_bound}]")

    def assertAllInSet(self, target: Any, expected_set: Any) -> None:
        """Every element of ``target`` is in ``expected_set``."""
        values = set(_as_array(self._value(target)).reshape(-1).tolist())
        extra = values - set(expected_set)
        if extra:
            self.fail(f"{sorted(extra)} not in {set(expected_set)}")

    def assertDTypeEqual(self, target: Any, expected_dtype: Any) -> None:
        """Every element of ``target`` has the numpy dtype of ``expected_dtype``."""
        want = dtypes.as_dtype(expected_dtype).as_numpy_dtype
        self.assertEqual(_as_array(self._value(target)).dtype, np.dtype(want))

    def assertNear(self, f1: float, f2: float, err: float, msg: Any = None) -> None:
        """``|f1 - f2| <= err`` for two floats."""
        self.assertTrue(
            f1 == f2 or abs(f1 - f2) <= err,
            f"{f1:f} != {f2:f} +/- {err:f}" + (f" ({msg})" if msg else ""),
        )

    def assertArrayNear(self, farray1: Any, farray2: Any, err: float, msg: Any = None) -> None:
        """Two float lists of one length, element by element within ``err``."""
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNDArrayNear(self, ndarray1: Any, ndarray2: Any, err: float, msg: Any = None) -> None:
        """Two arrays within ``err`` of each other everywhere."""
        self.assertTrue(np.linalg.norm(np.asarray(ndarray1) - np.asarray(ndarray2)) <= err, msg=msg)

    def assertShapeEqual(self, np_array: Any, tf_tensor: Tensor, msg: Any = None) -> None:
        """The numpy array's shape equals the tensor's static shape."""
        if not isinstance(np_array, (np.ndarray, np.generic)):
            raise TypeError("np_array must be a Numpy ndarray or Numpy scalar")
        if not isinstance(tf_tensor, Tensor):
            raise TypeError("tf_tensor must be a Tensor")
        self.assertAllEqual(np_array.shape, tf_tensor.shape.as_list(), msg=msg)

    def assertDeviceEqual(self, device1: Any, device2: Any, msg: Any = None) -> None:
        """Two device strings name the same device (compared in canonical form)."""
        self.assertEqual(
            canonical(device1 or ""),
            canonical(device2 or ""),
            f"Devices {device1} and {device2} are not equal. {msg or ''}",
        )

    def assertStartsWith(self, actual: str, expected_start: str, msg: Any = None) -> None:
        if not actual.startswith(expected_start):
            self.fail(f"Did not start with '{expected_start}': '{actual}' {msg or ''}")

    def assertProtoEquals(
        self, expected_message_maybe_ascii: Any, message: Any, msg: Any = None
    ) -> None:
        """A protobuf ``message`` equals the expected one (a message, or its text form)."""
        from google.protobuf import text_format

        expected = expected_message_maybe_ascii
        if isinstance(expected, (str, bytes)):
            parsed = type(message)()
            text_format.Merge(expected, parsed)
            expected = parsed
        self.assertEqual(
            text_format.MessageToString(expected), text_format.MessageToString(message), msg
        )

    # --- errors -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(
        self, exception_type: type[BaseException], expected_err_re_or_predicate: Any
    ) -> Iterator[None]:
        """The block raises ``exception_type`` whose message matches the regex (searched)
        or for which the predicate is true."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:

            def predicate(e: BaseException) -> bool:
                message = getattr(e, "message", None) or str(e)
                return re.search(expected_err_re_or_predicate, message) is not None

        try:
            yield
        except exception_type as e:
            if not predicate(e):
                raise AssertionError(
                    f"Exception of type {type(e)}: {e} does not match "
                    f"{expected_err_re_or_predicate!r}"
                ) from e
        else:
            self.fail(f"{exception_type.__name__} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate: Any) -> Any:
        """``assertRaisesWithPredicateMatch(tf.errors.OpError, ...)``."""
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)

    def assertItemsEqual(self, expected_seq: Any, actual_seq: Any, msg: Any = None) -> None:
        """The two sequences hold the same items, in any order."""
        self.assertCountEqual(expected_seq, actual_seq, msg)


def main(argv: Any = None) -> None:
    """Runs the ``TestCase`` tests of ``__main__`` (``tf.test.main``)."""
    unittest.main(module="__main__", argv=argv)
