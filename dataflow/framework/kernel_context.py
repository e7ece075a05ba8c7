"""What a kernel factory may use: the contract between the op library and runtimes.

``kernel(ctx, attrs)`` receives a context object with:

* ``xp``: the array namespace of the device (``numpy`` or ``cupy``);
* ``device``: the full device name the op was placed on;
* ``op_name``: the op's name, for error messages and per-op state (random streams);
* ``resources``: the device's ``ResourceStore`` (variables, queues, random streams);
* ``session``: a name unique to the session running the plan (``""`` where the store
  itself is the session's, as in an embedded session): a resource made without a
  ``shared_name`` is stored under ``private_name(name, ctx.session)``, private to that
  session as TF1's per-session resource names make it, and released when the session
  closes (``ResourceStore.release_session``);
* ``subgraph(plan_attr)``: a callable running a compiled sub-graph (``cond`` branches,
  ``while_loop`` bodies) with the same context;
* ``step``: a zero-argument callable giving the current step id (for idempotent updates);
* optionally ``will_block()`` and ``cancelled()``, for kernels that wait on other steps
  (queues): call ``will_block()`` once before first waiting (a Dask worker frees the
  thread's slot), and re-check ``cancelled()`` whenever woken (the step's session closed
  or its client gave up; raise ``CancelledError``); optionally also ``deadline()``, the
  ``time.monotonic()`` by which the step must finish (or ``None``): a kernel still
  waiting then raises ``DeadlineExceededError``, having changed nothing.

Kernels may return ``Folded(value)`` instead of a callable when the op's output never
changes between steps (constants); the executor then binds the value directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Folded:
    """A kernel result that is the same on every step."""

    value: Any


class KernelContext(Protocol):
    """What every context offers (read-only to kernels); see the module docstring."""

    @property
    def xp(self) -> Any: ...
    @property
    def device(self) -> str: ...
    @property
    def op_name(self) -> str: ...
    @property
    def resources(self) -> Any: ...
    @property
    def session(self) -> str: ...

    def subgraph(self, plan: Any) -> Any: ...


PRIVATE_MARK = "@session:"


def private_name(name: str, session: str) -> str:
    """The store name of resource ``name`` when it belongs to ``session`` alone (made
    without a ``shared_name``): no other session's kernels find it, and the session's
    store releases it when the session closes."""
    return f"{name}{PRIVATE_MARK}{session}"


def blocking_waiter(ctx: Any) -> Any:
    """``ctx`` when it offers the hooks a blocking kernel calls (``will_block`` before it
    first waits, ``cancelled`` whenever it wakes), else ``None`` (a context that cannot
    be waited on: blocking calls then just wait)."""
    return ctx if hasattr(ctx, "cancelled") and hasattr(ctx, "will_block") else None
