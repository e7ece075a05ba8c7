"""Step streams moved to a worker's Unix socket (``runtime/dask/local_sockets.py``), on
a real Dask ``Server`` whose ``dataflow_steps`` handler serves them as a worker's does:
the client's and a peer's streams move and carry the same messages (shared memory
included), they stay on their connections when either end is off or the worker is on
another host, and the listening socket lets no connection in without its one-time
token, read before anything is parsed."""

from __future__ import annotations

import asyncio
import socket
import time

import numpy as np
import pytest
from distributed.core import Server, Status

from dataflow.runtime.dask import local_sockets
from dataflow.runtime.dask.shared_memory import shm_parts
from dataflow.runtime.dask.stream import STREAM_OP, PeerStreams, serve
from dataflow.runtime.dask.stream_client import StepStreamClient


class Worker:
    """A Dask ``Server`` on the client's loop serving step streams as a worker does,
    with a Unix socket of its own (made on first use) unless ``local`` is false. It
    echoes ``echo`` and forwards ``relay`` to another worker through its peers' streams;
    ``received`` collects what it was relayed."""

    def __init__(self, client, local: bool = True) -> None:
        self.client = client
        self.listener: local_sockets.Listener | None = None
        self.peers = PeerStreams({})
        self.received: list = []
        self.listener_asked = 0

        def listener():
            self.listener_asked += 1
            if local and self.listener is None:
                self.listener = local_sockets.Listener()
            return self.listener

        def handle(message, reply):
            if message["op"] == "echo":
                if message.get("id") == 0:  # relayed: one-way
                    self.received.append(message["values"])
                    return
                reply({"id": message["id"], "status": "OK", "values": message["values"]})
            elif message["op"] == "relay":
                msg = {"op": "echo", "id": 0, "values": message["values"]}
                client.loop.add_callback(self.peers.send, message["to"], msg)
                reply({"id": message["id"], "status": "OK", "values": {}})

        async def steps(comm):
            await serve(comm, handle, listener)
            return Status.dont_reply

        async def start():
            server = Server({STREAM_OP: steps})
            await server.listen("tcp://127.0.0.1:0")
            return server

        self.server = client.sync(start)
        self.address = self.server.address

    def peer_families(self) -> set:
        async def families():
            return {
                end.protocol.transport.get_extra_info("socket").family
                for end in self.peers._peers.values()
            }

        return self.client.sync(families)

    def close(self) -> None:
        self.client.sync(self.peers.aclose)
        if self.listener is not None:
            self.listener.close()
        self.client.sync(self.server.close)


@pytest.fixture
def workers(client):
    made: list[Worker] = []

    def make(local: bool = True) -> Worker:
        made.append(Worker(client, local))
        return made[-1]

    yield make
    for worker in made:
        worker.close()


def _echo(streams, address, values, request_id=1):
    out = streams.request_all(
        {"w": (address, {"op": "echo", "id": request_id, "values": values})},
        lambda: False,
        time.monotonic() + 30,
    )
    return out["w"]["values"]


