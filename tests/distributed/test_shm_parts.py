"""Large feeds and fetches through shared memory when client and workers share a host
(``runtime/dask/shared_memory/shm_parts.py``), on worker processes over loopback: a fed
array arrives bit for bit, a fetched one is writable and owned, the worker lends feeds
(a view of the client's arena, released with the step; one it keeps holds its region),
two threads' steps keep their own bytes, the socket path takes over when shared memory
is off at either end, an arena is not reused before its reader took the last message,
smaller parts take it over TLS only, large parts cross TLS itself when it is off, and a
worker killed with SIGKILL leaves nothing in /dev/shm."""

from __future__ import annotations

import os
import socket
import threading

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.dask import frames
from dataflow.runtime.dask.shared_memory import shm_parts

from .conftest import kill_worker, started_cluster, wait_until_back

pytestmark = pytest.mark.distributed

ROWS, COLS = 5_000, 100  # 2 MB of float32: a part that goes through shared memory


def _bits(seed: int, rows: int = ROWS) -> np.ndarray:
    """float32 values drawn as random 32-bit patterns (NaN payloads, infinities,
    subnormals, negative zeros among them)."""
    raw = np.random.default_rng(seed).integers(0, 2**32, (rows, COLS), dtype=np.uint32)
    return raw.view(np.float32)


def _reverse_graph(task: int = 0):
    graph = tf.Graph()
    with graph.as_default():
        with tf.device(f"/job:worker/task:{task}"):
            x = tf.placeholder(tf.float32, [None, COLS], name="x")
            flipped = tf.reverse(x, axis=[0])  # moves the values, touches no bit
    return graph, x, flipped


def _links(sess) -> list:
    """(sends in shared memory, receives in it, bytes it moved) of each of the session's
    step streams; ``None`` for one that never offered shared memory. (Read while the
    session is open: closing it closes the links.)"""
    return [
        None if link is None else (link.tx is not None, link.rx is not None, link.shared_bytes)
        for link in sess._backend._streams._links.values()
    ]


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_feeds_and_fetches_cross_in_shared_memory_bit_for_bit_and_owned(clean_cluster):
    graph, x, flipped = _reverse_graph()
    first, second = _bits(1), _bits(2)
    with tf.Session(clean_cluster, graph=graph) as sess:
        got_first = sess.run(flipped, {x: first})
        got_second = sess.run(flipped, {x: second})
        _same_bits(got_first, first[::-1])
        _same_bits(got_second, second[::-1])
        for got in (got_first, got_second):
            assert got.flags.writeable
            assert not np.shares_memory(got, first) and not np.shares_memory(got, second)
        assert not np.shares_memory(got_first, got_second)
        got_first[...] = 0  # owned: a later step's fetch and feed are untouched
        again = sess.run(flipped, {x: first})
        _same_bits(again, first[::-1])
        _same_bits(got_second, second[::-1])
        np.testing.assert_array_equal(first, _bits(1))
        links = _links(sess)
    # Both directions went through shared memory: 3 feeds and 3 fetches of 2 MB.
    assert links == [(True, True, links[0][2])] and links[0][2] >= 6 * first.nbytes


