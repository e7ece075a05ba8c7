"""Name helpers shared by the graph (unique op names) and the runtime (Dask keys)."""

from __future__ import annotations

import functools
import re

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


@functools.lru_cache(maxsize=4096)  # asked for every op, mostly about a few names
def is_valid_op_name(name: str) -> bool:
    return bool(_VALID_OP_NAME.match(name))


def is_valid_scope_name(name: str) -> bool:
    return bool(_VALID_SCOPE_NAME.match(name))
