"""The checkpoint format: raw shard files plus a JSON index. No pickle anywhere.

A checkpoint with prefix ``P`` is

* ``P.data-KKKKK-of-NNNNN``: one file per shard (one shard per device holding
  variables), the arrays' bytes back to back, each at a 64-byte aligned offset;
* ``P.index``: JSON ``{"format", "num_shards", "entries": {name: {"shard", "offset",
  "nbytes", "dtype", "shape", "adler32"}}}``, written last.

Every file is written under a temporary name and renamed into place, and the index only
after all shards, so a checkpoint exists whole or not at all: a crash during a save
leaves the previous checkpoint (and the ``checkpoint`` state file naming it) intact.
Reading checks each entry's size and checksum; a truncated or corrupted file is a
``DataLossError`` naming the file and the variable.
"""

from __future__ import annotations

import json
import os
import uuid
import zlib
from typing import Any

import numpy as np

from ..framework import errors

FORMAT = "dataflow-checkpoint-v1"
_ALIGN = 64


def shard_path(prefix: str, shard: int, num_shards: int) -> str:
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def index_path(prefix: str) -> str:
    return f"{prefix}.index"


def _temp_name(path: str) -> str:
    return f"{path}.tmp-{uuid.uuid4().hex[:12]}"


def atomic_write_bytes(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = _temp_name(path)
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_shard(prefix: str, shard: int, num_shards: int,
                arrays: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """Writes one shard file; returns its index entries."""
    path = shard_path(prefix, shard, num_shards)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = _temp_name(path)
    entries: dict[str, dict[str, Any]] = {}
    offset = 0
    with open(tmp, "wb") as f:
        for name, value in arrays.items():
            # (not ascontiguousarray: it turns 0-d arrays into 1-d ones)
            value = np.asarray(value)
            value = value if value.flags.c_contiguous else value.copy(order="C")
            pad = (-offset) % _ALIGN
            if pad:
                f.write(b"\0" * pad)
                offset += pad
            view = value.data.cast("B") if value.size else b""
            f.write(view)
            entries[name] = {"shard": shard, "offset": offset, "nbytes": value.nbytes,
                             "dtype": value.dtype.str, "shape": list(value.shape),
                             "adler32": zlib.adler32(view)}
            offset += value.nbytes
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return entries


def write_index(prefix: str, num_shards: int, entries: dict[str, dict[str, Any]]) -> None:
    body = json.dumps({"format": FORMAT, "num_shards": num_shards, "entries": entries},
                      indent=1, sort_keys=True)
    atomic_write_bytes(index_path(prefix), body.encode())


def read_index(prefix: str) -> dict[str, Any]:
    path = index_path(prefix)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"Checkpoint '{prefix}' not found: no "
                                   f"{path}") from None
    try:
        index = json.loads(raw)
    except ValueError as exc:
        raise errors.DataLossError(None, None, f"Checkpoint index {path} is corrupted: "
                                   f"{exc}") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT or \
            not isinstance(index.get("entries"), dict):
        raise errors.DataLossError(None, None, f"{path} is not a dataflow checkpoint index")
    return index


def read_entry(prefix: str, index: dict[str, Any], name: str) -> np.ndarray:
    """One array from a checkpoint, checked against its size and checksum."""
    entry = index["entries"].get(name)
    if entry is None:
        raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint "
                                   f"'{prefix}'")
    path = shard_path(prefix, entry["shard"], index["num_shards"])
    out = np.empty(tuple(entry["shape"]), dtype=np.dtype(entry["dtype"]))
    view = out.data.cast("B") if out.size else memoryview(b"")
    try:
        with open(path, "rb") as f:
            f.seek(entry["offset"])
            got = f.readinto(view) if out.size else 0  # straight into the array
    except FileNotFoundError:
        raise errors.DataLossError(None, None, f"Checkpoint shard {path} is missing "
                                   f"(needed for {name})") from None
    if got != entry["nbytes"]:
        raise errors.DataLossError(None, None, f"Checkpoint shard {path} is truncated: "
                                   f"{name} needs {entry['nbytes']} bytes at offset "
                                   f"{entry['offset']}, found {got}")
    if zlib.adler32(view) != entry["adler32"]:
        raise errors.DataLossError(None, None, f"Checkpoint shard {path} is corrupted: "
                                   f"checksum mismatch for {name}")
    return out


def delete_checkpoint(prefix: str) -> None:
    """Removes a checkpoint's files, index first (so it stops existing at once)."""
    try:
        index = read_index(prefix)
        num = index["num_shards"]
    except errors.OpError:
        num = None
    for path in [index_path(prefix)] + ([shard_path(prefix, k, num) for k in range(num)]
                                        if num else []):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
