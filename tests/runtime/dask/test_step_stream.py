"""Step streams (``runtime/dask/stream.py``) on their own: a real ``distributed`` client
and a real Dask ``Server`` whose ``dataflow_steps`` handler keeps the connection, as a
worker's does; the blocking client side the resident path uses."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
import tracemalloc

import numpy as np
import pytest
from distributed.core import Server, Status
from hypothesis import given, settings
from hypothesis import strategies as st

from dataflow.framework import errors
from dataflow.runtime.dask.frames import (
    BUFFER,
    COUNTS,
    SIZE,
    FrameParser,
    FrameTooLarge,
    max_message_bytes,
    recv_message,
)
from dataflow.runtime.dask.stream import (
    STREAM_OP,
    WRITE_SLICE,
    FrameProtocol,
    PeerStreams,
    encode,
    serve,
)
from dataflow.runtime.dask.stream_client import Lost, StepStreamClient
from tests.distributed.conftest import collect_leaked_sockets


def start_server(client, handle, address="tcp://127.0.0.1:0"):
    """A Dask ``Server`` on the client's loop, listening at ``address``, whose step
    handler is ``handle``."""

    async def steps(comm):
        await serve(comm, handle)
        return Status.dont_reply

    async def start():
        server = Server({STREAM_OP: steps})
        await server.listen(address)
        return server

    return client.sync(start)


@pytest.fixture
def server(client):
    """Answers ``echo``, stays silent on ``hang`` and forwards ``relay`` messages to
    another server through a worker's ``PeerStreams``."""
    peers = PeerStreams({})

    def handle(message, reply):
        if message["op"] == "echo":
            reply({"id": message["id"], "status": "OK", "values": message["values"]})
        elif message["op"] == "relay":
            msg = {"op": "echo", "id": 0, "values": message["values"]}
            client.loop.add_callback(peers.send, message["to"], msg)
            reply({"id": message["id"], "status": "OK", "values": {}})

    srv = start_server(client, handle)
    yield srv
    client.sync(peers.aclose)
    client.sync(srv.close)


def test_arrays_travel_out_of_band_and_round_trip(client, server):
    big = np.arange(1_000_000, dtype=np.float32).reshape(1000, 1000)
    frames = encode({"values": {0: big}})
    # The array is its own frame, not copied into the pickle payload.
    assert len(frames) == 2 and memoryview(frames[1]).nbytes == big.nbytes
    streams = StepStreamClient(client)
    try:
        values = {
            0: big,
            1: np.float64(2.5),
            2: "text",
            3: np.zeros((0, 3), np.int8),
            4: big[:, ::2],
        }  # a strided view travels in band
        replies = streams.request_all(
            {"a": (server.address, {"op": "echo", "values": values})}, lambda: False, None
        )
        got = replies["a"]["values"]
        for k, v in values.items():
            np.testing.assert_array_equal(got[k], v)
        # In memory of its own. (The worker lent the 4 MB part, a read-only view of the
        # client's arena, and echoed it: pickle keeps a buffer's read-only flag, so the
        # echo is read-only. ``Session.run`` copies a read-only fetch.)
        assert not np.shares_memory(got[0], big) and not got[0].flags.writeable
        # The connection is a Dask one to the server's own address, now a plain socket.
        (conn,) = streams._connections().values()
        assert isinstance(conn, socket.socket)
        assert conn.getpeername()[1] == int(server.address.rsplit(":", 1)[1])
    finally:
        streams.close()


def test_replies_come_back_per_thread_and_request(client, server):
    streams = StepStreamClient(client)
    results = []

    def work(i):
        for j in range(20):
            message = {"op": "echo", "values": {0: np.full(3, i * 100 + j)}}
            out = streams.request_all(
                {"s": (server.address, message)}, lambda: False, time.monotonic() + 10
            )
            results.append((i * 100 + j, int(out["s"]["values"][0][0])))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    streams.close()
    assert len(results) == 80 and all(a == b for a, b in results)


def test_deadline_and_lost_worker_end_the_wait(client, server):
    streams = StepStreamClient(client)
    try:
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            streams.request_all(
                {"s": (server.address, {"op": "hang"})}, lambda: False, time.monotonic() + 0.5
            )
        assert time.monotonic() - start < 2.0
        with pytest.raises(Lost):
            streams.request_all({"s": (server.address, {"op": "hang"})}, lambda: True, None)
        # The connection owing a reply was dropped; the next request works.
        out = streams.request_all(
            {"s": (server.address, {"op": "echo", "values": {}})},
            lambda: False,
            time.monotonic() + 5,
        )
        assert out["s"]["status"] == "OK"
    finally:
        streams.close()


