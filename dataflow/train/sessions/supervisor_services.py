"""The ``Supervisor``'s service threads (TF1's ``SVSummaryThread``, ``SVStepCounterThread``,
``SVTimerCheckpointThread``), each a ``LooperThread``: call a function now and then
every interval until the coordinator asks to stop; an error in it stops everything and
is re-raised by the coordinator's ``join``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


class LooperThread(threading.Thread):
    """Runs ``target(*args, **kwargs)`` at once and then every ``interval`` seconds until
    ``coord`` stops (TF1's ``tf.train.LooperThread``)."""

    def __init__(
        self,
        coord: Any,
        interval: float | None,
        target: Callable | None = None,
        args: Any = None,
        kwargs: Any = None,
    ):
        super().__init__(daemon=True)
        self._coord = coord
        self._interval = interval
        self._target_fn = target
        self._args = tuple(args or ())
        self._kwargs = dict(kwargs or {})
        coord.register_thread(self)

    def run_loop(self) -> None:
        if self._target_fn is not None:
            self._target_fn(*self._args, **self._kwargs)

    def run(self) -> None:
        with self._coord.stop_on_exception():
            if self._interval is None:
                while not self._coord.should_stop():
                    self.run_loop()
                return
            next_time = time.monotonic()
            while not self._coord.wait_for_stop(max(0.0, next_time - time.monotonic())):
                next_time += self._interval
                self.run_loop()


class SummaryThread(LooperThread):
    """Runs the supervisor's ``summary_op`` and writes what it returns."""

    def __init__(self, sv: Any, sess: Any):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self) -> None:
        sv = self._sv
        if sv.global_step is not None:
            summary, step = self._sess.run([sv.summary_op, sv.global_step])
        else:
            summary, step = self._sess.run(sv.summary_op), None
        sv.summary_writer.add_summary(summary, None if step is None else int(step))


class StepCounterThread(LooperThread):
    """Writes ``<global step name>/sec``: the steps per second since its last run."""

    def __init__(self, sv: Any, sess: Any):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess
        self._last: tuple[int, float] | None = None
        self._tag = f"{sv.global_step.op.name.rsplit('/', 1)[-1]}/sec"

    def run_loop(self) -> None:
        from ...summary import Summary

        step, now = int(self._sess.run(self._sv.global_step)), time.monotonic()
        if self._last is not None and now > self._last[1]:
            rate = (step - self._last[0]) / (now - self._last[1])
            summary = Summary(value=[Summary.Value(tag=self._tag, simple_value=rate)])
            self._sv.summary_writer.add_summary(summary, step)
        self._last = (step, now)


class CheckpointThread(LooperThread):
    """Saves a checkpoint to the supervisor's ``save_path``."""

    def __init__(self, sv: Any, sess: Any):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self) -> None:
        sv = self._sv
        path = sv.saver.save(self._sess, sv.save_path, global_step=sv.global_step)
        if sv.summary_writer is not None:
            from ...summary import SessionLog

            step = None if sv.global_step is None else int(self._sess.run(sv.global_step))
            log = SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=path)
            sv.summary_writer.add_session_log(log, step)
