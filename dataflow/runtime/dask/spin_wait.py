"""A worker's event loop polls its sockets for a moment before it sleeps, while steps run.

A step is a chain of messages between processes (client -> ps -> worker -> ps ->
client for a ps and a worker), and each message that finds its receiver asleep waits
for the receiver's core to wake: on the project's 2-core VM the hypervisor took 40-60 us
to wake a halted vCPU (``perf sched timehist``), several times a step of 0.6-1.0 ms.
A loop that is still polling when the message comes takes it at once. TF1's executor
threads spin before they sleep for the same reason.

Decisions, and why:

* **Only while steps run.** ``note_step()`` (each step-stream message a worker
  handles, each reply it sends) keeps the loop *hot* for ``HOT_SECONDS``; only a hot
  loop polls. An idle worker sleeps as before: Dask's own ticks and heartbeats do not
  heat it, so an idle cluster costs what it did.
* **Not while a stage computes on the worker's executor** (``computing()``): the loop
  would take a core and the GIL from the stage's own kernels.
* **Only where a core is free.** A process that polls while another thread wants its
  core takes that thread's time, and loses the head start Linux gives a thread that
  wakes from sleep: measured with two busy processes beside the cluster, steps took
  3.7-4.3x as long. So a loop polls only while ``/proc/loadavg`` counts no more
  runnable threads than the process has cores (looked at every 10 ms), and not at all
  where it cannot tell.
* **Each poll yields the core** (``sched_yield``), and a poll that comes back late
  (``CONTENDED_GAP``: another thread ran on the core meanwhile) ends the polling at
  once; one that came back a time slice later (``BUSY_GAP``) stops it for a calm
  period too, 10 ms doubling to 1 s while it keeps happening.
* **At most ``spin_seconds`` per sleep** (500 us; ``DATAFLOW_SPIN_US`` in the worker's
  environment sets it, 0 turns it off), never past the loop's next timer.
* **Only in a worker process of its own** (one a nanny started: ``dask worker``,
  ``LocalCluster(processes=True)``): a threaded cluster's workers share the client's
  loop, and a polling loop there would take the GIL from the program's own thread.
* **Only asyncio's selector loops.** The loop's selector is wrapped (``loop._selector``,
  the attribute every selector event loop since Python 3.4 reads); a loop without one
  (uvloop) is left as it is. The client does not poll: its thread waits for replies
  while the worker and ps need both cores (measured: 1.2x slower steps when it did).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

SPIN_US = 500  # the default poll before a sleep, in microseconds
HOT_SECONDS = 0.002  # how long a step message keeps the loop polling
# A poll that came back this much later than it went in: the core ran someone else.
CONTENDED_GAP = 50e-6
BUSY_GAP = 1e-3  # ... and this much later: the core ran a busy thread for a time slice
BACKOFF_SECONDS = (0.01, 1.0)  # the first calm period after that, and the longest
ROOM_CHECK_SECONDS = 0.001  # how often the machine's runnable threads are counted
ENV = "DATAFLOW_SPIN_US"


class _Heat:
    """This process's step activity (one per process: several workers of a threaded
    cluster share it, as they share the cores)."""

    __slots__ = (
        "hot_until",
        "busy",
        "calm_until",
        "backoff",
        "room",
        "room_checked",
        "spins",
        "caught",
        "yielded",
    )

    def __init__(self) -> None:
        self.hot_until = 0.0  # time.monotonic() until which loops poll
        self.busy = 0  # stages running on executors now
        self.calm_until = 0.0  # no polling until then: the cores were wanted by others
        self.backoff = BACKOFF_SECONDS[0]  # the next calm period
        self.room = False  # whether the machine had a core to spare when last looked at
        self.room_checked = -1.0  # time.monotonic() of that look
        self.spins = 0  # sleeps that polled first
        self.caught = 0  # of them, those a message ended before the poll ran out
        self.yielded = 0  # of them, those cut short because another thread wanted the core


HEAT = _Heat()


def note_step() -> None:
    """Keeps this process's loops polling for ``HOT_SECONDS`` from now."""
    HEAT.hot_until = time.monotonic() + HOT_SECONDS


