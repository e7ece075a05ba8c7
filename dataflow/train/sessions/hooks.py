"""Session run hooks: code run around each step of a ``MonitoredSession``.

A hook sees the session at creation (``after_create_session``), adds fetches and feeds
to every step (``before_run`` returns ``SessionRunArgs``), reads their values
(``after_run``) and may ask the loop to stop (``run_context.request_stop()``).
"""

from __future__ import annotations

import collections
import logging
import math
import os
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ...framework.graph import Tensor, get_default_graph
from ...ops.state.variables import GraphKeys
from ..saver import Saver
from ..training_util import global_step_read

# A child of the "dataflow" logger that ``tf.logging`` configures: as in TF1, hook output
# shows once ``tf.logging.set_verbosity(tf.logging.INFO)`` is called.
logger = logging.getLogger(__name__)


class SessionRunArgs(NamedTuple):
    """What a hook adds to a step: fetches (any nesting), feeds and options."""

    fetches: Any
    feed_dict: dict | None = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """The values of a hook's fetches after a step."""

    results: Any
    options: Any = None
    run_metadata: Any = None


class SessionRunContext:
    """Passed to hooks around one step; ``request_stop()`` ends the training loop."""

    def __init__(self, original_args: SessionRunArgs, session: Any):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        return self._original_args

    @property
    def session(self) -> Any:
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        self._stop_requested = True


class SessionRunHook:
    """Base class: override what you need."""

    def begin(self) -> None:
        """Called once before the graph is finalized; may add ops."""

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Called when a (new or recovered) session is ready."""

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Called after each step with the hook's fetched values."""

    def end(self, session: Any) -> None:
        """Called once when the monitored session closes normally."""


def global_step_tensor() -> Any:
    steps = get_default_graph().get_collection(GraphKeys.GLOBAL_STEP)
    if not steps:
        raise RuntimeError(
            "Global step should be created to use this hook (see "
            "tf.train.get_or_create_global_step())."
        )
    return steps[0]


class StopAtStepHook(SessionRunHook):
    """Stops after ``num_steps`` more steps, or once the global step reaches
    ``last_step``."""

    def __init__(self, num_steps: int | None = None, last_step: int | None = None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps must be non-negative")
        self._num_steps = num_steps
        self._last_step = last_step

    @property
    def last_step(self) -> int | None:
        """The global step it stops at (with ``num_steps``, known once a session
        exists)."""
        return self._last_step

    def begin(self) -> None:
        self._global_step = global_step_tensor()
        self._step_read = global_step_read()

    def after_create_session(self, session: Any, coord: Any) -> None:
        step = int(session.run(self._global_step))
        if self._last_step is None:
            assert self._num_steps is not None  # __init__ takes exactly one of the two
            self._last_step = step + self._num_steps

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._step_read)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = int(run_values.results)  # read after this run's updates
        last_step = self._last_step
        assert last_step is not None  # set by after_create_session
        if step >= last_step:
            # Read again: another worker may have moved the shared step further.
            if int(run_context.session.run(self._global_step)) >= last_step:
                run_context.request_stop()