def test_two_threads_steps_keep_their_own_feeds(clean_cluster):
    graph, x, flipped = _reverse_graph()
    errors: list[BaseException] = []
    with tf.Session(clean_cluster, graph=graph) as sess:

        def steps(seed: int) -> None:
            try:
                feeds = [_bits(seed), _bits(seed + 100)]
                for i in range(6):
                    feed = feeds[i % 2]
                    _same_bits(sess.run(flipped, {x: feed}), feed[::-1])
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        threads = [threading.Thread(target=steps, args=(seed,)) for seed in (10, 20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        links = [link for link in _links(sess) if link is not None]
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
    # One connection, and one arena each way, per thread.
    assert len(links) == 2 and all(link[:2] == (True, True) for link in links)
    assert all(link[2] >= 12 * ROWS * COLS * 4 for link in links)


def _worker_env(cluster, value):
    def put(value):
        if value is None:
            os.environ.pop("DATAFLOW_SHM", None)
        else:
            os.environ["DATAFLOW_SHM"] = value

    cluster.client.run(put, value)


@pytest.mark.parametrize("off_at", ["client", "workers"])
def test_the_socket_carries_everything_when_shared_memory_is_off(
    clean_cluster, monkeypatch, off_at
):
    graph, x, flipped = _reverse_graph()
    value = _bits(3)
    if off_at == "client":
        monkeypatch.setenv("DATAFLOW_SHM", "0")
    else:
        _worker_env(clean_cluster, "0")
    try:
        with tf.Session(clean_cluster, graph=graph) as sess:
            got = sess.run(flipped, {x: value})
            got_again = sess.run(flipped, {x: value})
            links = _links(sess)
    finally:
        _worker_env(clean_cluster, None)
    _same_bits(got, value[::-1])
    _same_bits(got_again, value[::-1])
    assert not np.shares_memory(got, got_again) and got.flags.writeable
    assert len(links) == 1
    if off_at == "client":
        assert links[0] is None  # nothing offered
    else:
        assert links[0] == (False, False, 0)  # offered, refused


def test_an_arena_is_reused_only_after_its_reader_took_the_last_message():
    """A pair of links on one socket pair, set up by the same messages as a step
    stream's: a writer whose last message the reader has not acknowledged sends the next
    one's parts over the socket; once a message from the reader acknowledges it, the
    arena is used again from its start."""
    client, worker = shm_parts.Link(), shm_parts.Link()
    answer = worker.answer(client.hello())
    worker.answer(client.answered(answer))
    assert client.tx is not None and client.rx is not None and worker.tx is not None
    a, b = socket.socketpair()
    try:
        values = [_bits(seed) for seed in (4, 5, 6)]
        first = frames.writes({"x": values[0]}, client)
        second = frames.writes({"x": values[1]}, client)  # not acknowledged yet
        assert frames.frame_bytes(first) < 1024 <= values[1].nbytes <= frames.frame_bytes(second)
        sender = threading.Thread(
            target=lambda: [frames.send_frames(a, f) for f in (first, second)]
        )
        sender.start()  # (the second's 2 MB fill the socket pair's buffer)
        for value in values[:2]:
            got = frames.recv_message(b, worker)["x"]
            _same_bits(got, value)
            assert got.flags.writeable
        sender.join()
        frames.send_frames(b, frames.writes({"ack": True}, worker))  # carries the ack
        assert frames.recv_message(a, client) == {"ack": True}
        third = frames.writes({"x": values[2]}, client, defer=True)
        assert frames.frame_bytes(third) >= values[2].nbytes  # the copy, still to run
        sender = threading.Thread(target=frames.send_frames, args=(a, third))
        sender.start()
        _same_bits(frames.recv_message(b, worker)["x"], values[2])
        sender.join()
        assert client.shared_bytes == values[0].nbytes + values[2].nbytes
    finally:
        a.close()
        b.close()
        client.close()
        worker.close()


def _link_state(sess) -> tuple:
    (link,) = [link for link in sess._backend._streams._links.values() if link is not None]
    return link.regions, link.sent, link.acked


def test_a_worker_lends_each_feed_and_the_client_reuses_its_arena_every_step(clean_cluster):
    """The worker computes on a read-only view of the client's arena (no copy); the
    view goes with the step, so the steps' feeds take shared memory, in the client's
    two regions in turn. (A view released late, held a while by a reference cycle on a
    busy machine, sends one step's feed over the socket instead: allowed twice here.)"""
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [None, COLS])
            total = tf.reduce_sum(tf.cast(x, tf.float64))
    data = np.random.default_rng(21)
    values = [data.standard_normal((ROWS, COLS)).astype(np.float32) for _ in range(3)]
    with tf.Session(clean_cluster, graph=graph) as sess:
        for i in range(8):
            got = sess.run(total, {x: values[i % 3]})
            np.testing.assert_allclose(got, np.sum(values[i % 3], dtype=np.float64), rtol=1e-9)
        regions, sent, acked = _link_state(sess)
        links = _links(sess)
    assert regions == 2 and 6 <= sent <= 8 and acked >= sent - 1
    assert links[0][2] == sent * values[0].nbytes  # the feeds; the fetches are scalars


def test_a_feed_the_worker_keeps_stays_intact_while_later_feeds_take_the_socket(
    clean_cluster,
):
    """A session tensor on the worker keeps a fed array: its view keeps the client's
    region, so the client sends later feeds over the socket instead of overwriting it;
    the kept value comes back bit for bit, and once it is deleted the arena is used
    again."""
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [None, COLS])
            keep = tf.get_session_handle(tf.identity(x))
            flipped = tf.reverse(x, axis=[0])
    kept, others = _bits(31), [_bits(seed) for seed in (32, 33, 34, 35)]
    with tf.Session(clean_cluster, graph=graph) as sess:
        handle = sess.run(keep, {x: kept})
        with graph.as_default(), tf.device("/job:worker/task:0"):
            holder, kept_value = tf.get_session_tensor(handle.handle, tf.float32)
        for value in others:  # more steps than the arena has regions
            _same_bits(sess.run(flipped, {x: value}), value[::-1])
        _, sent_while_kept, _ = _link_state(sess)
        _same_bits(sess.run(kept_value, {holder: handle.handle}), kept)
        handle.delete()
        for value in others[:3]:
            _same_bits(sess.run(flipped, {x: value}), value[::-1])
        _, sent_after, _ = _link_state(sess)
    # The kept feed and the first step after it used the two regions; then the socket,
    # until the handle was deleted.
    assert sent_while_kept == 2
    assert sent_after > sent_while_kept


