"""``MonitoredTrainingSession``: a training loop's session with hooks, checkpoints and
recovery.

Layers, innermost first (as TF1):

* a *session creator* makes a ready session: on the chief, restore the latest
  checkpoint of ``checkpoint_dir`` if there is one, else run the initializers; on other
  workers, wait until the chief has initialized the shared variables;
* a *coordinated* session starts the graph's queue runners under a ``Coordinator`` and
  stops them on close;
* a *recoverable* session catches ``UnavailableError``/``AbortedError`` (a worker
  lost, a cluster restarting), throws the broken session away, makes a new one (which
  restores the latest checkpoint onto the remaining or replacement workers) and retries
  the step; the hooks' ``after_create_session`` runs again, so a training loop continues
  from the last checkpoint and loses at most the steps taken since it. A worker that
  came back between two steps (a nanny restarts a killed worker within a second or two)
  fails the next step with ``FailedPreconditionError`` (its variables are gone): when the
  session saw one of its workers leave, that too is recovered from. A new session is
  only made once every worker the first one had is back (waiting up to
  ``recovery_wait_secs``), so the checkpoint restores onto the same shape. A lost Dask
  scheduler takes every worker with it: the step fails at once, and while the scheduler
  is away each attempt to open a session fails within about a second, so the loop
  simply retries until the supervised scheduler and workers are back;
* the *monitored* session runs the hooks around each step and answers ``should_stop``.
"""

from __future__ import annotations

import logging
import time
from typing import Any, cast

from ...framework import errors
from ...framework.graph import get_default_graph
from ...runtime.session import Session
from ..input.queue_runner import start_queue_runners
from ..saver import latest_checkpoint
from .coordinator import Coordinator
from .hooks import CheckpointSaverHook, SessionRunHook
from .progress import DashboardProgressHook, run_with_hooks
from .scaffold import Scaffold
from .summary_hooks import StepCounterHook, SummarySaverHook

logger = logging.getLogger(__name__)

USE_DEFAULT = object()
_RECOVERABLE = (errors.UnavailableError, errors.AbortedError)


class SessionCreator:
    """Base class of what makes a monitored session's underlying session."""

    def create_session(self) -> Any:
        raise NotImplementedError("create_session is not implemented for SessionCreator.")


class ChiefSessionCreator(SessionCreator):
    """Makes a session on the chief: restore the latest checkpoint, or initialize."""

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: Any = "",
        config: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
    ):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_path = checkpoint_filename_with_path
        self._tasks: frozenset | None = None

    def create_session(self) -> Session:
        sess = _open_session(self)
        try:
            path = self._checkpoint_path or (
                latest_checkpoint(self._checkpoint_dir) if self._checkpoint_dir else None
            )
            if path is not None and self._scaffold.saver is not None:
                self._scaffold.saver.restore(sess, path)
                logger.info("restored from %s", path)
            else:
                sess.run(self._scaffold.init_op, self._scaffold.init_feed_dict or {})
                if self._scaffold.init_fn is not None:
                    self._scaffold.init_fn(self._scaffold, sess)
            sess.run(self._scaffold.local_init_op)
        except errors.FailedPreconditionError as exc:
            sess.close()
            raise _as_lost(exc, sess) from exc
        except BaseException:
            sess.close()
            raise
        return sess


def _as_lost(exc: errors.OpError, sess: Session) -> errors.OpError:
    """``exc`` as an ``UnavailableError`` when ``sess`` saw one of its workers leave (a
    worker killed and restarted, empty, while the session was being prepared), which
    the recovery loop retries; otherwise ``exc`` itself (a bug in the program)."""
    lost = sorted(getattr(sess.backend, "lost_workers", ()))
    if not lost:
        return exc
    return errors.UnavailableError(
        None,
        None,
        f"worker(s) {', '.join(lost)} left while the session was being prepared: {exc.message}",
    )


