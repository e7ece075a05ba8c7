"""Step streams' bytes through memory shared between the processes of one host.

A client and a worker (or two workers) on one machine move a step's large arrays
without the socket: parts copied into a writer's arena (``shm_parts.py``), replies read
straight out of the worker's memory (``peer_memory.py``), fetched values computed into
slabs the client maps (``handoff.py``), and the copies that remain spread over idle
cores (``parallel_copy.py``). The step streams (``runtime/dask/stream.py``,
``stream_client.py``, ``frames.py``) use them wherever both ends agree, and keep the
socket otherwise.
"""