class SecondOrStepTimer:
    """Fires every ``every_secs`` seconds or every ``every_steps`` steps (TF1's timer of
    the hooks): never twice for one step, always the first time."""

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._secs, self._steps = every_secs, every_steps
        self.reset()

    def reset(self) -> None:
        self._last_time: float | None = None
        self._last_step: int | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_step is None or self._last_time is None:  # (set together)
            return True
        if step == self._last_step:
            return False
        if self._steps is not None:
            return step >= self._last_step + self._steps
        assert self._secs is not None  # __init__ takes exactly one of the two
        return time.monotonic() >= self._last_time + self._secs

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """Records a firing at ``step``; returns the seconds and steps since the last."""
        now = time.monotonic()
        elapsed: tuple[float | None, int | None] = (None, None)
        if self._last_time is not None and self._last_step is not None:
            elapsed = (now - self._last_time, step - self._last_step)
        self._last_time, self._last_step = now, step
        return elapsed

    def last_triggered_step(self) -> int | None:
        return self._last_step


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint every ``save_secs`` seconds or ``save_steps`` steps, when the
    session is created (so a restart never loses the initial state) and at the end."""

    def __init__(
        self,
        checkpoint_dir: str,
        save_secs: float | None = None,
        save_steps: int | None = None,
        saver: Saver | None = None,
        checkpoint_basename: str = "model.ckpt",
        scaffold: Any = None,
        listeners: list | None = None,
    ):
        self._path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(save_secs, save_steps)
        self._saver = saver
        self._scaffold = scaffold
        self._listeners = listeners or []
        self.saved_steps: list[int] = []

    def begin(self) -> None:
        self._global_step = global_step_tensor()
        for listener in self._listeners:
            listener.begin()

    def _get_saver(self) -> Saver:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None and self._scaffold.saver is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if len(savers) != 1:
            raise RuntimeError(
                "CheckpointSaverHook needs exactly one saver in the SAVERS "
                f"collection (found {len(savers)}); pass saver=."
            )
        return savers[0]

    def after_create_session(self, session: Any, coord: Any) -> None:
        step = int(session.run(self._global_step))
        if self._timer.last_triggered_step() != step:
            self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = int(run_context.session.run(self._global_step))
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._save(run_context.session, step):
                run_context.request_stop()

    def end(self, session: Any) -> None:
        step = int(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session: Any, step: int) -> bool:
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._path, global_step=step)
        self.saved_steps.append(step)
        stop = False
        for listener in self._listeners:
            stop = bool(listener.after_save(session, step)) or stop
        return stop


class CheckpointSaverListener:
    """Called around the saves of a ``CheckpointSaverHook``."""

    def begin(self) -> None:
        pass

    def before_save(self, session: Any, global_step_value: int) -> None:
        pass

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        return None

    def end(self, session: Any, global_step_value: int) -> None:
        pass


class LoggingTensorHook(SessionRunHook):
    """Logs the values of ``tensors`` every N steps or seconds (and at the end), at
    level INFO through ``tf.logging`` as TF1 does, or to ``stream`` if one is given.

    ``logged`` keeps only the last ``HISTORY`` logged value dicts (a long run must not
    grow memory); the log itself is the record."""

    HISTORY = 100

    def __init__(
        self,
        tensors: Any,
        every_n_iter: int | None = None,
        every_n_secs: float | None = None,
        at_end: bool = False,
        formatter: Callable[[dict], str] | None = None,
        stream: Any = None,
    ):
        if not at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and "
                "every_n_secs must be provided."
            )
        if isinstance(tensors, dict):
            self._tags, self._tensors = list(tensors), list(tensors.values())
        else:
            self._tags = [t.name if isinstance(t, Tensor) else str(t) for t in tensors]
            self._tensors = list(tensors)
        self._timer = (
            SecondOrStepTimer(every_n_secs, every_n_iter)
            if not (every_n_iter is None and every_n_secs is None)
            else None
        )
        self._at_end = at_end
        self._formatter = formatter
        self._stream = stream
        self._iter = 0
        self._should_log = False
        self.logged: collections.deque[dict] = collections.deque(maxlen=self.HISTORY)

    def begin(self) -> None:
        self._iter = 0

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._should_log = self._timer is not None and self._timer.should_trigger_for_step(
            self._iter
        )
        return SessionRunArgs(dict(zip(self._tags, self._tensors))) if self._should_log else None

    def _log(self, values: dict) -> None:
        self.logged.append(values)
        text = (
            self._formatter(values)
            if self._formatter
            else ", ".join(f"{k} = {v}" for k, v in values.items())
        )
        if self._stream is not None:
            self._stream.write(text + "\n")
        else:
            logger.info(text)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._should_log:
            assert self._timer is not None  # before_run logs only with a timer
            self._timer.update_last_triggered_step(self._iter)
            self._log(run_values.results)
        self._iter += 1

    def end(self, session: Any) -> None:
        if self._at_end:
            self._log(dict(zip(self._tags, session.run(self._tensors))))


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Stops (or raises) when the loss becomes NaN."""

    def __init__(self, loss_tensor: Any, fail_on_nan_loss: bool = True):
        self._loss = loss_tensor
        self._fail = fail_on_nan_loss

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._loss)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if np.isnan(run_values.results):
            if self._fail:
                raise NanLossDuringTrainingError
            run_context.request_stop()


class ProgressBarHook(SessionRunHook):
    """A tqdm progress bar over the global step (up to ``last_step`` when known), or
    over the steps run when the graph has no global step.

    Without ``last_step``, the bar counts to the step a ``StopAtStepHook`` among the same
    session's hooks stops at (``MonitoredSession``, ``HookedSession``), ``num_steps``
    included. ``postfix`` maps names to tensors shown beside the bar (e.g.
    ``{"loss": loss}``). In a plain ``Session.run`` loop, run it through
    ``tf.train.HookedSession``.
    """

    def __init__(
        self,
        last_step: int | None = None,
        postfix: dict | None = None,
        desc: str = "training",
        every_n_iter: int = 1,
        file: Any = None,
        disable: bool = False,
    ):
        self._last_step = last_step
        self._total_given = last_step is not None
        self._postfix = dict(postfix or {})
        self._desc = desc
        self._every = max(1, every_n_iter)
        self._file = file
        self._disable = disable
        self._bar: Any = None
        self._iter = 0

    @property
    def last_step(self) -> int | None:
        """The global step the bar counts to (``None``: no total)."""
        return self._last_step

    def count_to(self, last_step: int) -> None:
        """Sets the bar's total to ``last_step`` unless one was given to the constructor
        (the session's hooks call it with a ``StopAtStepHook``'s ``last_step``)."""
        if self._total_given:
            return
        self._last_step = last_step
        if self._bar is not None:
            self._bar.total = last_step
            self._bar.refresh()

    def begin(self) -> None:
        steps = get_default_graph().get_collection(GraphKeys.GLOBAL_STEP)
        self._global_step = steps[0] if steps else None
        self._step_read = global_step_read() if steps else None

    def after_create_session(self, session: Any, coord: Any) -> None:
        from tqdm.auto import tqdm

        step = int(session.run(self._global_step)) if self._global_step is not None else 0
        if self._bar is None:
            self._bar = tqdm(
                total=self._last_step,
                initial=step,
                desc=self._desc,
                file=self._file,
                disable=self._disable,
                dynamic_ncols=True,
            )
        else:  # a recovered session: continue from the restored step
            self._bar.n = step
            self._bar.refresh()

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        step = {} if self._step_read is None else {"step": self._step_read}
        return SessionRunArgs({**step, **self._postfix})

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        self._iter += 1
        values = run_values.results
        self._bar.n = int(values["step"]) if "step" in values else self._bar.n + 1
        if self._iter % self._every == 0:
            if self._postfix:
                self._bar.set_postfix({k: _short(values[k]) for k in self._postfix}, refresh=False)
            self._bar.refresh()

    def end(self, session: Any) -> None:
        if self._bar is not None:
            self._bar.close()

    @property
    def bar(self) -> Any:
        return self._bar


def _short(value: Any) -> Any:
    value = np.asarray(value)
    if value.size == 1:
        v = float(value)
        return f"{v:.4g}" if math.isfinite(v) else v
    return value
