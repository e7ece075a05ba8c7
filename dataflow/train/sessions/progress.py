"""Hooks around a plain ``Session.run`` loop, and so a progress bar without
``MonitoredTrainingSession``.

TF1's ``SessionRunHook``s run only inside a ``MonitoredSession``; notebooks mostly
train with ``for step in range(n): sess.run(train_op, feed)``. ``HookedSession`` wraps
that session: each ``run`` asks every hook for extra fetches and feeds
(``before_run``), runs them in the same step, and hands the results back
(``after_run``), as ``MonitoredSession`` does (both through ``run_with_hooks``), but
it creates, recovers and closes nothing: the session stays the caller's.

Both also add a ``DashboardProgressHook``, which shows on the cluster dashboard's
dataflow page how far training is (the global step against the last step a
``StopAtStepHook`` or ``ProgressBarHook`` stops at); it does nothing off a cluster.

Example:
    >>> bar = tf.train.ProgressBarHook(last_step=200, postfix={"loss": loss})  # doctest: +SKIP
    >>> with tf.train.HookedSession(sess, [bar]) as hooked:  # doctest: +SKIP
    ...     for _ in range(200):
    ...         hooked.run(train_op, feed)
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ...framework.graph import get_default_graph
from ...ops.state.variables import GraphKeys
from ...runtime import dashboard
from ...runtime.config import RunMetadata, RunOptions
from ..training_util import global_step_read
from .hooks import (
    ProgressBarHook,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    StopAtStepHook,
)

logger = logging.getLogger(__name__)

REPORT_EVERY_S = 1.0  # how often a session tells the dashboard its global step


def run_with_hooks(
    session: Any,
    hooks: list[SessionRunHook],
    fetches: Any,
    feed_dict: dict | None = None,
    options: Any = None,
    run_metadata: Any = None,
) -> tuple[Any, bool]:
    """One ``session.run`` with ``hooks`` around it, as TF1's hooked session does: each
    hook's ``before_run`` may add fetches and feeds, which run in the same step, and its
    ``after_run`` gets their values (``None`` for a hook that asked for nothing).

    Shared by ``HookedSession`` and ``MonitoredSession``.

    Returns:
        ``(the caller's results, whether a hook asked to stop)``.

    Raises:
        RuntimeError: a hook feeds a tensor the caller feeds too.
    """
    context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), session)
    extra = [hook.before_run(context) for hook in hooks]
    feeds = dict(feed_dict or {})
    for e in extra:
        if e is not None and e.feed_dict:
            overlap = set(feeds) & set(e.feed_dict)
            if overlap:
                raise RuntimeError(f"Same tensor is fed by a hook and the caller: {overlap}")
            feeds.update(e.feed_dict)
    # A hook with nothing to fetch gets an empty list run in its place.
    hook_fetches = [e.fetches if e is not None and e.fetches is not None else [] for e in extra]
    options = _merged_options(options, [e.options for e in extra if e is not None and e.options])
    if options is not None and run_metadata is None:
        # As TF1's hooked session: a hook that asked for a trace reads it in after_run.
        run_metadata = RunMetadata()
    results = session.run({"caller": fetches, "hooks": hook_fetches}, feeds, options, run_metadata)
    for hook, e, value in zip(hooks, extra, results["hooks"], strict=True):
        hook.after_run(
            context, SessionRunValues(value if e is not None else None, options, run_metadata)
        )
    return results["caller"], context.stop_requested


def _merged_options(caller: Any, asked: list[Any]) -> Any:
    """The step's ``RunOptions``: the caller's, with what hooks asked for merged in as
    TF1 merges them (the highest trace level, the shortest non-zero timeout)."""
    if not asked:
        return caller
    merged = RunOptions(
        trace_level=getattr(caller, "trace_level", 0),
        timeout_in_ms=getattr(caller, "timeout_in_ms", 0),
    )
    for options in asked:
        merged.trace_level = max(merged.trace_level, getattr(options, "trace_level", 0))
        timeout = getattr(options, "timeout_in_ms", 0)
        if timeout and (not merged.timeout_in_ms or timeout < merged.timeout_in_ms):
            merged.timeout_in_ms = timeout
    return merged


class DashboardProgressHook(SessionRunHook):
    """Tells the dashboard's dataflow page how far training is (``dashboard.
    report_progress``): the global step, the step a ``StopAtStepHook`` or
    ``ProgressBarHook`` among ``hooks`` stops at, and the global step's rate.

    ``MonitoredSession`` and ``HookedSession`` add one after the caller's hooks. Once
    their sessions exist it gives a ``ProgressBarHook`` without a ``last_step`` the one a
    ``StopAtStepHook`` among them stops at (known only then, with ``num_steps``). For the
    dashboard it does nothing on an embedded session or a graph without a global step;
    otherwise it adds
    the global step to the fetches of one step a second (``REPORT_EVERY_S``: one small
    read from the ps, and the report sent without waiting) and reads it once more at
    ``end``, so the page shows where training finished.
    """

    def __init__(self, hooks: list[SessionRunHook]):
        self._targets = [h for h in hooks if isinstance(h, (StopAtStepHook, ProgressBarHook))]
        self._global_step: Any = None
        self._on = False
        self._next = 0.0
        self._last: tuple[float, int] | None = None  # (time, global step) reported last

    def begin(self) -> None:
        steps = get_default_graph().get_collection(GraphKeys.GLOBAL_STEP)
        self._global_step = steps[0] if steps else None
        self._step_read = global_step_read() if steps else None

    def after_create_session(self, session: Any, coord: Any) -> None:
        stops = [h.last_step for h in self._targets if isinstance(h, StopAtStepHook)]
        known = [int(s) for s in stops if s is not None]
        if known:
            for hook in self._targets:
                if isinstance(hook, ProgressBarHook):
                    hook.count_to(min(known))
        self._on = self._global_step is not None and dashboard.can_report(session)
        self._next = 0.0  # report the first step (again, after a recovery)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        if not self._on or time.monotonic() < self._next:
            return None
        return SessionRunArgs(self._step_read)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if run_values.results is None:
            return
        # The step this run performed, as StopAtStepHook counts it.
        self._report(run_context.session, int(run_values.results))

    def end(self, session: Any) -> None:
        if not self._on:
            return
        try:
            step = int(session.run(self._global_step))
        except Exception:  # the dashboard never fails a training loop, even at its end
            logger.debug(
                "dataflow: could not read the global step for the dashboard", exc_info=True
            )
            return
        self._report(session, step)

    def _report(self, session: Any, step: int) -> None:
        now = time.monotonic()
        self._next = now + REPORT_EVERY_S
        rate = None
        if self._last is not None and now > self._last[0]:
            rate = (step - self._last[1]) / (now - self._last[0])
        self._last = (now, step)
        dashboard.report_progress(session, step, self._last_step(), rate)

    def _last_step(self) -> int | None:
        for hook in self._targets:
            # (StopAtStepHook knows it once the session exists, from num_steps.)
            if hook.last_step is not None:
                return int(hook.last_step)
        return None


class HookedSession:
    """Runs ``hooks`` around each ``run`` of an existing ``session``.

    Args:
        session: a ``tf.Session`` (left open by ``close``).
        hooks: ``SessionRunHook``s; ``begin`` and ``after_create_session`` are called
            here, ``end`` by ``close`` (or leaving the ``with`` block without error).
    """

    def __init__(self, session: Any, hooks: list[SessionRunHook]):
        self._sess = session
        self._hooks = [*hooks, DashboardProgressHook(hooks)]
        self._stop = False
        for hook in self._hooks:
            hook.begin()
        for hook in self._hooks:
            hook.after_create_session(session, None)

    @property
    def session(self) -> Any:
        return self._sess

    def should_stop(self) -> bool:
        """True once a hook asked to stop (``run_context.request_stop()``)."""
        return self._stop

    def run(
        self,
        fetches: Any,
        feed_dict: dict | None = None,
        options: Any = None,
        run_metadata: Any = None,
    ) -> Any:
        """``session.run(fetches, feed_dict)`` with the hooks' fetches and feeds added.

        Raises:
            RuntimeError: a hook feeds a tensor the caller feeds too.
        """
        results, stop = run_with_hooks(
            self._sess, self._hooks, fetches, feed_dict, options, run_metadata
        )
        self._stop = self._stop or stop
        return results

    def close(self) -> None:
        """Calls every hook's ``end`` (the session stays open)."""
        hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook.end(self._sess)

    def __enter__(self) -> HookedSession:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
