"""Hooks that write TensorBoard summaries: ``SummarySaverHook`` (the graph's summary
ops every N steps or seconds) and ``StepCounterHook`` (``global_step/sec``), as TF1's
``basic_session_run_hooks``. ``MonitoredTrainingSession(summary_dir=...)`` adds both."""

from __future__ import annotations

import logging
from typing import Any

from tensorboard.compat.proto import event_pb2, summary_pb2

from ...summary.writer import FileWriter, FileWriterCache
from ..training_util import global_step_read
from .hooks import (
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    global_step_tensor,
)

logger = logging.getLogger(__name__)


def _writer(summary_writer: FileWriter | None, output_dir: str | None) -> FileWriter | None:
    if summary_writer is not None:
        return summary_writer
    return FileWriterCache.get(output_dir) if output_dir else None


class SummarySaverHook(SessionRunHook):
    """Runs the summary ops with the step every ``save_steps`` steps or ``save_secs``
    seconds (and on the first step) and writes what they return, at the global step.

    Args:
        save_steps, save_secs: how often (exactly one of them).
        output_dir: where to write (through ``FileWriterCache``), unless
            ``summary_writer`` is given.
        scaffold: takes its ``summary_op`` (by default every summary of the graph)
            unless ``summary_op`` is given.
        summary_op: one serialized-summary tensor or a list of them.

    Raises:
        ValueError: neither or both of ``scaffold`` and ``summary_op`` are given, or
            neither or both of ``save_steps`` and ``save_secs``.
    """

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: FileWriter | None = None,
        scaffold: Any = None,
        summary_op: Any = None,
    ):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._output_dir, self._summary_writer = output_dir, summary_writer
        self._scaffold, self._summary_op = scaffold, summary_op
        self._request_summary = False
        self._next_step: int | None = None

    def begin(self) -> None:
        self._writer = _writer(self._summary_writer, self._output_dir)
        self._global_step = global_step_tensor()
        self._step_read = global_step_read()
        self._next_step = None

    def _summary_tensors(self) -> list:
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if op is None:
            return []
        return list(op) if isinstance(op, (list, tuple)) else [op]

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(
            self._next_step
        )
        fetches: dict[str, Any] = {"global_step": self._step_read}
        if self._request_summary and self._summary_tensors():
            fetches["summary"] = self._summary_tensors()
        return SessionRunArgs(fetches)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._writer is None:
            return
        results = run_values.results
        step = int(results["global_step"])  # read after this run's updates
        if self._next_step is None or self._request_summary:
            step = int(run_context.session.run(self._global_step))
        if self._next_step is None:
            start = event_pb2.SessionLog(status=event_pb2.SessionLog.START)
            self._writer.add_session_log(start, step)
        if self._request_summary:
            self._timer.update_last_triggered_step(step)
            for summary in results.get("summary", []):
                self._writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session: Any) -> None:
        if self._writer is not None:
            self._writer.flush()


class StepCounterHook(SessionRunHook):
    """Writes the training speed, ``global_step/sec``, every ``every_n_steps`` steps
    or ``every_n_secs`` seconds, and logs it at level INFO."""

    def __init__(
        self,
        every_n_steps: int | None = 100,
        every_n_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: FileWriter | None = None,
    ):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._output_dir, self._summary_writer = output_dir, summary_writer
        self._tag = "global_step/sec"

    def begin(self) -> None:
        self._writer = _writer(self._summary_writer, self._output_dir)
        self._global_step = global_step_tensor()
        self._step_read = global_step_read()

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._step_read)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = int(run_values.results)
        if not self._timer.should_trigger_for_step(step):
            return
        step = int(run_context.session.run(self._global_step))
        if not self._timer.should_trigger_for_step(step):
            return
        elapsed_secs, elapsed_steps = self._timer.update_last_triggered_step(step)
        if elapsed_secs is None or elapsed_steps is None or elapsed_secs <= 0:
            return
        rate = elapsed_steps / elapsed_secs
        logger.info("%s: %g", self._tag, rate)
        if self._writer is not None:
            value = summary_pb2.Summary.Value(tag=self._tag, simple_value=rate)
            self._writer.add_summary(summary_pb2.Summary(value=[value]), step)
