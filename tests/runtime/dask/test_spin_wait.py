"""A worker's loop polls before it sleeps only while steps run, only where a core is
free, and never past its next timer; on a real asyncio loop and real sockets."""

from __future__ import annotations

import asyncio
import os
import selectors
import socket
import time

import pytest

from dataflow.runtime.dask import spin_wait


class RecordingSelector(selectors.DefaultSelector):
    """The platform's selector, recording the timeout of each ``select``."""

    def __init__(self) -> None:
        super().__init__()
        self.timeouts: list[float | None] = []

    def select(self, timeout=None):
        self.timeouts.append(timeout)
        return super().select(timeout)


@pytest.fixture
def heat(monkeypatch):
    """A fresh account of step activity; the machine taken to have a core to spare."""
    fresh = spin_wait._Heat()
    monkeypatch.setattr(spin_wait, "HEAT", fresh)
    monkeypatch.setattr(spin_wait, "HOT_SECONDS", 60.0)  # (a loaded machine: stays hot)
    monkeypatch.setattr(spin_wait, "_room", lambda heat, clock: True)
    return fresh


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


def _spinning(pair, spin_seconds=0.002):
    recorder = RecordingSelector()
    recorder.register(pair[0], selectors.EVENT_READ)
    return recorder, spin_wait.SpinningSelector(recorder, spin_seconds)


def test_a_cold_loop_sleeps_at_once(heat, pair):
    recorder, selector = _spinning(pair)
    assert selector.select(0.001) == []
    assert recorder.timeouts == [0.001] and heat.spins == 0


def test_a_hot_loop_takes_a_waiting_message_in_its_first_poll(heat, pair):
    recorder, selector = _spinning(pair)
    pair[1].send(b"x")
    spin_wait.note_step()
    ready = selector.select(1.0)
    assert [key.fileobj for key, _ in ready] == [pair[0]]
    assert recorder.timeouts == [0] and (heat.spins, heat.caught) == (1, 1)


def test_a_hot_loop_polls_then_sleeps_for_what_is_left_of_its_timeout(heat, pair, monkeypatch):
    monkeypatch.setattr(spin_wait, "CONTENDED_GAP", 10.0)  # (a slow machine: no early end)
    recorder, selector = _spinning(pair, spin_seconds=0.002)
    spin_wait.note_step()
    assert selector.select(0.05) == []
    polls, last = recorder.timeouts[:-1], recorder.timeouts[-1]
    assert polls and all(t == 0 for t in polls)
    assert 0 < last <= 0.05 - 0.002  # the poll's time came off the timeout
    assert (heat.spins, heat.caught) == (1, 0)


def test_polling_never_passes_the_loops_next_timer(heat, pair):
    recorder, selector = _spinning(pair, spin_seconds=1.0)
    spin_wait.note_step()
    start = time.perf_counter()
    assert selector.select(0.003) == []
    assert recorder.timeouts[-1] == 0 or recorder.timeouts[-1] <= 0.003
    assert time.perf_counter() - start < 1.0  # bounded by the timer, not by the poll


def test_a_message_that_comes_while_polling_is_caught(heat, pair, monkeypatch):
    # The writer is a thread of this process: the GIL's hand-overs must not read as
    # another thread taking the core.
    monkeypatch.setattr(spin_wait, "CONTENDED_GAP", 10.0)
    recorder, selector = _spinning(pair, spin_seconds=5.0)
    spin_wait.note_step()
    loop = asyncio.new_event_loop()
    try:
        # another thread writes a moment later; the poll sees it before it sleeps
        handle = loop.run_in_executor(None, lambda: (time.sleep(0.002), pair[1].send(b"x")))
        ready = selector.select(None)
        loop.run_until_complete(handle)
    finally:
        loop.close()
    assert [key.fileobj for key, _ in ready] == [pair[0]]
    assert None not in recorder.timeouts and heat.caught == 1


def test_no_polling_while_a_stage_computes_on_the_executor(heat, pair):
    recorder, selector = _spinning(pair)
    spin_wait.note_step()
    with spin_wait.computing():
        assert selector.select(0.001) == []
    assert recorder.timeouts == [0.001] and heat.spins == 0
    assert heat.busy == 0


def test_the_loop_cools_down(heat, pair, monkeypatch):
    monkeypatch.setattr(spin_wait, "HOT_SECONDS", 0.001)
    recorder, selector = _spinning(pair)
    spin_wait.note_step()
    time.sleep(0.005)
    assert selector.select(0.001) == [] and recorder.timeouts == [0.001]


