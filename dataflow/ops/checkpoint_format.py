"""The checkpoint format: raw shard files plus a JSON index. No pickle anywhere.

A checkpoint with prefix ``P`` is

* ``P.data-KKKKK-of-NNNNN``: one file per shard (one shard per device holding
  variables), the arrays' bytes back to back, each at a 64-byte aligned offset;
* ``P.index``: JSON ``{"format", "num_shards", "entries": {name: {"shard", "offset",
  "nbytes", "dtype", "shape", "checksum"}}}``, written last.

Every file is written under a temporary name and renamed into place, and the index only
after all shards, so a checkpoint exists whole or not at all: a process killed during a
save leaves the previous checkpoint (and the ``checkpoint`` state file naming it)
intact. Files are not fsynced unless asked (``sync=True``), as TF's checkpoints are
not: the page cache outlives a killed process; surviving a machine crash needs ``sync``.

Reading checks each entry's size and checksum; a truncated or corrupted file is a
``DataLossError`` naming the file and the variable.

**The checksum** (``checksum(data)``) is two sums of the data's 64-bit words, modulo
2**64, plus a CRC-32 of the bytes after the last full 4 KiB row: the words form rows of
512 (4 KiB, a page or disk block); ``s1`` sums every word and ``s2`` weights each
row's sum by its row number (Fletcher's scheme, widened to blocks). Any error confined
to one word (a flipped bit, a torn word) changes ``s1``; blocks exchanged, misplaced or
zeroed change ``s2`` or ``s1``; truncation is caught by the size check. Two words
exchanged inside one 4 KiB block go unnoticed. It is no cryptographic hash; it costs one
pass of numpy reductions (which release the GIL) at memory speed: a save computes it on
a helper thread while numpy writes the data, and a restore a chunk behind the reader,
so checking costs little over ``numpy.save``/``numpy.load`` of the same arrays. (A
column-weighted third sum, catching exchanges inside a block, cost a second pass: a
restore went from 1.25x to 1.55x ``numpy.load``.) Entries of older checkpoints carrying
``adler32`` instead are still checked.
"""

from __future__ import annotations

import json
import os
import uuid
import zlib
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ..framework import errors

FORMAT = "dataflow-checkpoint-v1"
_ALIGN = 64
_ROW = 512                 # 64-bit words per checksum row (4 KiB)
_PARALLEL = 1 << 20        # arrays from this size are checksummed on a helper thread


def shard_path(prefix: str, shard: int, num_shards: int) -> str:
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def index_path(prefix: str) -> str:
    return f"{prefix}.index"


def _temp_name(path: str) -> str:
    return f"{path}.tmp-{uuid.uuid4().hex[:12]}"


_ROW_BYTES = 8 * _ROW
_CHUNK = 4096 * _ROW_BYTES  # reads are checksummed 16 MiB at a time, behind the reader


def _rows_sums(view: memoryview, first_row: int) -> tuple[int, int]:
    """``(s1, s2)`` of whole rows of words starting at row ``first_row``."""
    rows = np.frombuffer(view, dtype="<u8").reshape(-1, _ROW).sum(axis=1, dtype=np.uint64)
    weights = np.arange(first_row + 1, first_row + len(rows) + 1, dtype=np.uint64)
    return int(rows.sum(dtype=np.uint64)), int((rows * weights).sum(dtype=np.uint64))


def _combine(parts: Sequence[tuple[int, int]], tail: memoryview) -> list[int]:
    mask = (1 << 64) - 1
    return [sum(p[0] for p in parts) & mask, sum(p[1] for p in parts) & mask,
            zlib.crc32(tail)]


def checksum(data: Any) -> list[int]:
    """``[s1, s2, crc]`` of a bytes-like object (see the module docstring)."""
    view = memoryview(data).cast("B")
    whole = len(view) // _ROW_BYTES * _ROW_BYTES
    return _combine([_rows_sums(view[:whole], 0)] if whole else [], view[whole:])


def _bytes_of(value: np.ndarray) -> memoryview:
    return value.data.cast("B") if value.size else memoryview(b"")


def _flush(f: Any, sync: bool) -> None:
    f.flush()
    if sync:
        os.fsync(f.fileno())


def atomic_write_bytes(path: str, data: bytes, sync: bool = False) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = _temp_name(path)
    with open(tmp, "wb") as f:
        f.write(data)
        _flush(f, sync)
    os.replace(tmp, path)