@contextlib.contextmanager
def computing() -> Iterator[None]:
    """No polling while a stage runs on an executor thread (see the module's notes)."""
    HEAT.busy += 1
    try:
        yield
    finally:
        HEAT.busy -= 1


def spin_seconds_from_env() -> float:
    """``DATAFLOW_SPIN_US`` in seconds (the default where unset; 0 turns polling off)."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return SPIN_US * 1e-6
    try:
        return max(0.0, float(raw)) * 1e-6
    except ValueError:
        return SPIN_US * 1e-6


class SpinningSelector:
    """A selector that, while this process runs steps, polls for up to ``spin_seconds``
    before it sleeps in ``select``; everything else is the wrapped selector's."""

    def __init__(self, selector: Any, spin_seconds: float) -> None:
        self.wrapped = selector
        self.spin_seconds = spin_seconds

    def select(self, timeout: float | None = None) -> list:
        wrapped = self.wrapped
        if timeout is not None and timeout <= 0:
            return wrapped.select(timeout)
        heat = HEAT
        if heat.busy:
            return wrapped.select(timeout)
        clock = time.monotonic()
        if clock >= heat.hot_until or clock < heat.calm_until or not _room(heat, clock):
            return wrapped.select(timeout)
        span = self.spin_seconds if timeout is None else min(self.spin_seconds, timeout)
        start = now = time.perf_counter()
        end = start + span
        heat.spins += 1
        while True:
            ready = wrapped.select(0)
            if ready:
                heat.caught += 1
                heat.backoff = BACKOFF_SECONDS[0]
                return ready
            before, now = now, time.perf_counter()
            if now - before > CONTENDED_GAP:
                # Another thread ran on this core meanwhile: let it have the core. One
                # that kept it for a scheduler's time slice is busy for good, not a step's
                # message or two: poll again only after a calm period, longer each time
                # it happens again (a busy machine stays busy).
                heat.yielded += 1
                if now - before > BUSY_GAP:
                    heat.calm_until = time.monotonic() + heat.backoff
                    heat.backoff = min(heat.backoff * 2, BACKOFF_SECONDS[1])
                break
            if now >= end:
                break
            os.sched_yield()
        if timeout is None:
            return wrapped.select(None)
        return wrapped.select(max(0.0, timeout - (now - start)))

    def __getattr__(self, name: str) -> Any:  # register, modify, get_map, close, ...
        return getattr(self.wrapped, name)


_loadavg: list[int] = []  # /proc/loadavg, opened once (-1: not there)
_cores: list[int] = []


def _room(heat: _Heat, clock: float) -> bool:
    """Whether the machine has a core to spare for polling: no more threads runnable
    than this process may use cores, this one included (``/proc/loadavg``'s running
    count, looked at every ``ROOM_CHECK_SECONDS``; ``False`` where it cannot tell)."""
    if clock - heat.room_checked < ROOM_CHECK_SECONDS:
        return heat.room
    heat.room_checked = clock
    if not _loadavg:
        try:
            _loadavg.append(os.open("/proc/loadavg", os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            _loadavg.append(-1)
        _cores.append(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    heat.room = False
    if _loadavg[0] >= 0:
        try:  # "0.52 0.58 0.59 2/113 4567": 2 runnable of 113
            running = int(os.pread(_loadavg[0], 128, 0).split()[3].split(b"/")[0])
        except (OSError, ValueError, IndexError):
            return False
        heat.room = running <= _cores[0]
    return heat.room


def install(loop: Any, spin_seconds: float | None = None) -> bool:
    """Wraps the selector of ``loop`` (an asyncio selector event loop); whether it now
    polls. Idempotent; nothing happens where polling is off or the loop has no selector."""
    spin = spin_seconds_from_env() if spin_seconds is None else spin_seconds
    selector = getattr(loop, "_selector", None)
    if isinstance(selector, SpinningSelector):
        return True
    if spin <= 0 or selector is None or not hasattr(selector, "select"):
        return False
    loop._selector = SpinningSelector(selector, spin)
    return True


def uninstall(loop: Any) -> None:
    """Gives ``loop`` its own selector back."""
    selector = getattr(loop, "_selector", None)
    if isinstance(selector, SpinningSelector):
        loop._selector = selector.wrapped


def installed(loop: Any) -> bool:
    return isinstance(getattr(loop, "_selector", None), SpinningSelector)
