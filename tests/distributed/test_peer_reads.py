"""A worker's large reply parts read by the client straight out of the worker's memory
(``runtime/dask/shared_memory/shm_parts.py``, "Large replies read in place"; ``peer_memory.py``)."""

from __future__ import annotations

import gc
import os
import socket
import time

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.dask import frames
from dataflow.runtime.dask.shared_memory import peer_memory, shm_parts

pytestmark = pytest.mark.skipif(not shm_parts.enabled(), reason="no memfd_create here")

LARGE = shm_parts.PEER_READ_PART // 4 + 1000  # float32 values: just over the threshold


def _values(seed: int, n: int = LARGE) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def _pair(tamper=None):
    """A client link and a worker's (``serving``'s) set up by a step stream's messages;
    ``tamper(answer)`` may change the worker's answer on its way."""
    client = shm_parts.Link()
    worker, on_message = shm_parts.serving(lambda message, reply: None)
    answers: list = []
    on_message(client.hello(), answers.append)
    answer = answers.pop()
    if tamper is not None:
        tamper(answer)
    on_message(client.answered(answer), answers.append)
    assert not answers  # (the confirmation has no answer)
    return client, worker, on_message


def _reader_allowed() -> bool:
    try:
        peer_memory.vm_read(os.getpid(), np.zeros(1, np.uint8).ctypes.data, bytearray(1))
    except OSError:
        return False
    return True


needs_reads = pytest.mark.skipif(not _reader_allowed(), reason="process_vm_readv refused here")


@needs_reads
def test_a_large_reply_part_is_read_in_place_then_released():
    client, worker, on_message = _pair()
    assert client.peer_pid == os.getpid() and worker.peer_reads
    a, b = socket.socketpair()
    try:
        big, small = _values(1), _values(2, 1000)
        frames.send_frames(b, frames.writes({"big": big, "small": small}, worker))
        assert worker.holding == 1 and worker.sent == 0  # held, not copied to its arena
        got = frames.recv_message(a, client)
        np.testing.assert_array_equal(got["big"].view(np.uint32), big.view(np.uint32))
        np.testing.assert_array_equal(got["small"], small)
        assert got["big"].flags.writeable and not np.shares_memory(got["big"], big)
        # The client said it read the part: the worker lets go of it.
        release = frames.recv_message(b, worker)
        assert release == {"op": shm_parts.SHM_OP, "released": [1]}
        on_message(release, None)
        assert worker.holding == 0
        got["big"][:] = 0  # owned: the worker's array is untouched
        assert np.array_equal(big, _values(1))
    finally:
        a.close()
        b.close()
        client.close()
        worker.close()


def _wrong_token(answer: dict) -> None:
    answer["reads"]["token"] = bytes(shm_parts.TOKEN_BYTES)


@needs_reads
@pytest.mark.parametrize("why", ["wrong token", "switched off"])
def test_without_peer_reads_large_replies_take_the_arena(why, monkeypatch):
    if why == "switched off":
        monkeypatch.setenv("DATAFLOW_PEER_READS", "0")
    client, worker, _ = _pair(_wrong_token if why == "wrong token" else None)
    assert client.peer_pid is None and not worker.peer_reads
    a, b = socket.socketpair()
    try:
        big = _values(3)
        frames.send_frames(b, frames.writes({"big": big}, worker))
        assert worker.holding == 0 and worker.sent == 1  # through the worker's arena
        got = frames.recv_message(a, client)["big"]
        np.testing.assert_array_equal(got.view(np.uint32), big.view(np.uint32))
    finally:
        a.close()
        b.close()
        client.close()
        worker.close()


def test_vm_read_refuses_what_it_cannot_read():
    with pytest.raises(OSError):
        peer_memory.vm_read(os.getpid(), 16, bytearray(8))  # (an unmapped address)
    with pytest.raises(OSError):
        peer_memory.vm_read(2**22 + 12345, 4096, bytearray(8))  # (no such process)


def _holdings(dask_worker=None) -> list[tuple[bool, int]]:
    """(whether its client reads in place, what it still holds for it) of each step
    stream's link on this worker."""
    return [(o.peer_reads, o.holding) for o in gc.get_objects() if isinstance(o, shm_parts.Link)]


def _probe(dask_worker=None) -> tuple[int, int]:
    """(pid, address of 16 known bytes) in a worker, kept alive on it."""
    dask_worker.dataflow_test_probe = np.frombuffer(b"dataflow  probe!", np.uint8).copy()
    return os.getpid(), int(dask_worker.dataflow_test_probe.ctypes.data)


def _may_read_worker(client) -> bool:
    """Whether this process may read a worker's memory (ptrace rights: a hardened
    kernel, ``ptrace_scope=2`` or a seccomp profile, may refuse it)."""
    ((pid, address),) = client.run(_probe).values()
    probe = bytearray(16)
    try:
        peer_memory.vm_read(pid, address, probe)
    except OSError:
        return False
    return bytes(probe) == b"dataflow  probe!"


@needs_reads
@pytest.mark.parametrize("transport", ["tcp", "tls"])
def test_fetches_read_in_place_on_a_cluster_are_exact_and_owned(transport):
    """Fetches read from the worker's memory where the kernel lets this process read it
    (else through the arena: the values must be the same either way)."""
    from distributed import Client
    from distributed.security import Security

    security = Security.temporary() if transport == "tls" else None
    with tf.LocalCluster(ps=0, worker=1, dashboard_address=None, security=security) as cluster:
        graph = tf.Graph()
        with graph.as_default(), tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [None])
            doubled = x * 2.0
        want = [_values(seed) for seed in (4, 5)]
        with Client(cluster.target, security=security, set_as_default=False) as client:
            in_place = _may_read_worker(client)
        with tf.Session(cluster, graph=graph) as sess:
            got = [sess.run(doubled, {x: value}) for value in want]
            links = [link for link in sess._backend._streams._links.values() if link]
            assert links and all((link.peer_pid is not None) == in_place for link in links)
            for value, result in zip(want, got, strict=True):
                np.testing.assert_array_equal(result, value * np.float32(2))
                assert result.flags.writeable
            assert not np.shares_memory(got[0], got[1])
            got[0][:] = 0  # owned: the next fetch is untouched
            np.testing.assert_array_equal(sess.run(doubled, {x: want[1]}), got[1])
            with Client(cluster.target, security=security, set_as_default=False) as client:
                deadline = time.monotonic() + 10
                while True:  # (the release comes just after each reply)
                    (links,) = client.run(_holdings).values()
                    held = sum(holding for _, holding in links)
                    if not held or time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
                assert any(reads for reads, _ in links) == in_place and held == 0


def test_a_reply_naming_unreadable_memory_fails_the_step_not_the_process():
    """A frame whose in-place part cannot be read (here: the client may not read, as
    when a malformed or foreign stream says so) is refused like any unreadable frame."""
    client = shm_parts.Link()
    a, b = socket.socketpair()
    try:
        header = frames.COUNTS.pack(0, 1 | frames.EXTENDED)
        header += frames.BUFFER.pack(1)  # the payload: one byte in the frame
        header += frames.SHARED_HEAD.pack(
            64 | frames.SHARED | frames.IN_PLACE, 1, np.zeros(8).ctypes.data
        )
        header += frames.BUFFER.pack(0)  # (the acknowledgement)
        b.sendall(frames.SIZE.pack(len(header)) + header + b"N")
        with pytest.raises(frames.FrameTooLarge, match="unreadable shared memory"):
            frames.recv_message(a, client)
    finally:
        a.close()
        b.close()
        client.close()
