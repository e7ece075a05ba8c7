"""Temporary files of checkpoint writes: their names (``<file>.tmp-<pid>-<host>-<random>``)
and the removal of those a killed save left behind (``remove_stale_temps``: on this
host, a temporary whose pid is gone; from any host, one untouched for ``STALE_AFTER``
seconds). ``state/checkpoint/native.py`` describes the files they become.
"""

from __future__ import annotations

import os
import re
import socket
import stat
import time
import uuid
import zlib

STALE_AFTER = 3600.0  # seconds untouched after which any temporary is a leftover
# --- temporary files ----------------------------------------------------------------------
_HOST = f"{zlib.crc32(socket.gethostname().encode()):08x}"
_TEMP = re.compile(r"\.tmp-(\d+)-([0-9a-f]{8})-[0-9a-f]{12}$")
_OLD_TEMP = re.compile(r"(\.index|\.data-\d{5}-of-\d{5}|checkpoint)\.tmp-[0-9a-f]{12}$")


def temp_name(path: str) -> str:
    return f"{path}.tmp-{os.getpid()}-{_HOST}-{uuid.uuid4().hex[:12]}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OverflowError, ValueError):  # no such pid can exist
        return False
    except OSError:  # EPERM: alive, someone else's
        return True
    return True


def remove_stale_temps(directory: str) -> list[str]:
    """Deletes the temporaries of saves that did not finish (see the module docstring);
    returns their paths. Never raises: a file another process removes first, or one it
    may not remove, is left alone."""
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return []
    now = time.time()
    removed = []
    for name in names:
        found = _TEMP.search(name)
        if found is None and _OLD_TEMP.search(name) is None:
            continue
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        dead = (
            found is not None
            and found.group(2) == _HOST
            and int(found.group(1)) != os.getpid()
            and not _pid_alive(int(found.group(1)))
        )
        if dead or now - info.st_mtime > STALE_AFTER:
            try:
                os.remove(path)
            except OSError:
                continue
            removed.append(path)
    return removed