def test_a_core_taken_by_another_thread_ends_the_poll_and_calms_the_loop(heat, pair, monkeypatch):
    recorder, selector = _spinning(pair, spin_seconds=1.0)
    # a yield that comes back a time slice later: another thread had the core
    monkeypatch.setattr(spin_wait.os, "sched_yield", lambda: time.sleep(0.003))
    spin_wait.note_step()
    start = time.monotonic()
    assert selector.select(0.5) == []
    assert heat.yielded == 1 and len(recorder.timeouts) == 3  # poll, poll, sleep
    assert heat.calm_until >= start + spin_wait.BACKOFF_SECONDS[0]
    assert heat.backoff == 2 * spin_wait.BACKOFF_SECONDS[0]
    heat.calm_until = time.monotonic() + 60  # (a calm period that lasts the test)
    recorder.timeouts.clear()
    spin_wait.note_step()
    assert selector.select(0.001) == [] and recorder.timeouts == [0.001]  # calm: no poll


def test_a_short_wait_for_the_core_ends_the_poll_only(heat, pair, monkeypatch):
    recorder, selector = _spinning(pair, spin_seconds=1.0)
    monkeypatch.setattr(spin_wait.os, "sched_yield", lambda: time.sleep(0.0002))
    monkeypatch.setattr(spin_wait, "BUSY_GAP", 10.0)  # (a loaded machine's sleep runs long)
    spin_wait.note_step()
    assert selector.select(0.5) == []
    assert heat.yielded == 1 and heat.calm_until == 0.0


@pytest.mark.parametrize(
    ("line", "cores", "room"),
    [(b"0.10 0.20 0.30 2/113 4567\n", 2, True), (b"2.00 1.50 1.00 3/113 4567\n", 2, False)],
)
def test_room_counts_the_machines_runnable_threads_against_the_cores(
    monkeypatch, tmp_path, line, cores, room
):
    path = tmp_path / "loadavg"
    path.write_bytes(line)
    fd = os.open(path, os.O_RDONLY)
    try:
        monkeypatch.setattr(spin_wait, "_loadavg", [fd])
        monkeypatch.setattr(spin_wait, "_cores", [cores])
        heat = spin_wait._Heat()
        assert spin_wait._room(heat, time.monotonic()) is room
    finally:
        os.close(fd)


def test_room_is_refused_where_the_machine_cannot_tell(monkeypatch):
    monkeypatch.setattr(spin_wait, "_loadavg", [-1])
    monkeypatch.setattr(spin_wait, "_cores", [2])
    assert spin_wait._room(spin_wait._Heat(), time.monotonic()) is False


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="Linux's /proc/loadavg")
def test_room_reads_this_machine(monkeypatch):
    monkeypatch.setattr(spin_wait, "_loadavg", [])
    monkeypatch.setattr(spin_wait, "_cores", [])
    heat = spin_wait._Heat()
    assert spin_wait._room(heat, time.monotonic()) in (True, False)
    assert spin_wait._loadavg[0] >= 0 and spin_wait._cores[0] >= 1
    os.close(spin_wait._loadavg[0])


@pytest.mark.parametrize(
    ("value", "seconds"), [("", 500e-6), ("0", 0.0), ("300", 300e-6), ("fast", 500e-6)]
)
def test_the_environment_sets_the_poll(monkeypatch, value, seconds):
    monkeypatch.setenv(spin_wait.ENV, value)
    assert spin_wait.spin_seconds_from_env() == pytest.approx(seconds)


def test_install_wraps_a_selector_loop_once_and_uninstall_gives_it_back(monkeypatch):
    monkeypatch.delenv(spin_wait.ENV, raising=False)
    loop = asyncio.SelectorEventLoop()
    try:
        own = loop._selector
        assert spin_wait.install(loop) and spin_wait.installed(loop)
        assert spin_wait.install(loop) and loop._selector.wrapped is own
        spin_wait.uninstall(loop)
        assert loop._selector is own and not spin_wait.installed(loop)
        monkeypatch.setenv(spin_wait.ENV, "0")
        assert not spin_wait.install(loop) and loop._selector is own
    finally:
        loop.close()


def test_a_loop_that_polls_runs_sockets_and_timers_as_before(heat):
    """An echo over a socket pair and a timer on a real loop whose selector polls."""
    loop = asyncio.SelectorEventLoop()
    assert spin_wait.install(loop, 0.001)
    a, b = socket.socketpair()

    async def main():
        reader, writer = await asyncio.open_connection(sock=a)
        fired = loop.create_future()
        start = loop.time()
        loop.call_later(0.01, lambda: fired.set_result(loop.time() - start))
        got = []
        for i in range(50):
            spin_wait.note_step()
            await loop.sock_sendall(b, b"%02d" % i)
            got.append(await reader.readexactly(2))
        waited = await fired
        writer.close()
        return got, waited

    try:
        got, waited = loop.run_until_complete(main())
    finally:
        b.close()
        loop.close()
    assert got == [b"%02d" % i for i in range(50)]
    assert waited >= 0.01
    assert heat.spins > 0
