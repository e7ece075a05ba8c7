"""Taking a Dask comm's socket out of tornado, for blocking writes and reads.

Two of dataflow's lines to other processes start as ordinary Dask connections (the
cluster's address, protocol and ``Security``) and then leave tornado: the client's step
streams (``runtime/dask/stream.py``) and a worker's progress line to the scheduler
(``ops/data/from_dask/progress.py``). Both find the tornado stream under the comm themselves and,
once the other end has acknowledged, hand it here for the bare socket.
"""

from __future__ import annotations

import socket
from typing import Any


def detach(comm: Any, stream: Any) -> socket.socket:
    """Takes ``comm``'s socket out of its tornado ``stream``, for blocking use (on the
    loop that owns the comm). Nothing must be buffered on our side: after its
    acknowledgement the other end sends nothing before we write."""
    sock = stream.socket
    stream.io_loop.remove_handler(sock)  # tornado stops watching the descriptor
    stream.socket = socket.socket()  # and closes this stand-in when the comm goes
    comm.abort()
    sock.setblocking(True)
    return sock
