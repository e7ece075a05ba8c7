"""Small ``tf.train`` hooks and loops that ride on the hook protocol (``hooks.py``):
feeding from a function, fetching once at the end, waiting for the global step, and
the Supervisor's ``basic_train_loop``.

* ``FeedFnHook(feed_fn)``: every run is fed ``feed_fn()`` (a dict), as TF1's input
  functions for estimators did;
* ``FinalOpsHook(final_ops, final_ops_feed_dict)``: runs ``final_ops`` once when the
  session ends and keeps their values (``final_ops_values``): an evaluation's metrics;
* ``GlobalStepWaiterHook(wait_until_step)``: holds a worker's first run until the
  global step reaches ``wait_until_step`` (non-chief replicas that start after the
  chief has made some progress);
* ``basic_train_loop(supervisor, train_step_fn)``: calls ``train_step_fn(sess)`` in a
  Supervisor's managed session until it should stop, starting over after an
  ``AbortedError`` (a lost worker), as TF1 does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from ...framework import errors
from .hooks import SessionRunArgs, SessionRunContext, SessionRunHook, global_step_tensor

logger = logging.getLogger(__name__)


class FeedFnHook(SessionRunHook):
    """Feeds ``feed_fn()`` to every run of the session."""

    def __init__(self, feed_fn: Callable[[], dict[Any, Any]]):
        self.feed_fn = feed_fn

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` (any fetch structure) when the session ends.

    Args:
        final_ops: what to fetch at the end.
        final_ops_feed_dict: a feed for that run.
    """

    def __init__(self, final_ops: Any, final_ops_feed_dict: dict[Any, Any] | None = None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values: Any = None

    @property
    def final_ops_values(self) -> Any:
        """The fetched values of ``final_ops`` (None until the session has ended)."""
        return self._final_ops_values

    def end(self, session: Any) -> None:
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(
                self._final_ops, feed_dict=self._final_ops_feed_dict
            )
        except (errors.OutOfRangeError, StopIteration):
            # An input that is exhausted by the final ops is a bug in the caller's graph;
            # say which ops, then let it propagate as TF1 does.
            logger.warning(
                "An OutOfRangeError or StopIteration was raised by one of the final ops: "
                "the final ops should not read from an input that can run out"
            )
            raise


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step is at least ``wait_until_step``.

    Raises:
        RuntimeError: (at ``begin``) the graph has no global step.
    """

    def __init__(self, wait_until_step: int, poll_secs: float = 0.5):
        self._wait_until_step = wait_until_step
        self._poll_secs = poll_secs
        self._started = False
        self._global_step: Any = None

    def begin(self) -> None:
        self._started = False
        self._global_step = global_step_tensor()  # RuntimeError if there is none

    def before_run(self, run_context: SessionRunContext) -> None:
        if self._started:
            return
        if self._wait_until_step <= 0:
            self._started = True
            return
        logger.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged = None
        while True:
            step = int(run_context.session.run(self._global_step))
            if step >= self._wait_until_step:
                self._started = True
                return
            if step != last_logged:
                logger.info(
                    "Waiting for global step %d before starting training; now at %d.",
                    self._wait_until_step,
                    step,
                )
                last_logged = step
            time.sleep(self._poll_secs)


def basic_train_loop(
    supervisor: Any,
    train_step_fn: Callable[..., Any],
    args: Sequence[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    master: str = "",
) -> None:
    """Runs ``train_step_fn(sess, *args, **kwargs)`` until ``supervisor.should_stop()``,
    in ``supervisor.managed_session(master)``; a step that raises ``AbortedError``
    starts the session over (the Supervisor restores from its latest checkpoint)."""
    args = list(args or [])
    kwargs = dict(kwargs or {})
    while True:
        try:
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
            return
        except errors.AbortedError:
            logger.info("A training step was aborted; starting the session over.")