def test_a_lent_part_counts_as_consumed_when_its_last_view_goes():
    """Unit level: a lending reader acknowledges a message only once every view of it
    is released; a writer with two regions writes the next message into the other one
    meanwhile, waits for that acknowledgement before the region after, and grows its
    arena only when nothing is outstanding."""
    client, worker = shm_parts.Link(), shm_parts.Link(lends=True)
    answer = worker.answer(client.hello())
    worker.answer(client.answered(answer))
    assert client.regions == 2
    a, b = socket.socketpair()
    try:
        values = [_bits(seed, rows=1_000) for seed in (41, 42)]  # 400 KB each
        client.min_part = 1 << 16

        def send(value):
            frames.send_frames(a, frames.writes({"x": value}, client))
            return frames.recv_message(b, worker)["x"]

        first = send(values[0])
        assert not first.flags.writeable and worker.consumed == 0
        _same_bits(first, values[0])
        second = send(values[1])  # the other region: generation 1 is not acknowledged
        assert client.sent == 2 and worker.consumed == 0
        frames.send_frames(b, frames.writes({"ack": True}, worker))
        frames.recv_message(a, client)
        assert client.acked == 0 and client.writable() is None  # region 0 still lent
        del first
        assert worker.consumed == 1
        frames.send_frames(b, frames.writes({"ack": True}, worker))
        frames.recv_message(a, client)
        assert client.acked == 1 and client.writable() is not None
        # A larger message must grow the arena, which waits for generation 2 too.
        bigger = _bits(43, rows=3_000)
        assert client.place([memoryview(bigger).cast("B")]) is None
        _same_bits(second, values[1])
        del second
        frames.send_frames(b, frames.writes({"ack": True}, worker))
        frames.recv_message(a, client)
        assert client.acked == 2
        _same_bits(send(bigger), bigger)
        assert client.sent == 3
    finally:
        a.close()
        b.close()
        client.close()
        worker.close()


SMALL_ROWS = 1_000  # 400 KB: under SHARED_PART, over SHARED_PART_TLS


def _small_steps(cluster) -> tuple[list, list]:
    """Three 400 KB feeds and fetches on ``cluster``: (what came back, the links)."""
    tf.Session.reset(cluster)
    graph, x, flipped = _reverse_graph()
    values = [_bits(seed, SMALL_ROWS) for seed in (11, 12, 11)]
    with tf.Session(cluster, graph=graph) as sess:
        got = [sess.run(flipped, {x: value}) for value in values]
        links = _links(sess)
    for value, back in zip(values, got, strict=True):
        _same_bits(back, value[::-1])
        assert back.flags.writeable
    assert not np.shares_memory(got[0], got[2])
    return got, links


def test_parts_from_64_kib_take_shared_memory_over_tls_and_to_a_lending_worker(
    tls_cluster, clean_cluster, monkeypatch
):
    """Over TLS a 400 KB feed and its fetch skip encryption through shared memory;
    over plain TCP only the feed does (the worker lends it: one copy against the
    socket's two), and the fetch, which the client copies out, stays on the socket
    under 1 MB (it costs the same there). (Streams kept off Unix sockets, which carry
    no TLS: ``local_sockets``.)"""
    monkeypatch.setenv("DATAFLOW_UNIX_SOCKETS", "0")
    _, tls_links = _small_steps(tls_cluster)
    assert tls_links == [(True, True, tls_links[0][2])]
    assert tls_links[0][2] >= 6 * SMALL_ROWS * COLS * 4  # 3 feeds and 3 fetches
    _, tcp_links = _small_steps(clean_cluster)
    assert tcp_links == [(True, True, 3 * SMALL_ROWS * COLS * 4)]  # the 3 feeds


