"""``tf.train.ProfilerHook``: every N steps or seconds, trace one training step
(``RunOptions(trace_level=FULL_TRACE)``) and write its per-op timings as a Chrome trace,
``timeline-<global step>.json`` in ``output_dir`` (open it in ``chrome://tracing`` or
ui.perfetto.dev), as TF1's hook does; the step's ``RunMetadata`` also goes to the event
file there, so TensorBoard's graph page shows the step's timings."""

from __future__ import annotations

import os

from ...runtime.config import RunOptions
from ...summary.chrome_trace import write_chrome_trace
from ...summary.writer import FileWriterCache
from ..training_util import get_global_step
from .hooks import (
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)


class ProfilerHook(SessionRunHook):
    """Writes a Chrome trace of one step every ``save_steps`` steps or ``save_secs``
    seconds (exactly one of them), to ``output_dir/timeline-<step>.json``.

    ``show_dataflow`` and ``show_memory`` are TF1's options of its timeline drawing:
    accepted; the trace shows each kernel's run on its device and thread (dataflow's
    step trace has no per-tensor memory records, and no arrows between ops).

    Raises:
        ValueError: both or neither of ``save_steps`` and ``save_secs``.
        RuntimeError: (at ``begin``) the graph has no global step.
    """

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str = "",
        show_dataflow: bool = True,
        show_memory: bool = False,
    ):
        if (save_steps is None) == (save_secs is None):
            raise ValueError("exactly one of save_steps and save_secs should be provided.")
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._output_dir = output_dir
        del show_dataflow, show_memory  # drawing options of TF1's timeline (docstring)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        self._next_step: int | None = None
        self._global_step_tensor = get_global_step()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use ProfilerHook.")
        self._writer = FileWriterCache.get(self._output_dir)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        self._trace = self._next_step is not None and self._timer.should_trigger_for_step(
            self._next_step
        )
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._trace else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        stale = int(run_values.results["global_step"])
        if self._next_step is None:
            # The first step only sets the timer going, as TF1's hook does.
            self._timer.update_last_triggered_step(stale)
        step = stale + 1
        if self._trace:
            step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(step)
            write_chrome_trace(run_values.run_metadata, self._output_file.format(step))
            self._writer.add_run_metadata(run_values.run_metadata, f"step_{step}")
        self._next_step = step + 1