def test_a_stream_from_this_host_moves_to_the_workers_unix_socket(client, workers):
    worker = workers()
    streams = StepStreamClient(client)
    try:
        small = np.arange(10, dtype=np.float32)
        large = np.random.default_rng(0).standard_normal(shm_parts.SHARED_PART // 4 + 7)
        for i in range(3):  # several steps on the one moved connection
            got = _echo(streams, worker.address, {0: small, 1: large}, request_id=i + 1)
            np.testing.assert_array_equal(got[0], small)
            np.testing.assert_array_equal(got[1], large)
            assert not np.shares_memory(got[1], large)  # (lent and echoed: read-only)
        (conn,) = streams._connections().values()
        assert conn.family == socket.AF_UNIX
        assert conn.getpeername() == worker.listener.address.encode()  # (abstract: bytes)
        link = streams._links[conn]
        # The stream's shared memory moved with it: the large parts went there.
        assert link is not None and link.shared_bytes >= 6 * large.nbytes
        assert not worker.listener.claims  # the token was used up
    finally:
        streams.close()
    # The stream's end on the worker withdraws nothing through a new listener.
    time.sleep(0.2)
    assert worker.listener_asked == 1


def test_a_workers_stream_to_a_peer_on_this_host_moves_too(client, workers):
    first, second = workers(), workers()
    streams = StepStreamClient(client)
    try:
        values = {0: np.arange(5.0)}
        streams.request_all(
            {
                "w": (
                    first.address,
                    {"op": "relay", "id": 1, "to": second.address, "values": values},
                )
            },
            lambda: False,
            time.monotonic() + 30,
        )
        deadline = time.monotonic() + 30
        while not second.received and time.monotonic() < deadline:
            time.sleep(0.01)
        np.testing.assert_array_equal(second.received[0][0], values[0])
        assert first.peer_families() == {socket.AF_UNIX}
    finally:
        streams.close()


def test_streams_stay_on_their_connections_when_either_end_is_off(client, workers, monkeypatch):
    refusing = workers(local=False)  # a worker without a Unix socket answers no
    streams = StepStreamClient(client)
    try:
        np.testing.assert_array_equal(_echo(streams, refusing.address, {0: np.ones(3)})[0], 1)
        (conn,) = streams._connections().values()
        assert conn.family == socket.AF_INET and refusing.listener_asked == 1
    finally:
        streams.close()
    monkeypatch.setenv("DATAFLOW_UNIX_SOCKETS", "0")
    willing = workers()
    streams = StepStreamClient(client)
    try:
        np.testing.assert_array_equal(_echo(streams, willing.address, {0: np.ones(3)})[0], 1)
        (conn,) = streams._connections().values()
        assert conn.family == socket.AF_INET
        assert willing.listener_asked == 0  # nothing was asked of it
    finally:
        streams.close()


def test_a_request_from_another_host_is_refused():
    offered = []
    answer, withdraw = local_sockets.answer(
        lambda: offered.append(1), {"op": local_sockets.LOCAL_OP, "host": "elsewhere/x"}, print
    )
    assert answer == local_sockets.REFUSED and withdraw is None and not offered


def _connect(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(10)
        sock.connect(address)
    except OSError:
        sock.close()
        raise
    return sock


def test_only_the_one_time_token_gets_a_connection_in(client):
    """A connection is closed, unread, unless its first 16 bytes are a token the worker
    offered (and not used yet); frame bytes in place of a token are never parsed."""
    attached: list = []

    async def make():
        return local_sockets.Listener()

    listener = client.sync(make)
    try:
        _, token = listener.offer(attached.append)
        for first in (b"\x00" * local_sockets.TOKEN_BYTES, b"\x00\x00\x00\x10" + b"x" * 40):
            with _connect(listener.address) as stranger:
                stranger.sendall(first)
                assert stranger.recv(1) == b""  # closed
        assert not attached and token in listener.claims  # the offer still stands
        with _connect(listener.address) as claimed:
            claimed.sendall(token)
            deadline = time.monotonic() + 10
            while not attached and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(attached) == 1 and token not in listener.claims
            with _connect(listener.address) as again:  # used up
                again.sendall(token)
                assert again.recv(1) == b""
        assert len(attached) == 1
        client.sync(_close_transport, attached[0])
    finally:
        listener.close()


def test_a_connection_that_sends_no_token_is_closed(client, monkeypatch):
    monkeypatch.setattr(local_sockets, "CLAIM_SECONDS", 0.2)

    async def make():
        return local_sockets.Listener()

    listener = client.sync(make)
    try:
        with _connect(listener.address) as silent:
            started = time.monotonic()
            assert silent.recv(1) == b""  # closed by the worker, not by our timeout
            assert time.monotonic() - started < 5
    finally:
        listener.close()


def test_a_listener_closed_while_starting_stops_listening(client):
    async def open_and_close():
        listener = local_sockets.Listener()
        listener.close()  # before its server started
        await asyncio.sleep(0.05)
        return listener

    listener = client.sync(open_and_close)
    with pytest.raises(ConnectionRefusedError):
        _connect(listener.address)


async def _close_transport(transport):
    transport.close()


def test_same_user_reads_the_peers_credentials():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        assert local_sockets.same_user(a)
    tcp_server = socket.create_server(("127.0.0.1", 0))
    with tcp_server, socket.create_connection(tcp_server.getsockname()) as tcp:
        assert not local_sockets.same_user(tcp)  # no peer credentials on TCP