def test_over_tls_with_shared_memory_off_large_parts_cross_the_tls_transport(
    tls_cluster, monkeypatch
):
    """With shared memory off, 8 MB feeds and fetches cross a TLS connection in many
    records and write slices: the worker's ``TlsTransport`` receives them into their
    arrays and writes its replies as the socket takes them, bit for bit."""
    monkeypatch.setenv("DATAFLOW_SHM", "0")  # (the workers are threads of this process)
    monkeypatch.setenv("DATAFLOW_UNIX_SOCKETS", "0")  # (TLS stays on its connection)
    tf.Session.reset(tls_cluster)
    graph, x, flipped = _reverse_graph()
    value = _bits(5, rows=20_000)
    with tf.Session(tls_cluster, graph=graph) as sess:
        got = [sess.run(flipped, {x: value}) for _ in range(3)]
        links = _links(sess)
    assert links == [None]  # nothing offered: every byte went through TLS
    for back in got:
        _same_bits(back, value[::-1])
        assert back.flags.writeable
    assert not np.shares_memory(got[0], got[1])


def test_a_tls_links_64_kib_part_goes_through_shared_memory():
    """A TLS link places a part of ``SHARED_PART_TLS`` bytes in its arena; with the copy
    deferred (a client's request) the copy stays a frame of its own, run by
    ``send_frames``, and the reader gets the bits."""
    client, worker = shm_parts.Link(), shm_parts.Link()
    client.over_tls()
    worker.answer(client.answered(worker.answer(client.hello())))
    try:
        value = np.arange(shm_parts.SHARED_PART_TLS // 4, dtype=np.float32)
        written = frames.writes({"x": value}, client, defer=True)
        assert callable(written[0]) and not any(callable(f) for f in written[1:])
        a, b = socket.socketpair()
        with a, b:
            frames.send_frames(a, written)
            got = frames.recv_message(b, worker)["x"]
        _same_bits(got, value)
        assert client.shared_bytes == value.nbytes
    finally:
        client.close()
        worker.close()


ARENA = "memfd:dataflow-step-parts"


def _dev_shm() -> set[str]:
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def _arenas_mapped_here() -> int:
    with open("/proc/self/maps") as f:
        return sum(ARENA in line for line in f)


def _arena_fds(pid: int) -> int:
    """How many of ``pid``'s descriptors are arenas (read in that process)."""
    found = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            found += ARENA in os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # (closed meanwhile: the listing's own descriptor, say)
            pass
    return found


@pytest.fixture(scope="module")
def fragile():
    """A one-worker cluster of this module's own, for the test that kills its worker."""
    with started_cluster(ps=0, worker=1) as c:
        yield c


def test_a_worker_killed_mid_use_leaves_nothing_behind(fragile):
    """The arenas are memfds, named nowhere (not in /dev/shm): killing a worker with
    SIGKILL leaves no file, and the client unmaps the dead worker's arena when it drops
    the connection."""
    tf.Session.reset(fragile)
    before, mapped_before = _dev_shm(), _arenas_mapped_here()
    graph, x, flipped = _reverse_graph()
    value = _bits(7)
    with tf.Session(fragile, graph=graph) as sess:
        _same_bits(sess.run(flipped, {x: value}), value[::-1])
        links = _links(sess)
        assert links == [(True, True, links[0][2])] and links[0][2] >= 2 * value.nbytes
        address = fragile.workers["worker-0"]
        pid = fragile.client.run(os.getpid, workers=[address])[address]
        assert fragile.client.run(_arena_fds, pid, workers=[address])[address] >= 1
        old = kill_worker(fragile, "worker-0")
        wait_until_back(fragile, "worker-0", old)
    assert not any("dataflow" in name for name in _dev_shm() - before)
    assert _arenas_mapped_here() <= mapped_before
    tf.Session.reset(fragile)
    with tf.Session(fragile, graph=graph) as sess:  # the new worker sets up its own
        _same_bits(sess.run(flipped, {x: value}), value[::-1])
        links = _links(sess)
    assert links == [(True, True, links[0][2])] and links[0][2] >= 2 * value.nbytes
    assert _arenas_mapped_here() <= mapped_before
