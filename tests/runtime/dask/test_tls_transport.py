"""``TlsTransport`` (``runtime/dask/tls_transport.py``) on its own: a worker's end of a
TLS step stream on asyncio, over real TLS sockets on loopback with Dask's temporary
certificates, against the blocking client side of ``frames``."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading

import numpy as np
import pytest
from distributed.security import Security

from dataflow.runtime.dask.frames import recv_message, send_frames, writes
from dataflow.runtime.dask.stream import FrameProtocol
from dataflow.runtime.dask.tls_transport import TlsTransport


def _bits(seed: int, nbytes: int) -> np.ndarray:
    """Random 32-bit patterns as float32 (NaN payloads, infinities, negative zeros)."""
    raw = np.random.default_rng(seed).integers(0, 2**32, nbytes // 4, dtype=np.uint32)
    return raw.view(np.float32)


# Socket buffers this small make every large message wait for its reader, whatever
# sizes the machine's TCP autotuning would pick.
_SOCKET_BUFFER = 128 * 1024


def _tls_pair() -> tuple[ssl.SSLSocket, ssl.SSLSocket]:
    """(server end, client end) of a TLS connection on loopback, handshakes done, with
    small socket buffers."""
    security = Security.temporary()
    server_context = security.get_listen_args("worker")["ssl_context"]
    client_context = security.get_connection_args("client")["ssl_context"]
    with socket.create_server(("127.0.0.1", 0)) as listener:
        box: dict = {}

        def connect() -> None:
            raw = socket.socket()
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _SOCKET_BUFFER)
            raw.connect(listener.getsockname())
            box["client"] = client_context.wrap_socket(raw)

        thread = threading.Thread(target=connect)
        thread.start()
        accepted, _ = listener.accept()
        accepted.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SOCKET_BUFFER)
        server = server_context.wrap_socket(accepted, server_side=True)
        thread.join()
    return server, box["client"]


# Small messages, and arrays whose frames span many 16 KB TLS records and more than a
# socket buffer holds (the echo of one must wait for the reader: the unsent rest).
MESSAGES = [
    {"op": "small", "i": 0},
    {"op": "array", "x": _bits(1, 40_000)},
    {"op": "array", "x": _bits(2, 6 << 20)},
    {"op": "small", "i": 1},
    {"op": "array", "x": _bits(3, 400_000), "y": _bits(4, 8 << 20)},
    {"op": "small", "i": 2},
]


def _same(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for key, value in want.items():
        if isinstance(value, np.ndarray):
            assert got[key].dtype == value.dtype and got[key].shape == value.shape
            np.testing.assert_array_equal(got[key].view(np.uint32), value.view(np.uint32))
        else:
            assert got[key] == value


@pytest.mark.parametrize("read_late", [False, True])
def test_messages_cross_a_tls_transport_both_ways_bit_for_bit(read_late):
    """The worker's end echoes each message it parses. ``read_late``: the client sends
    everything before it reads a reply, so the worker's writes wait for a full socket
    (retried from the same bytes, the protocol paused meanwhile)."""
    server_sock, client_sock = _tls_pair()
    pauses: list[str] = []
    replies: list = []

    def client() -> None:
        with client_sock:
            for message in MESSAGES:
                send_frames(client_sock, writes(message))
                if not read_late:
                    replies.append(recv_message(client_sock))
            while len(replies) < len(MESSAGES):
                replies.append(recv_message(client_sock))

    class Echo(FrameProtocol):
        def pause_writing(self) -> None:
            pauses.append("pause")
            super().pause_writing()

    async def worker() -> BaseException | None:
        protocol = Echo()
        protocol.parser.deliver_to(protocol.write)
        TlsTransport(server_sock, protocol)
        thread = threading.Thread(target=client)
        thread.start()
        try:
            return await asyncio.wait_for(protocol.lost, 60)
        finally:
            await asyncio.get_running_loop().run_in_executor(None, thread.join)

    # The client closing its end is an orderly end of the stream, not an error.
    assert asyncio.run(worker()) is None
    assert len(replies) == len(MESSAGES)
    for got, want in zip(replies, MESSAGES, strict=True):
        _same(got, want)
    if read_late:
        assert pauses, "an unread 8 MB echo should have filled the socket"


def test_a_broken_connection_ends_the_stream_and_drops_what_was_unsent():
    server_sock, client_sock = _tls_pair()

    async def worker() -> tuple[BaseException | None, int]:
        protocol = FrameProtocol()
        transport = TlsTransport(server_sock, protocol)
        protocol.write({"x": _bits(5, 8 << 20)})  # more than the socket takes unread
        assert transport.get_write_buffer_size() > 0
        client_sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
        client_sock.close()  # a reset, with the echo unread
        lost = await asyncio.wait_for(protocol.lost, 30)
        return lost, transport.get_write_buffer_size()

    lost, unsent = asyncio.run(worker())
    assert unsent == 0
    assert lost is None or isinstance(lost, OSError)