def test_unreachable_worker_fails_fast_and_abandons_the_others(client, server):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    streams = StepStreamClient(client, connect_timeout=2.0)
    try:
        start = time.monotonic()
        # A connect Dask gives up on at its timeout leaves its socket to the garbage
        # collector (a ResourceWarning): collected here, on purpose.
        with collect_leaked_sockets():
            out = streams.request_all(
                {
                    "live": (server.address, {"op": "hang"}),
                    "dead": (dead, {"op": "echo", "values": {}}),
                },
                lambda: False,
                None,
            )
        assert time.monotonic() - start < 10.0
        assert isinstance(out["dead"], OSError)
        assert out["live"]["status"] == "aborted"
    finally:
        streams.close()


def test_errors_and_worker_to_worker_sends(client, server):
    got = []
    other = start_server(client, lambda message, reply: got.append(message))
    streams = StepStreamClient(client)
    try:
        error = errors.InvalidArgumentError(None, "op", "bad shape")
        streams.request_all(
            {"s": (server.address, {"op": "relay", "to": other.address, "values": {7: error}})},
            lambda: False,
            time.monotonic() + 5,
        )
        deadline = time.monotonic() + 5
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
        relayed = got[0]["values"][7]
        assert isinstance(relayed, errors.InvalidArgumentError)
        assert relayed.message == "bad shape"
    finally:
        streams.close()
        client.sync(other.close)


def test_a_transport_without_a_tornado_stream_carries_the_same_messages(client):
    """``inproc://`` comms are not sockets: the frames ride inside Dask messages, on
    the client's event loop, with the same outcomes."""

    def handle(message, reply):
        if message["op"] == "echo":
            reply({"id": message["id"], "status": "OK", "values": message["values"]})

    server = start_server(client, handle, "inproc://")
    streams = StepStreamClient(client)
    try:
        value = np.arange(6.0).reshape(2, 3)
        out = streams.request_all(
            {"s": (server.address, {"op": "echo", "values": {0: value}})},
            lambda: False,
            time.monotonic() + 5,
        )
        np.testing.assert_array_equal(out["s"]["values"][0], value)
        (conn,) = streams._connections().values()
        assert not isinstance(conn, socket.socket)
        with pytest.raises(TimeoutError):
            streams.request_all(
                {"s": (server.address, {"op": "hang"})}, lambda: False, time.monotonic() + 0.3
            )
        # The connection that owed a reply was dropped; a new one works.
        out = streams.request_all(
            {"s": (server.address, {"op": "echo", "values": {1: "again"}})},
            lambda: False,
            time.monotonic() + 5,
        )
        assert out["s"]["values"] == {1: "again"}
    finally:
        streams.close()
        client.sync(server.close)


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=12))
def test_the_frame_parser_rebuilds_messages_however_the_bytes_are_split(cuts):
    """Workers parse frames as the socket hands bytes over: any split of a run of
    messages (inside a length prefix, a header, a payload or an array) gives them back
    whole and in order, arrays writeable and equal."""
    messages = [
        {"op": "send", "values": {0: np.arange(300, dtype=np.float64).reshape(30, 10)}},
        {"op": "abort", "reason": "x" * 50},
        {"op": "send", "values": {1: np.zeros(0, np.float32), 2: np.ones(7, np.int64)}},
    ]
    data = b"".join(bytes(f) for m in messages for f in encode(m))
    got = []
    parser = FrameParser()
    parser.deliver_to(got.append)
    bounds = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    for start, stop in zip(bounds, bounds[1:], strict=False):
        parser.feed(data[start:stop])
    assert [m["op"] for m in got] == ["send", "abort", "send"]
    np.testing.assert_array_equal(got[0]["values"][0], messages[0]["values"][0])
    assert got[0]["values"][0].flags.writeable
    assert got[1]["reason"] == "x" * 50
    assert got[2]["values"][1].shape == (0,)
    np.testing.assert_array_equal(got[2]["values"][2], np.ones(7, np.int64))


def _lying_header(payload: int, sizes: list[int]) -> bytes:
    header = COUNTS.pack(payload, len(sizes)) + b"".join(BUFFER.pack(n) for n in sizes)
    return SIZE.pack(len(header)) + header


@pytest.mark.parametrize(
    "frame",
    [
        _lying_header(2**62, []),  # a payload of 4 EiB
        _lying_header(10, [2**40] * 3),  # three buffers of a TiB each
        SIZE.pack(2**31),  # a 2 GiB header (a million and more buffer lengths)
        SIZE.pack(COUNTS.size) + COUNTS.pack(0, 2**31),  # 2**31 buffers in a 12-byte header
    ],
    ids=["payload", "buffers", "header", "count"],
)
def test_a_frame_announcing_more_than_the_cap_is_refused_before_allocating(frame):
    """A header is checked before anything is allocated for the message it announces: a
    lying one raises ``FrameTooLarge`` (a ``MemoryError`` would mean it allocated)."""
    parser = FrameParser()
    parser.deliver_to(lambda message: pytest.fail("no message may come of a lying header"))
    with pytest.raises(FrameTooLarge, match="step stream"):
        parser.feed(frame)
    assert max_message_bytes() < 2**40  # half the machine's memory, as Dask's cap