class WorkerSessionCreator(SessionCreator):
    """Makes a session on a non-chief worker: wait until the variables are ready."""

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: Any = "",
        config: Any = None,
        max_wait_secs: float = 30 * 60,
    ):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._max_wait = max_wait_secs
        self._tasks: frozenset | None = None

    def create_session(self) -> Session:
        sess = _open_session(self)
        deadline = time.monotonic() + self._max_wait
        try:
            # As TF1's SessionManager: wait for the chief's global variables, then make
            # this worker's local ones, then check that everything is ready.
            _wait_until_empty(sess, self._scaffold.ready_for_local_init_op, deadline)
            sess.run(self._scaffold.local_init_op)
            _wait_until_empty(sess, self._scaffold.ready_op, deadline)
        except BaseException:
            sess.close()
            raise
        return sess


def _wait_until_empty(sess: Session, report: Any, deadline: float) -> None:
    """Polls ``report`` (names of uninitialized variables) until it is empty.

    Raises:
        errors.DeadlineExceededError: still not empty at ``deadline``.
    """
    while True:
        missing = sess.run(report)
        if len(missing) == 0:
            return
        if time.monotonic() > deadline:
            raise errors.DeadlineExceededError(
                None,
                None,
                "Session was not ready before its deadline; uninitialized: "
                f"{[m.decode() for m in missing][:10]}",
            )
        time.sleep(0.1)


def _open_session(creator: ChiefSessionCreator | WorkerSessionCreator) -> Session:
    """Finalizes the creator's scaffold and opens a session on its target, checking that
    every task of its first session is there (the session is closed if not)."""
    creator._scaffold.finalize()
    sess = Session(creator._master, graph=get_default_graph(), config=creator._config)
    try:
        creator._tasks = _check_tasks(sess, creator._tasks)
    except BaseException:
        sess.close()
        raise
    return sess


def _check_tasks(sess: Session, expected: frozenset | None) -> frozenset | None:
    """The ``(job, task)``s of a cluster session; ``UnavailableError`` when some of
    ``expected`` (those of the creator's first session) are missing: a lost worker is
    not back yet, and restoring now would place its variables elsewhere or fail."""
    tasks = getattr(sess.backend, "tasks", None)
    if tasks is None:
        return expected
    found = frozenset(tasks)
    if expected is not None and not expected <= found:
        missing = ", ".join(f"/job:{j}/task:{t}" for j, t in sorted(expected - found))
        raise errors.UnavailableError(None, None, f"waiting for {missing} to come back")
    return found if expected is None else expected


