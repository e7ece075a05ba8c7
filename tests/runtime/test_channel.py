"""The step channel (``runtime/channel.py``) on its own: a real asyncio server on
127.0.0.1 in a background thread, and the blocking client the resident path uses."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import numpy as np
import pytest

from dataflow.framework import errors
from dataflow.runtime.channel import ChannelClient, ChannelServer, Lost, encode


@pytest.fixture
def server():
    """A channel server whose handler answers ``echo``, stays silent on ``hang`` and
    forwards ``relay`` messages to another channel address."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    srv = ChannelServer()

    def handle(message, reply):
        if message["op"] == "echo":
            reply({"id": message["id"], "status": "OK", "values": message["values"]})
        elif message["op"] == "relay":
            asyncio.ensure_future(
                srv.send(message["to"], {"op": "echo", "id": 0, "values": message["values"]})
            )
            reply({"id": message["id"], "status": "OK", "values": {}})

    srv.handler = handle
    asyncio.run_coroutine_threadsafe(srv.start("127.0.0.1"), loop).result(5)
    yield srv
    asyncio.run_coroutine_threadsafe(srv.aclose(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_arrays_travel_out_of_band_and_round_trip(server):
    big = np.arange(1_000_000, dtype=np.float32).reshape(1000, 1000)
    frames = encode({"values": {0: big}})
    # The array is its own frame, not copied into the pickle payload.
    assert len(frames) == 2 and memoryview(frames[1]).nbytes == big.nbytes
    client = ChannelClient()
    try:
        values = {
            0: big,
            1: np.float64(2.5),
            2: "text",
            3: np.zeros((0, 3), np.int8),
            4: big[:, ::2],
        }  # a strided view travels in band
        replies = client.request_all(
            {"a": (server.address, {"op": "echo", "values": values})}, lambda: False, None
        )
        got = replies["a"]["values"]
        for k, v in values.items():
            np.testing.assert_array_equal(got[k], v)
        assert got[0].flags.writeable  # rebuilt on bytearrays, like any unpickled array
    finally:
        client.close()


def test_replies_come_back_per_thread_and_request(server):
    client = ChannelClient()
    results = []

    def worker(i):
        for j in range(20):
            message = {"op": "echo", "values": {0: np.full(3, i * 100 + j)}}
            out = client.request_all(
                {"s": (server.address, message)}, lambda: False, time.monotonic() + 10
            )
            results.append((i * 100 + j, int(out["s"]["values"][0][0])))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client.close()
    assert len(results) == 80 and all(a == b for a, b in results)


def test_deadline_and_lost_worker_end_the_wait(server):
    client = ChannelClient()
    try:
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            client.request_all(
                {"s": (server.address, {"op": "hang"})}, lambda: False, time.monotonic() + 0.5
            )
        assert time.monotonic() - start < 2.0
        with pytest.raises(Lost):
            client.request_all({"s": (server.address, {"op": "hang"})}, lambda: True, None)
        # The connection owing a reply was dropped; the next request works.
        out = client.request_all(
            {"s": (server.address, {"op": "echo", "values": {}})},
            lambda: False,
            time.monotonic() + 5,
        )
        assert out["s"]["status"] == "OK"
    finally:
        client.close()


def test_unreachable_worker_fails_fast_and_abandons_the_others(server):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"
    client = ChannelClient(connect_timeout=2.0)
    try:
        out = client.request_all(
            {
                "live": (server.address, {"op": "hang"}),
                "dead": (dead, {"op": "echo", "values": {}}),
            },
            lambda: False,
            None,
        )
        assert isinstance(out["dead"], OSError)
        assert out["live"]["status"] == "aborted"
    finally:
        client.close()


def test_errors_and_worker_to_worker_sends(server):
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    got = []
    other = ChannelServer(lambda message, reply: got.append(message))
    asyncio.run_coroutine_threadsafe(other.start("127.0.0.1"), loop).result(5)
    client = ChannelClient()
    try:
        error = errors.InvalidArgumentError(None, "op", "bad shape")
        client.request_all(
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
        client.close()
        asyncio.run_coroutine_threadsafe(other.aclose(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
