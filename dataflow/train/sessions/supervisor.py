"""``tf.train.Supervisor``: TF1's older training-loop helper, before monitored sessions.

What it does, as TF1:

* At construction it resolves its ops (``USE_DEFAULT``: the graph's collection entry, or
  a new default op added there; ``None``: no such op), makes a ``FileWriter`` for
  ``logdir`` on the chief, and finalizes the graph.
* ``prepare_or_wait_for_session(master)`` makes a session on ``master``. The chief
  restores the latest checkpoint of ``logdir`` (optionally waiting for one), or runs
  ``init_op`` and ``init_fn``; a non-chief waits, ``recovery_wait_secs`` between checks,
  until the global variables are initialized. Both then run ``local_init_op`` and check
  ``ready_op``. With ``start_standard_services`` the chief writes the graph and a
  ``START`` session log and starts the services threads, and every task starts the
  graph's queue runners.
* The services, threads stopped by the supervisor's ``Coordinator``: a summary thread
  (``summary_op`` every ``save_summaries_secs``), a step counter (``global_step/sec``)
  and a checkpoint thread (``saver.save`` every ``save_model_secs`` to
  ``logdir/checkpoint_basename``).
* ``managed_session()`` wraps all this in a ``with`` block that stops the threads (an
  ``OutOfRangeError`` in the block is a normal end, as the coordinator treats it) and
  closes the session.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ...framework import errors
from ...framework.graph import Graph, get_default_graph
from ...ops.control.group import group
from ...ops.lookup.tables import tables_initializer
from ...ops.state.variables import (
    GLOBAL_VARIABLES,
    GraphKeys,
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
)
from ...ops.summary.summary_ops import merge_all
from ...runtime.session import Session
from ...summary.writer import FileWriter
from ..input.queue_runner import start_queue_runners
from ..saver import Saver, latest_checkpoint
from ..training_util import get_global_step
from .coordinator import Coordinator
from .scaffold import Scaffold
from .supervisor_services import CheckpointThread, LooperThread, StepCounterThread, SummaryThread

USE_DEFAULT = 0


class Supervisor:
    """Sessions, checkpoints, summaries and queue runners for a training loop (TF1).

    Args:
        graph: the graph (default: the default graph).
        ready_op, ready_for_local_init_op, init_op, local_init_op, summary_op, saver,
            global_step, summary_writer: ``USE_DEFAULT`` (the graph's own or a new
            default), an object of your own, or ``None`` (none).
        is_chief: this task initializes, checkpoints and writes summaries.
        init_feed_dict, init_fn: fed to ``init_op``; called as ``init_fn(sess)`` after it.
        logdir: where checkpoints and summaries go (``None``: neither).
        save_summaries_secs, save_model_secs: service intervals (0 or ``None``: off).
        recovery_wait_secs: seconds between a non-chief's readiness checks.
        stop_grace_secs: how long ``stop`` waits for the threads.
        checkpoint_basename: the checkpoint file name in ``logdir``.
        session_manager, local_init_run_options: accepted for TF1 compatibility.
    """

    USE_DEFAULT = USE_DEFAULT

    def __init__(
        self,
        graph: Graph | None = None,
        ready_op: Any = USE_DEFAULT,
        ready_for_local_init_op: Any = USE_DEFAULT,
        is_chief: bool = True,
        init_op: Any = USE_DEFAULT,
        init_feed_dict: dict | None = None,
        local_init_op: Any = USE_DEFAULT,
        logdir: str | None = None,
        summary_op: Any = USE_DEFAULT,
        saver: Any = USE_DEFAULT,
        global_step: Any = USE_DEFAULT,
        save_summaries_secs: float | None = 120,
        save_model_secs: float | None = 600,
        recovery_wait_secs: float = 30,
        stop_grace_secs: float = 120,
        checkpoint_basename: str = "model.ckpt",
        session_manager: Any = None,
        summary_writer: Any = USE_DEFAULT,
        init_fn: Callable | None = None,
        local_init_run_options: Any = None,
    ):
        self._graph = graph if graph is not None else get_default_graph()
        self._is_chief = is_chief
        self._logdir = logdir
        self._init_feed_dict = init_feed_dict
        self._init_fn = init_fn
        self._save_summaries_secs = save_summaries_secs
        self._save_model_secs = save_model_secs
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._coord = Coordinator()
        self._started_threads: list[threading.Thread] = []
        self._save_path = os.path.join(logdir, checkpoint_basename) if logdir else None
        with self._graph.as_default():
            self._ready_op = _resolve(
                ready_op, "ready_op", GraphKeys.READY_OP, report_uninitialized_variables
            )
            self._ready_for_local_init_op = _resolve(
                ready_for_local_init_op,
                "ready_for_local_init_op",
                GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: report_uninitialized_variables(
                    self._graph.get_collection(GLOBAL_VARIABLES)
                ),
            )
            self._init_op = (
                _resolve(init_op, "init_op", GraphKeys.INIT_OP, global_variables_initializer)
                if is_chief
                else None
            )
            self._local_init_op = _resolve(
                local_init_op,
                "local_init_op",
                GraphKeys.LOCAL_INIT_OP,
                lambda: group(local_variables_initializer(), tables_initializer()),
            )
            self._summary_op = _resolve(summary_op, "summary_op", GraphKeys.SUMMARY_OP, merge_all)
            self._saver = _resolve(saver, "saver", GraphKeys.SAVERS, _saver_if_variables)
            self._global_step = get_global_step() if global_step is USE_DEFAULT else global_step
        if summary_writer is USE_DEFAULT:
            summary_writer = FileWriter(logdir) if (is_chief and logdir) else None
        self._summary_writer = summary_writer
        self._graph.finalize()

    # --- what TF1 exposes -----------------------------------------------------------------
    @property
    def coord(self) -> Coordinator:
        return self._coord

    @property
    def is_chief(self) -> bool:
        return self._is_chief

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def ready_op(self) -> Any:
        return self._ready_op

    @property
    def ready_for_local_init_op(self) -> Any:
        return self._ready_for_local_init_op

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def summary_writer(self) -> Any:
        return self._summary_writer

    @property
    def saver(self) -> Any:
        return self._saver

    @property
    def global_step(self) -> Any:
        return self._global_step

    @property
    def save_path(self) -> str | None:
        return self._save_path

    @property
    def save_summaries_secs(self) -> float | None:
        return self._save_summaries_secs

    @property
    def save_model_secs(self) -> float | None:
        return self._save_model_secs

    # --- sessions ------------------------------------------------------------------------
    def prepare_or_wait_for_session(
        self,
        master: Any = "",
        config: Any = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        start_standard_services: bool = True,
    ) -> Session:
        """A ready session on ``master`` (see the module docstring); starts the services
        and queue runners unless told not to.

        Raises:
            errors.DeadlineExceededError: a non-chief waited ``max_wait_secs`` for the
                chief's initialization (or the chief for a checkpoint).
            RuntimeError: the init ops did not make the model ready.
        """
        self._coord.clear_stop()
        deadline = time.monotonic() + max_wait_secs
        sess = Session(master, graph=self._graph, config=config)
        try:
            if self._is_chief:
                self._initialize(sess, wait_for_checkpoint, deadline)
            else:
                self._wait_for_global_variables(sess, deadline)
            if self._local_init_op is not None:
                sess.run(self._local_init_op)
            self._check_ready(sess)
        except BaseException:
            sess.close()
            raise
        if start_standard_services:
            if self._is_chief:
                self.start_standard_services(sess)
            self.start_queue_runners(sess)
        return sess

    def _initialize(self, sess: Session, wait_for_checkpoint: bool, deadline: float) -> None:
        path = latest_checkpoint(self._logdir) if (self._logdir and self._saver) else None
        while path is None and wait_for_checkpoint and self._logdir and self._saver:
            if time.monotonic() > deadline:
                raise errors.DeadlineExceededError(
                    None, None, f"No checkpoint appeared in {self._logdir}"
                )
            time.sleep(self._recovery_wait_secs)
            path = latest_checkpoint(self._logdir)
        if path is not None:
            self._saver.restore(sess, path)
            return
        if self._init_op is not None:
            sess.run(self._init_op, self._init_feed_dict or {})
        if self._init_fn is not None:
            self._init_fn(sess)

    def _wait_for_global_variables(self, sess: Session, deadline: float) -> None:
        if self._ready_for_local_init_op is None:
            return
        while len(sess.run(self._ready_for_local_init_op)):
            if time.monotonic() > deadline:
                raise errors.DeadlineExceededError(
                    None,
                    None,
                    "Session was not ready before its deadline (the chief has not "
                    "initialized the model)",
                )
            time.sleep(self._recovery_wait_secs)

    def _check_ready(self, sess: Session) -> None:
        if self._ready_op is None:
            return
        missing = sess.run(self._ready_op)
        if len(missing):
            raise RuntimeError(
                "Init operations did not make model ready. Uninitialized: "
                f"{[m.decode() for m in missing][:10]}"
            )

    @contextlib.contextmanager
    def managed_session(
        self,
        master: Any = "",
        config: Any = None,
        start_standard_services: bool = True,
        close_summary_writer: bool = True,
    ) -> Iterator[Session]:
        """A session in a ``with`` block; stops the threads and closes it after, and
        re-raises what the block (or a thread) raised, except an ``OutOfRangeError``."""
        sess = self.prepare_or_wait_for_session(
            master, config, start_standard_services=start_standard_services
        )
        try:
            yield sess
        except Exception as exc:
            self.request_stop(exc)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                sess.close()

    # --- services and threads ------------------------------------------------------------
    def start_standard_services(self, sess: Session) -> list[threading.Thread]:
        """Writes the graph and a ``START`` log, then starts the summary, step-counter and
        checkpoint threads the supervisor's settings ask for (chief only)."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services.")
        threads: list[threading.Thread] = []
        writer = self._summary_writer
        step = self._global_step
        if writer is not None:
            from ...summary import SessionLog

            writer.add_graph(self._graph)
            start_step = int(sess.run(step)) if step is not None else None
            writer.add_session_log(SessionLog(status=SessionLog.START), start_step)
            if self._summary_op is not None and self._save_summaries_secs:
                threads.append(SummaryThread(self, sess))
            if step is not None and self._save_summaries_secs:
                threads.append(StepCounterThread(self, sess))
        if self._saver is not None and self._save_model_secs and self._save_path:
            threads.append(CheckpointThread(self, sess))
        for t in threads:
            t.start()
        self._started_threads.extend(threads)
        return threads

    def start_queue_runners(self, sess: Session, queue_runners: Any = None) -> list:
        """Starts the queue runners (default: the graph's) under the coordinator."""
        if queue_runners is None:
            threads = start_queue_runners(sess, coord=self._coord, daemon=True, start=True)
        else:
            threads = []
            for qr in queue_runners:
                threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        self._started_threads.extend(threads)
        return threads

    def loop(
        self, timer_interval_secs: float, target: Callable, args: Any = None, kwargs: Any = None
    ) -> threading.Thread:
        """Calls ``target(*args, **kwargs)`` every ``timer_interval_secs`` in a thread until
        a stop is requested."""
        looper = LooperThread(self._coord, timer_interval_secs, target, args, kwargs)
        looper.start()
        self._started_threads.append(looper)
        return looper

    def summary_computed(self, sess: Session, summary: Any, global_step: Any = None) -> None:
        """Writes a summary computed by the caller (``sess.run(summary_op)``).

        Raises:
            RuntimeError: the supervisor has no summary writer.
        """
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = int(sess.run(self._global_step))
        self._summary_writer.add_summary(summary, global_step)

    # --- stopping --------------------------------------------------------------------------
    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def request_stop(self, ex: Any = None) -> None:
        self._coord.request_stop(ex)

    def stop_on_exception(self) -> Any:
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        self._coord.wait_for_stop()

    def stop(
        self,
        threads: Any = None,
        close_summary_writer: bool = True,
        ignore_live_threads: bool = False,
    ) -> None:
        """Requests a stop, waits for the threads (``stop_grace_secs``) and closes the
        summary writer; re-raises what a thread reported."""
        self._coord.request_stop()
        try:
            self._coord.join(
                list(threads) if threads is not None else self._started_threads,
                stop_grace_period_secs=self._stop_grace_secs,
                ignore_live_threads=ignore_live_threads,
            )
        finally:
            self._started_threads = []
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.close()


def _resolve(value: Any, arg_name: str, collection_key: str, make: Callable[[], Any]) -> Any:
    """TF1's rule: ``USE_DEFAULT`` finds or makes the op (in its collection)."""
    if value is USE_DEFAULT:
        return Scaffold.get_or_default(arg_name, collection_key, make)
    return value


def _saver_if_variables() -> Saver | None:
    if not get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES):
        return None
    return Saver()
