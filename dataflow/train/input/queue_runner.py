"""``tf.train.QueueRunner``: background threads that keep running enqueue ops.

Each enqueue op gets a thread running it in a loop until the coordinator asks to stop or
the op reports the end of input (``OutOfRangeError``: e.g. an upstream queue closed).
When the last thread of a runner ends that way, the runner closes its queue, so the
consumers drain it and then see ``OutOfRangeError``. When the coordinator stops, the
runner cancels its queue's pending enqueues so no thread stays blocked. Any other error
is handed to the coordinator, which re-raises it in ``join``.

In a session that runs its steps in this process (the embedded ``Session()``), copies of
one enqueue op (``tf.train.batch(..., num_threads=4)`` lists its op four times) share one
thread: the steps are Python, so the interpreter lock runs one at a time anyway, and
threads contending for it and for the queue's lock made four copies three times slower
than one. Different enqueue ops keep a thread each (one may wait on its input while
another goes on). On a cluster every copy gets its thread: its steps run on workers.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ...framework import errors
from ...framework.graph import get_default_graph
from ...ops.state.variables import GraphKeys


class QueueRunner:
    """Holds a queue and the enqueue ops that feed it.

    Args:
        queue: the queue.
        enqueue_ops: ops to run in parallel threads (one thread each).
        close_op: run when input ends (default: ``queue.close()``).
        cancel_op: run on a stop request (default: ``queue.close(True)``).
        queue_closed_exception_types: errors meaning "input ended".
    """

    def __init__(
        self,
        queue: Any = None,
        enqueue_ops: Sequence[Any] | None = None,
        close_op: Any = None,
        cancel_op: Any = None,
        queue_closed_exception_types: tuple | None = None,
    ):
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and at least one enqueue op")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (
            cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        )
        self._closed_types = queue_closed_exception_types or (
            errors.OutOfRangeError,
            errors.CancelledError,
        )
        self._lock = threading.Lock()
        self._runs_per_session: dict[int, int] = {}
        self._exceptions: list[BaseException] = []

    @property
    def queue(self) -> Any:
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return list(self._enqueue_ops)

    @property
    def close_op(self) -> Any:
        return self._close_op

    @property
    def cancel_op(self) -> Any:
        return self._cancel_op

    @property
    def exceptions_raised(self) -> list[BaseException]:
        return list(self._exceptions)

    @property
    def name(self) -> str:
        return self._queue.name

    def _run(self, sess: Any, enqueue_op: Any, coord: Any) -> None:
        decremented = False
        try:
            while not (coord is not None and coord.should_stop()):
                try:
                    sess.run(enqueue_op)
                except self._closed_types:
                    with self._lock:
                        self._runs_per_session[id(sess)] -= 1
                        decremented = True
                        last = self._runs_per_session[id(sess)] == 0
                    if last:
                        try:
                            sess.run(self._close_op)
                        except (errors.OpError, RuntimeError):
                            pass  # the session is closing: nothing left to close
                    return
        except RuntimeError:
            # The session was closed under us: a normal way for input threads to end.
            return
        except BaseException as exc:
            self._exceptions.append(exc)
            if coord is not None:
                coord.request_stop(exc)
            else:
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[id(sess)] -= 1

    def _close_on_stop(self, sess: Any, coord: Any) -> None:
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except (errors.OpError, RuntimeError):
            pass  # already closed, or the session is gone

    def create_threads(
        self, sess: Any, coord: Any = None, daemon: bool = False, start: bool = False
    ) -> list[threading.Thread]:
        """One thread per enqueue op (plus one closing the queue on a stop request);
        copies of one op share a thread in an in-process session (see the module doc)."""
        ops = self._enqueue_ops
        if getattr(sess, "sess_str", None) == "":
            ops = list(dict.fromkeys(ops))
        with self._lock:
            self._runs_per_session[id(sess)] = self._runs_per_session.get(id(sess), 0) + len(ops)
        threads = [
            threading.Thread(
                target=self._run,
                args=(sess, op, coord),
                daemon=daemon,
                name=f"QueueRunner-{self.name}-{i}",
            )
            for i, op in enumerate(ops)
        ]
        if coord is not None:
            threads.append(
                threading.Thread(
                    target=self._close_on_stop,
                    args=(sess, coord),
                    daemon=True,
                    name=f"QueueRunner-{self.name}-stop",
                )
            )
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if start:
                t.start()
        return threads


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    """Adds ``qr`` to the graph's queue-runner collection."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(
    sess: Any = None,
    coord: Any = None,
    daemon: bool = True,
    start: bool = True,
    collection: str = GraphKeys.QUEUE_RUNNERS,
) -> list[threading.Thread]:
    """Starts the threads of every queue runner in ``collection``; returns them."""
    if sess is None:
        from ...runtime.session import get_default_session

        sess = get_default_session()
        if sess is None:
            raise ValueError(
                "Cannot start queue runners: no default session is registered. "
                "Use `with sess.as_default()` or pass an explicit session."
            )
    threads = []
    with sess.graph.as_default():
        for qr in sess.graph.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
