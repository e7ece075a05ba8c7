"""``BufferPool``: scratch and replacement buffers for update kernels, recycled.

An update kernel needs temporaries (Adam's denominator and step) and, when a variable
cannot be written in place because someone still holds its buffer, a new buffer to
write the new value into (``ResourceStore.update_in_place``). Allocating those each step
is costly for large variables: freed chunks at the top of the heap go back to the OS and
return as page faults (measured on the 784x256 Adam update: ~300 faults and ~0.4 ms of
system time per step). So a kernel keeps the buffers it is done with in a small pool and
takes the next ones from it, but only a buffer nothing else holds any more, which its
reference count shows (numpy's own temporary elision, applied across steps). numpy
only: cupy has its own memory pool. A pool belongs to one kernel, which uses it under
its variable's lock.
"""

from __future__ import annotations

import sys
from typing import Any

from ..host import is_host_namespace


def _refcount_at(pool: list, i: int) -> int:
    return sys.getrefcount(pool[i])


# The count ``_refcount_at`` reports for an object held by nothing but the pool,
# measured once rather than assumed (it differs between Python versions).
_UNSHARED = _refcount_at([object()], 0)
_POOL_SIZE = 8


class BufferPool:
    """Recycled writeable arrays of one kernel (see the module docstring)."""

    __slots__ = ("_xp", "_pool", "_recycle")

    def __init__(self, xp: Any):
        self._xp = xp
        self._pool: list[Any] = []
        self._recycle = is_host_namespace(xp)

    def like(self, template: Any) -> Any:
        """A writeable array shaped and typed like ``template`` (contents undefined)."""
        pool = self._pool
        for i in range(len(pool)):
            if (
                _refcount_at(pool, i) == _UNSHARED
                and pool[i].shape == template.shape
                and pool[i].dtype == template.dtype
            ):
                buffer = pool.pop(i)
                buffer.flags.writeable = True
                return buffer
        return self._xp.empty_like(template)

    def retire(self, *buffers: Any) -> None:
        """Offers buffers the kernel is done with (scratch, or replaced values)."""
        if self._recycle:
            for buffer in buffers:
                if len(self._pool) < _POOL_SIZE and buffer.flags.owndata:
                    self._pool.append(buffer)
