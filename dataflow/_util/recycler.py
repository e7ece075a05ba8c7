"""``Recycler``: output and scratch arrays of kernels (the conv, pool and activation
kernels; large elementwise outputs, ``runtime/execute/large_outputs.py``), reused from
one step to the next.

Why: a kernel that allocates its multi-megabyte output and temporaries every step gets
them back from the allocator as fresh pages more often than not (glibc returns large
freed chunks to the OS, by ``munmap`` or by trimming the heap), and each 4 kB page
then costs a page fault and its zeroing on first write. On the ``tf.layers`` MNIST CNN
(batch 128) that was some 8,800 faults and 25-33 ms of system time per 140 ms step,
against 20 faults for TF1, whose allocator keeps its buffers.

How: each kernel instance keeps the arrays it made in a small list and, when it needs
an array of the same shape and dtype again, takes one that nothing else holds any
more, which its reference count shows (as ``buffer_pool.BufferPool`` does for the
update kernels). An output still held downstream (a fetched value, a view of it, a
variable that adopted it, a later kernel of the same step) has a higher count and is
never handed out twice; a fresh array is made instead. The list's lock makes the
check-and-take atomic when two steps of one plan run at once. numpy only: other
namespaces (cupy, the strict test namespace) keep their own allocation.
"""

from __future__ import annotations

import sys
import threading
from typing import Any


def _count_at(items: list, i: int) -> int:
    return sys.getrefcount(items[i])


# What ``_count_at`` reports for an array held by the list alone, measured once rather
# than assumed (it differs between Python versions).
_FREE = _count_at([object()], 0)


class Recycler:
    """Arrays of one kernel, reused once nothing else holds them (module docstring)."""

    __slots__ = ("xp", "_items", "_lock", "_size", "_on")

    def __init__(self, xp: Any, size: int = 8) -> None:
        self.xp = xp
        self._items: list[Any] = []
        self._lock = threading.Lock()
        self._size = size
        # numpy itself (``ops.host.is_host_namespace``; this layer does not import it).
        self._on = getattr(xp, "__name__", "") == "numpy"

    def empty(self, shape: tuple, dtype: Any) -> Any:
        """A writeable C-contiguous array (contents undefined): a free one of this
        shape and dtype when the kernel has one, else a new one it keeps."""
        xp = self.xp
        if not self._on:
            return xp.empty(shape, dtype=dtype)
        shape, dtype = tuple(shape), xp.dtype(dtype)
        with self._lock:
            items = self._items
            for i in range(len(items)):
                if _count_at(items, i) == _FREE:
                    buffer = items[i]
                    if buffer.shape == shape and buffer.dtype == dtype:
                        buffer.flags.writeable = True  # a fetch may have frozen it
                        return buffer
            buffer = xp.empty(shape, dtype=dtype)
            if len(items) >= self._size:
                del items[0]  # the oldest: its owners (if any) keep it alive
            items.append(buffer)
            return buffer

    def zeros(self, shape: tuple, dtype: Any) -> Any:
        """As ``empty``, filled with zeros."""
        buffer = self.empty(shape, dtype)
        buffer[...] = 0
        return buffer
