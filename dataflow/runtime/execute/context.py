"""The kernel context a runtime hands to kernel factories (see
``framework/kernel_context.py`` for the contract)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from ..resources import ResourceStore
from .executor import EmbeddedPlan, translate_error


class _StepDeadline(threading.local):
    """The ``time.monotonic()`` by which the step running in this thread must finish
    (``None``: no deadline). Per thread: sessions run steps from several threads."""

    at: float | None = None


_step_deadline = _StepDeadline()


@contextlib.contextmanager
def step_deadline(timeout: float) -> Iterator[None]:
    """Gives the step run inside the block ``timeout`` seconds: a kernel that blocks
    (a queue) past then fails with ``DeadlineExceededError``."""
    saved = _step_deadline.at
    _step_deadline.at = time.monotonic() + timeout
    try:
        yield
    finally:
        _step_deadline.at = saved


class DeviceContext:
    """Kernel context of one device in one process."""

    def __init__(
        self,
        device: str,
        xp: Any,
        resources: ResourceStore,
        debug: bool = False,
        session: str = "",
    ) -> None:
        self.device = device
        self.xp = xp
        self.resources = resources
        self.op_name = ""
        self.debug = debug
        self.session = session  # see framework/kernel_context.py
        self.current_step = 0

    def step(self) -> int:
        return self.current_step

    # --- the blocking hooks (see framework/kernel_context.py) ---------------------------
    def will_block(self) -> None:
        """Nothing to do in this process: the step's thread simply waits."""

    def cancelled(self) -> bool:
        """An embedded step is cancelled only by its session closing (``cancel_all``)."""
        return False

    def deadline(self) -> float | None:
        """The ``time.monotonic()`` deadline of the step running in this thread."""
        return _step_deadline.at

    def subgraph(self, plan: Any) -> Any:
        """A callable running a compiled control-flow body on this device."""
        saved = self.op_name  # compiling the body's kernels rebinds op_name
        bound = EmbeddedPlan(plan, {self.device: self}, self.debug)
        self.op_name = saved
        return _direct_runner(bound) or bound.run


def _direct_runner(bound: EmbeddedPlan) -> Any:
    """``bound.run`` for a one-stage body, minus the per-step work a body does not need.

    A loop runs its body once per iteration, inside its own kernel call (so inside the
    step's numpy error state): this calls the stage function directly and picks the
    fetched values, which halves a small loop's per-iteration cost.
    """
    if len(bound.stages) != 1 or bound._single_map is None:
        return None
    fn, arg_index = bound._single_map
    identity_args = bound._identity_args
    fetch = bound._fetch_from
    stage = bound.stages[0]
    in_order = all(kind == "o" for kind, _ in fetch) and tuple(i for _, i in fetch) == tuple(
        range(len(stage.stage.outputs))
    )

    def run(values: Any) -> Any:
        args = values if identity_args else [values[i] for i in arg_index]
        try:
            outs = fn(*args)
        except Exception as exc:
            raise translate_error(
                exc, stage.call_for_traceback(exc.__traceback__), stage.stage.device
            ) from None
        if in_order:
            return outs
        return [
            None if kind == "n" else (outs[i] if kind == "o" else values[i]) for kind, i in fetch
        ]

    return run