class MonitoredSession:
    """Runs steps with hooks; recovers from lost workers by restoring a checkpoint.

    Use as a context manager; ``OutOfRangeError`` (end of input) ends the ``with``
    block quietly, as in TF1.

    Args:
        session_creator: makes (and remakes, after a failure) the session.
        hooks: ``SessionRunHook``s.
        stop_grace_period_secs: how long ``close`` waits for queue-runner threads.
        max_recoveries: how many failed steps to recover from before giving up.
        recovery_wait_secs: how long one recovery keeps trying to make a new session
            (waiting for lost workers to come back) before giving up.
    """

    def __init__(
        self,
        session_creator: Any = None,
        hooks: list | None = None,
        stop_grace_period_secs: float = 120,
        max_recoveries: int = 10,
        recovery_wait_secs: float = 600,
    ):
        self._creator = session_creator or ChiefSessionCreator()
        self._hooks: list[SessionRunHook] = list(hooks or [])
        self._hooks.append(DashboardProgressHook(self._hooks))
        self._grace = stop_grace_period_secs
        self._max_recoveries = max_recoveries
        self._recovery_wait = recovery_wait_secs
        self.recoveries = 0
        for hook in self._hooks:
            hook.begin()
        self._sess: Session | None = None
        self._coord: Coordinator | None = None
        self._threads: list = []
        self._stop = False
        self._closed = False
        self._create()

    # --- session lifecycle -------------------------------------------------------------
    def _create(self) -> None:
        self._sess = self._creator.create_session()
        self._coord = Coordinator(clean_stop_exception_types=[errors.OutOfRangeError])
        self._threads = start_queue_runners(self._sess, self._coord, daemon=True)
        for hook in self._hooks:
            hook.after_create_session(self._sess, self._coord)

    def _discard(self) -> None:
        """Drops a broken session without running hooks' ``end``.

        The session is closed before the coordinator stops, which cancels its queue
        runners' steps: a runner stopping through the coordinator would close its queue
        (``cancel_op``), and queues on the surviving workers must stay open for the
        next session's runners.
        """
        if self._sess is not None:
            try:
                self._sess.close()
            except Exception:
                logger.debug("closing a broken session failed", exc_info=True)
        if self._coord is not None:
            self._coord.request_stop()
        self._sess = None

    @property
    def graph(self) -> Any:
        return get_default_graph() if self._sess is None else self._sess.graph

    def should_stop(self) -> bool:
        return self._stop or self._closed or (self._coord is not None and self._coord.should_stop())

    def run(
        self,
        fetches: Any,
        feed_dict: dict | None = None,
        options: Any = None,
        run_metadata: Any = None,
    ) -> Any:
        """Runs one step with the hooks' fetches and feeds added."""
        while True:
            try:
                return self._run_with_hooks(fetches, feed_dict, options, run_metadata)
            except (*_RECOVERABLE, errors.FailedPreconditionError) as exc:
                if isinstance(exc, errors.FailedPreconditionError) and not self._lost_workers():
                    raise  # a real bug (say, an uninitialized variable), not a failure
                if self.recoveries >= self._max_recoveries:
                    raise
                self.recoveries += 1
                logger.warning(
                    "step failed with %s; recreating the session from the "
                    "latest checkpoint (recovery %d): %s",
                    type(exc).__name__,
                    self.recoveries,
                    exc,
                )
                self._discard()
                self._recreate_with_retries()

    def _lost_workers(self) -> set[str]:
        """Workers of the current session that left the cluster since it started."""
        backend = getattr(self._sess, "backend", None)
        return set(getattr(backend, "lost_workers", ()))

    def _recreate_with_retries(self) -> None:
        """Makes a new session, retrying while the cluster is unavailable (a lost worker
        not back yet) for up to ``recovery_wait_secs``."""
        deadline = time.monotonic() + self._recovery_wait
        delay = 0.1
        while True:
            try:
                self._create()
                return
            except (*_RECOVERABLE, errors.FailedPreconditionError) as exc:
                # A hook's first step on the new session can meet a worker that was lost
                # and came back empty after the restore: retried like any lost worker.
                if isinstance(exc, errors.FailedPreconditionError) and not self._lost_workers():
                    raise
                self._discard()
                if time.monotonic() + delay > deadline:
                    raise
                logger.info("cannot recreate the session yet (%s); retrying", exc)
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _run_with_hooks(
        self, fetches: Any, feed_dict: dict | None, options: Any, run_metadata: Any
    ) -> Any:
        if self._sess is None:
            raise RuntimeError("Attempted to run a closed MonitoredSession.")
        results, stop = run_with_hooks(
            self._sess, self._hooks, fetches, feed_dict, options, run_metadata
        )
        if stop:
            self._stop = True
        return results

    def run_step_fn(self, step_fn: Any) -> Any:
        """Calls ``step_fn(step_context)`` where ``step_context.run_with_hooks`` runs."""

        class _StepContext:
            def __init__(ctx, outer: MonitoredSession):
                ctx.session = outer._sess
                ctx._outer = outer

            def run_with_hooks(ctx, *args: Any, **kwargs: Any) -> Any:
                return ctx._outer.run(*args, **kwargs)

            def request_stop(ctx) -> None:
                ctx._outer._stop = True

        return step_fn(_StepContext(self))

    def close(self) -> None:
        """Runs the hooks' ``end``, stops queue runners and closes the session."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._sess is not None:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            if self._coord is not None:
                self._coord.request_stop()
                try:
                    self._coord.join(
                        self._threads, stop_grace_period_secs=self._grace, ignore_live_threads=True
                    )
                finally:
                    self._discard()
            else:
                self._discard()

    def __enter__(self) -> MonitoredSession:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type in (errors.OutOfRangeError, StopIteration):
            exc_type = None
        try:
            if exc_type is None:
                self.close()
            else:
                self._closed = True
                if self._coord is not None:
                    self._coord.request_stop()
                self._discard()
        except errors.OutOfRangeError:
            pass
        return exc_type is None and exc is not None


class SingularMonitoredSession(MonitoredSession):
    """A ``MonitoredSession`` on the chief, exposing the raw session."""

    def __init__(
        self,
        hooks: list | None = None,
        scaffold: Scaffold | None = None,
        master: Any = "",
        config: Any = None,
        checkpoint_dir: str | None = None,
        stop_grace_period_secs: float = 120,
    ):
        super().__init__(
            ChiefSessionCreator(scaffold, master, config, checkpoint_dir),
            hooks,
            stop_grace_period_secs,
        )

    def raw_session(self) -> Session:
        if self._sess is None:
            raise RuntimeError("The MonitoredSession is closed.")
        return self._sess


def _summary_hooks(
    summary_dir: str | None, scaffold: Scaffold, steps: Any, secs: Any, log_step_count_steps: int
) -> list:
    """The chief's summary hooks, with TF1's defaults: every 100 steps unless
    ``save_summaries_secs`` alone is given; none without a directory."""
    if not summary_dir:
        return []
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        steps, secs = 100, None
    elif secs is USE_DEFAULT:
        secs = None
    elif steps is USE_DEFAULT:
        steps = None
    hooks: list = []
    if log_step_count_steps and log_step_count_steps > 0:
        hooks.append(StepCounterHook(every_n_steps=log_step_count_steps, output_dir=summary_dir))
    if steps and steps > 0:
        hooks.append(SummarySaverHook(save_steps=steps, output_dir=summary_dir, scaffold=scaffold))
    elif secs and secs > 0:
        hooks.append(SummarySaverHook(save_secs=secs, output_dir=summary_dir, scaffold=scaffold))
    return hooks


def MonitoredTrainingSession(
    master: Any = "",
    is_chief: bool = True,
    checkpoint_dir: str | None = None,
    scaffold: Scaffold | None = None,
    hooks: list | None = None,
    chief_only_hooks: list | None = None,
    save_checkpoint_secs: Any = USE_DEFAULT,
    save_summaries_steps: Any = USE_DEFAULT,
    save_summaries_secs: Any = USE_DEFAULT,
    config: Any = None,
    stop_grace_period_secs: float = 120,
    log_step_count_steps: int = 100,
    max_wait_secs: float = 7200,
    save_checkpoint_steps: Any = USE_DEFAULT,
    summary_dir: str | None = None,
    max_recoveries: int = 10,
    recovery_wait_secs: float = 600,
) -> MonitoredSession:
    """A ``MonitoredSession`` set up for training, as in TF1.

    On the chief it restores from (or initializes and then writes) checkpoints in
    ``checkpoint_dir``, saving every ``save_checkpoint_secs`` (default 600) or
    ``save_checkpoint_steps``; other workers wait for the chief's initialization. A lost
    worker (``UnavailableError``) recreates the session from the latest checkpoint, up
    to ``max_recoveries`` times, each time waiting up to ``recovery_wait_secs`` for the
    lost worker (or a replacement of the same name) to be back.
    """
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or [])
    if is_chief:
        all_hooks += list(chief_only_hooks or [])
        if checkpoint_dir:
            if save_checkpoint_steps is not USE_DEFAULT and save_checkpoint_steps:
                all_hooks.append(
                    CheckpointSaverHook(
                        checkpoint_dir, save_steps=save_checkpoint_steps, scaffold=scaffold
                    )
                )
            elif save_checkpoint_secs is USE_DEFAULT or save_checkpoint_secs:
                secs = (
                    600.0
                    if save_checkpoint_secs is USE_DEFAULT
                    else float(cast(float, save_checkpoint_secs))
                )
                all_hooks.append(
                    CheckpointSaverHook(checkpoint_dir, save_secs=secs, scaffold=scaffold)
                )
        all_hooks += _summary_hooks(
            summary_dir or checkpoint_dir,
            scaffold,
            save_summaries_steps,
            save_summaries_secs,
            log_step_count_steps,
        )
        creator: Any = ChiefSessionCreator(scaffold, master, config, checkpoint_dir)
    else:
        creator = WorkerSessionCreator(scaffold, master, config, max_wait_secs)
    return MonitoredSession(
        creator, all_hooks, stop_grace_period_secs, max_recoveries, recovery_wait_secs
    )
