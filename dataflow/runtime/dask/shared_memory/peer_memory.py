"""Reading another process's memory: ``process_vm_readv`` through ``ctypes``.

A worker's large reply parts are read by the client straight out of the worker's
memory (``shm_parts.py``, "Large replies read in place"): one copy, made by the kernel
from the worker's pages into the client's, where the arena path makes two. The kernel
allows it to a process with ptrace rights over the other (the same user and, under
Yama's ``ptrace_scope=1``, a descendant); anything else answers ``EPERM``, and the
caller keeps the arena. The system call may copy less than asked (a page of the range
unmapped meanwhile): ``vm_read`` continues where it stopped and raises once a call
copies nothing.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


_vm_readv: list[Any] = []  # libc's process_vm_readv, once looked up (None: none)


def _reader() -> Any:
    if not _vm_readv:
        function = None
        try:
            function = ctypes.CDLL(None, use_errno=True).process_vm_readv
            function.argtypes = [
                ctypes.c_int,
                ctypes.POINTER(_IoVec),
                ctypes.c_ulong,
                ctypes.POINTER(_IoVec),
                ctypes.c_ulong,
                ctypes.c_ulong,
            ]
            function.restype = ctypes.c_ssize_t
        except (OSError, AttributeError):  # not Linux, or a libc without it
            function = None
        _vm_readv.append(function)
    return _vm_readv[0]


def vm_read(pid: int, address: int, into: Any) -> None:
    """Copies ``len(into)`` bytes at ``address`` of process ``pid`` into ``into``
    (``process_vm_readv``: one copy, by the kernel); ``OSError`` where it may not."""
    read = _reader()
    if read is None:
        raise OSError("process_vm_readv is not available")
    target = np.frombuffer(into, np.uint8)
    done, total = 0, target.nbytes
    while done < total:
        local = _IoVec(target.ctypes.data + done, total - done)
        remote = _IoVec(address + done, total - done)
        got = read(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        if got <= 0:
            number = ctypes.get_errno()
            raise OSError(number, f"reading process {pid}'s memory: {os.strerror(number)}")
        done += got