def test_a_worker_closes_a_stream_that_sends_a_lying_frame_and_serves_others(
    client, server, caplog
):
    streams = StepStreamClient(client)
    try:
        streams.request_all(
            {"a": (server.address, {"op": "echo", "id": 1, "values": {}})}, lambda: False, None
        )
        (conn,) = streams._connections().values()
        with caplog.at_level(logging.WARNING, logger="dataflow.runtime.dask.stream"):
            conn.sendall(_lying_header(2**62, []))
            conn.settimeout(10)
            assert conn.recv(1) == b""  # the worker closed the connection
        assert "closing the step stream" in caplog.text and "over the cap" in caplog.text
    finally:
        streams.close()
    others = StepStreamClient(client)  # the server goes on serving other streams
    try:
        out = others.request_all(
            {"b": (server.address, {"op": "echo", "id": 2, "values": {0: np.ones(3)}})},
            lambda: False,
            time.monotonic() + 10,
        )
        np.testing.assert_array_equal(out["b"]["values"][0], np.ones(3))
    finally:
        others.close()


@settings(max_examples=30, deadline=None)
@given(
    reads=st.lists(st.integers(min_value=1, max_value=150_000), min_size=1, max_size=40),
    direct=st.integers(min_value=1, max_value=100_000),
)
def test_the_frame_parser_rebuilds_messages_received_into_their_parts(reads, direct):
    """A reader receiving into the part being filled (``part_buffer``, then ``advance``)
    whenever enough of it is missing, and through a chunk otherwise, in reads of any
    size, gets the same messages: arrays bit-identical, writable, each in its own
    memory."""
    big = np.random.default_rng(0).integers(0, 2**32, 100_000, dtype=np.uint32)
    messages = [
        {"op": "run", "values": {0: big.view(np.float32)}},
        {"op": "abort", "reason": "y" * 30},
        {"op": "run", "values": {1: big[:30_000].reshape(300, 100), 2: np.zeros(0, np.int8)}},
    ]
    data = memoryview(b"".join(bytes(f) for m in messages for f in encode(m)))
    got = []
    parser = FrameParser()
    parser.deliver_to(got.append)
    pos, i = 0, 0
    while pos < len(data):
        size = reads[i % len(reads)]
        i += 1
        view = parser.part_buffer(direct)
        if view is not None:  # as a socket's recv_into would fill it
            n = min(size, view.nbytes, len(data) - pos)
            view[:n] = data[pos : pos + n]
            parser.advance(n)
        else:
            n = min(size, len(data) - pos)
            parser.feed(data[pos : pos + n])
        pos += n
    assert [m["op"] for m in got] == ["run", "abort", "run"]
    first, second = got[0]["values"][0], got[2]["values"][1]
    np.testing.assert_array_equal(first.view(np.uint32), big)
    np.testing.assert_array_equal(second, big[:30_000].reshape(300, 100))
    assert first.flags.writeable and second.flags.writeable
    assert not np.shares_memory(first, second)
    assert got[2]["values"][2].shape == (0,)


def test_a_large_message_is_written_without_a_copy_of_its_arrays():
    """A worker's writer (``FrameProtocol`` on asyncio's transport) hands a large
    message's arrays to the socket slice by slice: while the reader has not read, at
    most one slice's worth of them is copied into the transport's buffer (Python
    3.11's ``writelines`` would join every frame into one ``bytes``, and ``write``
    copies what the socket does not take). The bytes then read are the message."""
    value = np.random.default_rng(1).standard_normal((50_000, 100)).astype(np.float32)
    ours, theirs = socket.socketpair()
    got = []

    async def write() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        ours.setblocking(False)
        transport, protocol = await loop.create_connection(FrameProtocol, sock=ours)
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            flushed = protocol.write({"op": "reply", "values": {0: value}})
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        reader = threading.Thread(target=lambda: got.append(recv_message(theirs)))
        reader.start()
        assert flushed is not None  # 20 MB is more than a socket takes at once
        await asyncio.wait_for(flushed, 30)
        reader.join(30)
        transport.close()
        return peak, transport.get_write_buffer_size()

    try:
        peak, left = asyncio.run(write())
    finally:
        theirs.close()
    assert peak <= WRITE_SLICE + 64 * 1024, peak
    assert left == 0
    np.testing.assert_array_equal(got[0]["values"][0], value)