def write_shard(prefix: str, shard: int, num_shards: int,
                arrays: dict[str, np.ndarray], sync: bool = False) -> dict[str, dict[str, Any]]:
    """Writes one shard file; returns its index entries. Large arrays are checksummed
    on a helper thread while earlier ones are written."""
    path = shard_path(prefix, shard, num_shards)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = _temp_name(path)
    entries: dict[str, dict[str, Any]] = {}
    sums: dict[str, Future | list[int]] = {}
    offset = 0
    with ThreadPoolExecutor(1, thread_name_prefix="checkpoint-sum") as pool, \
            open(tmp, "wb") as f:
        for name, value in arrays.items():
            # (not ascontiguousarray: it turns 0-d arrays into 1-d ones)
            value = np.asarray(value)
            value = value if value.flags.c_contiguous else value.copy(order="C")
            view = _bytes_of(value)
            sums[name] = pool.submit(checksum, view) if value.nbytes >= _PARALLEL \
                else checksum(view)
            pad = (-offset) % _ALIGN
            if pad:
                f.write(b"\0" * pad)
                offset += pad
            if value.nbytes >= _PARALLEL:
                value.tofile(f)  # numpy's own writer: faster here than f.write(view)
            else:
                f.write(view)
            entries[name] = {"shard": shard, "offset": offset, "nbytes": value.nbytes,
                             "dtype": value.dtype.str, "shape": list(value.shape)}
            offset += value.nbytes
        for name, found in sums.items():
            entries[name]["checksum"] = found.result() if isinstance(found, Future) \
                else found
        _flush(f, sync)
    os.replace(tmp, path)
    return entries


def write_index(prefix: str, num_shards: int, entries: dict[str, dict[str, Any]],
                sync: bool = False) -> None:
    body = json.dumps({"format": FORMAT, "num_shards": num_shards, "entries": entries},
                      indent=1, sort_keys=True)
    atomic_write_bytes(index_path(prefix), body.encode(), sync)


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


def entry_of(prefix: str, index: dict[str, Any], name: str) -> dict[str, Any]:
    """The index entry of ``name`` (``NotFoundError`` when the checkpoint lacks it)."""
    entry = index["entries"].get(name)
    if entry is None:
        raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint "
                                   f"'{prefix}'")
    return entry


def _open(path: str, name: str, files: dict[str, Any]) -> Any:
    f = files.get(path)
    if f is None:
        try:
            f = files[path] = open(path, "rb")  # noqa: SIM115 - closed by the caller
        except FileNotFoundError:
            raise errors.DataLossError(None, None, f"Checkpoint shard {path} is missing "
                                       f"(needed for {name})") from None
    return f


def _read_one(prefix: str, index: dict[str, Any], name: str, files: dict[str, Any],
              pool: ThreadPoolExecutor) -> tuple[np.ndarray, list[int] | int]:
    """One entry read into a new array, its size checked and its checksum verified;
    whole rows are checksummed on ``pool`` while the next chunk is read."""
    entry = entry_of(prefix, index, name)
    path = shard_path(prefix, entry["shard"], index["num_shards"])
    try:
        out = np.empty(tuple(entry["shape"]), dtype=np.dtype(entry["dtype"]))
        if out.nbytes != entry["nbytes"]:
            raise ValueError(f"{entry['nbytes']} bytes do not make a {out.dtype} array "
                             f"of shape {out.shape}")
    except (TypeError, ValueError) as exc:
        raise errors.DataLossError(None, None, f"Checkpoint index {index_path(prefix)} is "
                                   f"corrupted: bad entry for {name} ({exc})") from None
    f = _open(path, name, files)
    f.seek(entry["offset"])
    view = _bytes_of(out)
    new_format = "checksum" in entry
    whole = len(view) // _ROW_BYTES * _ROW_BYTES if new_format else 0
    parts: list[Future] = []
    got = 0
    for start in range(0, len(view), _CHUNK):  # straight into the array
        piece = view[start:start + _CHUNK]
        n = f.readinto(piece)
        got += n
        if n < len(piece):
            break
        if start + len(piece) <= whole:
            parts.append(pool.submit(_rows_sums, piece, start // _ROW_BYTES))
        elif start < whole:
            parts.append(pool.submit(_rows_sums, view[start:whole], start // _ROW_BYTES))
    if got != entry["nbytes"]:
        raise errors.DataLossError(None, None, f"Checkpoint shard {path} is truncated: "
                                   f"{name} needs {entry['nbytes']} bytes at offset "
                                   f"{entry['offset']}, found {got}")
    if new_format:
        found: list[int] | int = _combine([p.result() for p in parts], view[whole:])
        want = entry["checksum"]
    else:
        found, want = zlib.adler32(view), entry.get("adler32")
    if found != want:
        raise errors.DataLossError(None, None, f"Checkpoint shard {path} is corrupted: "
                                   f"checksum mismatch for {name}")
    return out, found


def read_entries(prefix: str, index: dict[str, Any], names: Sequence[str]
                 ) -> list[np.ndarray]:
    """Arrays from a checkpoint, each checked against its size and checksum (computed
    on a helper thread, a chunk behind the reader)."""
    files: dict[str, Any] = {}
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="checkpoint-sum") as pool:
            return [_read_one(prefix, index, name, files, pool)[0] for name in names]
    finally:
        for f in files.values():
            f.close()


def read_entry(prefix: str, index: dict[str, Any], name: str) -> np.ndarray:
    """One array from a checkpoint, checked against its size and checksum."""
    return read_entries(prefix, index, [name])[0]


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
