"""dataflow's own checkpoint format: raw shard files plus a JSON index. No pickle
anywhere. ``Saver`` writes TF's format by default (``state/checkpoint/tf_bundle.py``, whose
readers also read this one); ``Saver(file_format="dataflow")`` writes this one.

A checkpoint with prefix ``P`` is

* ``P.data-KKKKK-of-NNNNN``: one file per shard (one shard per device holding
  variables), the entries' bytes back to back, each at a 64-byte aligned offset;
* ``P.index``: JSON ``{"format", "num_shards", "entries": {name: {"shard", "offset",
  "nbytes", "dtype", "shape", "checksum"}}}``, written last.

**Entries.** A numeric entry (``dtype`` one of ``|b1 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8
<f2 <f4 <f8 <c8 <c16``, always little-endian) holds the array's bytes in C order. A
``"dtype": "string"`` entry (``tf.string``, held as an object array of ``bytes``) holds
``n`` little-endian ``uint64`` lengths, one per element in C order, then the ``n``
strings' bytes back to back: ``[b"ab", b""]`` is ``02 00 .. 00  00 00 .. 00  61 62``
(8 + 8 + 2 bytes). Strings are written as ``bytes`` (``str`` as UTF-8) and read back
as ``bytes``.

**Reading never trusts the files.** ``read_index`` checks every entry before anything
is read: the format name, a shard count of at most 99999 (what the file names can
count), a dtype from the list above (never an object, void or unknown dtype: object
arrays are never made from bytes, and nothing is unpickled), integer non-negative
shard/offset/nbytes, a shape of non-negative integers whose size matches ``nbytes``.
``entry_of`` and each read then check that ``offset + nbytes`` lies inside the shard
file before allocating anything (a crafted shape cannot ask for more memory than the
file holds), then the size read and the checksum; strings are decoded only after their
lengths are checked to add up, bools only if every byte is 0 or 1. Any failure,
a missing shard included, is a ``DataLossError`` naming the file (and the entry); a
missing index is a ``NotFoundError``; no other exception escapes for any bytes in the
files (``tests/test_checkpoint_fuzz.py``). ``"dataflow-checkpoint-v1"`` indexes (before
the string encoding) still load, except their ``|O`` entries, which held memory
addresses and are refused.

**Atomicity.** Every file is written under a temporary name and renamed into place, and
the index only after all shards, so a checkpoint exists whole or not at all: a process
killed during a save leaves the previous checkpoint (and the ``checkpoint`` state file
naming it) intact. Files are not fsynced unless asked (``sync=True``), as TF's
checkpoints are not: the page cache outlives a killed process; surviving a machine
crash needs ``sync``.

**Temporary files** are named ``<file>.tmp-<pid>-<host>-<random>`` (``host``: 8 hex
digits of a CRC of the host name). A killed save leaves its temporaries behind;
``checkpoint_temps.remove_stale_temps(directory)`` (run by every shard write, ``Saver.save`` and
``Saver.restore``) deletes those of processes that are gone: on this host, a
temporary whose pid is not alive; from any host, one untouched for ``STALE_AFTER``
seconds (a live save keeps writing to its file, and a foreign pid cannot be checked);
it also deletes untouched leftovers of the older ``<file>.tmp-<random>`` names by age.
Nothing else in the directory is touched. (A pid reused by an unrelated process
keeps its predecessor's temporary only until it ages out.)

**Write errors** are ``OpError``s chosen from the ``errno`` as TF does
(``ENOENT``: ``NotFoundError``, ``EACCES``/``EPERM``/``EROFS``:
``PermissionDeniedError``, ``ENOSPC``: ``ResourceExhaustedError``, ``EISDIR``/``ENOTDIR``:
``FailedPreconditionError``, ...), naming the file; the temporary is removed.

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
restore went from 1.25x to 1.55x ``numpy.load``.) Entries of v1 checkpoints carrying
``adler32`` instead are still checked.
"""

from __future__ import annotations

import errno
import json
import math
import os
import reprlib
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ....framework import errors
from .temps import remove_stale_temps, temp_name

FORMAT = "dataflow-checkpoint-v2"
_READABLE = ("dataflow-checkpoint-v1", FORMAT)
STRING = "string"  # the dtype of a string entry (see the module docstring)
_NUMERIC = frozenset(
    np.dtype(t).newbyteorder("<").str
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    )
)
_MAX_NDIM = 64  # numpy's limit
_MAX_BYTES = 1 << 62  # no shape may describe more (numpy refuses about 2**63)
_MAX_SHARDS = 99999  # what the 5-digit shard names can count
_ALIGN = 64
_ROW = 512  # 64-bit words per checksum row (4 KiB)
_PARALLEL = 1 << 20  # arrays from this size are checksummed on a helper thread


def shard_path(prefix: str, shard: int, num_shards: int) -> str:
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def index_path(prefix: str) -> str:
    return f"{prefix}.index"


# --- errors ---------------------------------------------------------------------------------
_BY_ERRNO: dict[int, type[errors.OpError]] = {
    errno.ENOENT: errors.NotFoundError,
    errno.EACCES: errors.PermissionDeniedError,
    errno.EPERM: errors.PermissionDeniedError,
    errno.EROFS: errors.PermissionDeniedError,
    errno.ENOSPC: errors.ResourceExhaustedError,
    errno.EMFILE: errors.ResourceExhaustedError,
    errno.ENFILE: errors.ResourceExhaustedError,
    errno.EEXIST: errors.AlreadyExistsError,
    errno.EISDIR: errors.FailedPreconditionError,
    errno.ENOTDIR: errors.FailedPreconditionError,
    errno.ENOTEMPTY: errors.FailedPreconditionError,
    errno.EBUSY: errors.FailedPreconditionError,
    errno.ENAMETOOLONG: errors.InvalidArgumentError,
    errno.EINVAL: errors.InvalidArgumentError,
    errno.EFBIG: errors.OutOfRangeError,
}
if hasattr(errno, "EDQUOT"):
    _BY_ERRNO[errno.EDQUOT] = errors.ResourceExhaustedError


def io_error(exc: OSError, path: str, doing: str) -> errors.OpError:
    """The ``OpError`` TF raises for ``exc`` (chosen by ``errno``), naming ``path``."""
    cls = _BY_ERRNO.get(exc.errno or 0, errors.UnknownError)
    return cls(None, None, f"{doing} {path}: {exc.strerror or exc}")


def _corrupt(message: str) -> errors.OpError:
    return errors.DataLossError(None, None, message)


# --- the checksum ---------------------------------------------------------------------------
_ROW_BYTES = 8 * _ROW
_CHUNK = 4096 * _ROW_BYTES  # reads are checksummed 16 MiB at a time, behind the reader


def _rows_sums(view: memoryview, first_row: int) -> tuple[int, int]:
    """``(s1, s2)`` of whole rows of words starting at row ``first_row``."""
    rows = np.frombuffer(view, dtype="<u8").reshape(-1, _ROW).sum(axis=1, dtype=np.uint64)
    weights = np.arange(first_row + 1, first_row + len(rows) + 1, dtype=np.uint64)
    return int(rows.sum(dtype=np.uint64)), int((rows * weights).sum(dtype=np.uint64))


def _combine(parts: Sequence[tuple[int, int]], tail: memoryview) -> list[int]:
    mask = (1 << 64) - 1
    return [sum(p[0] for p in parts) & mask, sum(p[1] for p in parts) & mask, zlib.crc32(tail)]


def checksum(data: Any) -> list[int]:
    """``[s1, s2, crc]`` of a bytes-like object (see the module docstring)."""
    view = memoryview(data).cast("B")
    whole = len(view) // _ROW_BYTES * _ROW_BYTES
    return _combine([_rows_sums(view[:whole], 0)] if whole else [], view[whole:])


def bytes_of(value: np.ndarray) -> memoryview:
    return value.data.cast("B") if value.size else memoryview(b"")


# --- writing --------------------------------------------------------------------------------
def _flush(f: Any, sync: bool) -> None:
    f.flush()
    if sync:
        os.fsync(f.fileno())


def make_parent(path: str) -> str:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise io_error(exc, directory, "Cannot create the checkpoint directory") from None
    return directory


def write_atomically(path: str, write: Callable[[Any], None], sync: bool) -> None:
    """``write(f)`` into a temporary, renamed to ``path``; on any failure the temporary
    is removed and an ``OSError`` becomes the ``OpError`` TF raises."""
    make_parent(path)
    tmp = temp_name(path)
    try:
        with open(tmp, "wb") as f:
            write(f)
            _flush(f, sync)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.remove(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise io_error(exc, path, "Cannot write checkpoint file") from None
        raise


def atomic_write_bytes(path: str, data: bytes, sync: bool = False) -> None:
    write_atomically(path, lambda f: f.write(data), sync)


def as_bytes(name: str, item: Any) -> bytes:
    if isinstance(item, bytes):
        return bytes(item)
    if isinstance(item, str):
        return item.encode()
    if isinstance(item, (bytearray, memoryview)):
        return bytes(item)
    raise errors.InvalidArgumentError(
        None, None, f"Cannot save {name}: a string tensor holds a {type(item).__name__}"
    )


def encode_entry(name: str, value: Any) -> tuple[str, tuple[int, ...], np.ndarray]:
    """``(dtype, shape, data)`` of one entry: ``data`` a C-contiguous array whose bytes
    are the entry's (see the module docstring)."""
    value = np.asarray(value)
    if value.dtype.kind in "OSU":
        items = [as_bytes(name, x) for x in value.reshape(-1).tolist()]
        lengths = np.array([len(b) for b in items], dtype="<u8")
        data = np.empty(lengths.nbytes + int(lengths.sum()), np.uint8)
        data[: lengths.nbytes] = lengths.view(np.uint8)
        data[lengths.nbytes :] = np.frombuffer(b"".join(items), np.uint8)
        return STRING, value.shape, data
    little = value.dtype.newbyteorder("<") if value.dtype.byteorder == ">" else value.dtype
    if little.str not in _NUMERIC:
        raise errors.InvalidArgumentError(
            None, None, f"Cannot save {name}: dtype {value.dtype} has no checkpoint encoding"
        )
    if little != value.dtype:
        value = value.astype(little)
    # (not ascontiguousarray: it turns 0-d arrays into 1-d ones)
    value = value if value.flags.c_contiguous else value.copy(order="C")
    return little.str, value.shape, value


def write_shard(
    prefix: str, shard: int, num_shards: int, arrays: dict[str, np.ndarray], sync: bool = False
) -> dict[str, dict[str, Any]]:
    """Writes one shard file; returns its index entries. Large arrays are checksummed
    on a helper thread while earlier ones are written. Removes the directory's stale
    temporaries first (this runs wherever the shard's variables live)."""
    path = shard_path(prefix, shard, num_shards)
    remove_stale_temps(make_parent(path))
    entries: dict[str, dict[str, Any]] = {}

    def write(f: Any) -> None:
        sums: dict[str, Future | list[int]] = {}
        offset = 0
        with ThreadPoolExecutor(1, thread_name_prefix="checkpoint-sum") as pool:
            for name, value in arrays.items():
                dtype, shape, data = encode_entry(name, value)
                view = bytes_of(data)
                sums[name] = (
                    pool.submit(checksum, view) if data.nbytes >= _PARALLEL else checksum(view)
                )
                pad = (-offset) % _ALIGN
                if pad:
                    f.write(b"\0" * pad)
                    offset += pad
                if data.nbytes >= _PARALLEL:
                    data.tofile(f)  # numpy's own writer: faster here than f.write(view)
                else:
                    f.write(view)
                entries[name] = {
                    "shard": shard,
                    "offset": offset,
                    "nbytes": data.nbytes,
                    "dtype": dtype,
                    "shape": list(shape),
                }
                offset += data.nbytes
            for name, found in sums.items():
                entries[name]["checksum"] = found.result() if isinstance(found, Future) else found

    write_atomically(path, write, sync)
    return entries


def write_index(
    prefix: str, num_shards: int, entries: dict[str, dict[str, Any]], sync: bool = False
) -> None:
    body = json.dumps(
        {"format": FORMAT, "num_shards": num_shards, "entries": entries}, indent=1, sort_keys=True
    )
    atomic_write_bytes(index_path(prefix), body.encode(), sync)


# --- reading --------------------------------------------------------------------------------
def _is_count(x: Any) -> bool:
    return type(x) is int and x >= 0


def _entry_problem(entry: Any, num_shards: int, fmt: str) -> str | None:
    """What is wrong with one index entry, or ``None``."""
    if not isinstance(entry, dict):
        return "not an object"
    for key in ("shard", "offset", "nbytes"):
        if not _is_count(entry.get(key)):
            return f"{key} {reprlib.repr(entry.get(key))} is not a non-negative integer"
    if entry["shard"] >= num_shards:
        return f"shard {entry['shard']} of {num_shards}"
    dtype = entry.get("dtype")
    if not isinstance(dtype, str) or (dtype != STRING and dtype not in _NUMERIC):
        return f"dtype {reprlib.repr(dtype)} is not one a checkpoint holds"
    shape = entry.get("shape")
    if (
        not isinstance(shape, list)
        or len(shape) > _MAX_NDIM
        or not all(_is_count(d) for d in shape)
    ):
        return f"shape {reprlib.repr(shape)} is not a list of non-negative integers"
    itemsize = 8 if dtype == STRING else np.dtype(dtype).itemsize
    if math.prod(max(d, 1) for d in shape) * itemsize > _MAX_BYTES:
        return f"shape {reprlib.repr(shape)} is too large"
    size, nbytes = math.prod(shape), entry["nbytes"]
    if dtype == STRING and 8 * size > nbytes:
        return f"{nbytes} bytes cannot hold the lengths of {size} strings"
    if dtype != STRING and size * itemsize != nbytes:
        return f"{nbytes} bytes do not make a {dtype} array of shape {tuple(shape)}"
    if "checksum" in entry:
        found = entry["checksum"]
        if not (isinstance(found, list) and len(found) == 3 and all(map(_is_count, found))):
            return f"checksum {reprlib.repr(found)} is not three non-negative integers"
    elif fmt == FORMAT or not _is_count(entry.get("adler32")):
        return "no checksum"
    return None


def read_index(prefix: str) -> dict[str, Any]:
    """The parsed index of ``prefix``, every entry checked (see the module docstring).

    Raises:
        errors.NotFoundError: there is no index.
        errors.DataLossError: the index is not a well-formed checkpoint index.
    """
    path = index_path(prefix)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, NotADirectoryError):
        raise errors.NotFoundError(
            None, None, f"Checkpoint '{prefix}' not found: no {path}"
        ) from None
    except OSError as exc:
        raise io_error(exc, path, "Cannot read checkpoint index") from None
    try:
        index = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _corrupt(f"Checkpoint index {path} is corrupted: {exc}") from None
    if (
        not isinstance(index, dict)
        or index.get("format") not in _READABLE
        or not isinstance(index.get("entries"), dict)
        or not _is_count(index.get("num_shards"))
        or index["num_shards"] > _MAX_SHARDS
    ):
        raise _corrupt(f"Checkpoint index {path} is corrupted: not a dataflow checkpoint index")
    for name, entry in index["entries"].items():
        problem = _entry_problem(entry, index["num_shards"], index["format"])
        if problem is not None:
            raise _corrupt(
                f"Checkpoint index {path} is corrupted: bad entry for "
                f"{reprlib.repr(name)} ({problem})"
            )
    return index


def entry_of(prefix: str, index: dict[str, Any], name: str) -> dict[str, Any]:
    """The index entry of ``name`` (of an index ``read_index`` checked), after checking
    that its bytes lie inside its shard file: a restore compares the entry with its
    variable next, and a damaged checkpoint is damaged before it is a mismatch.

    Raises:
        errors.NotFoundError: the checkpoint lacks ``name``.
        errors.DataLossError: its shard file is missing or too short.
    """
    entry = index["entries"].get(name)
    if entry is None:
        raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint '{prefix}'")
    path = shard_path(prefix, entry["shard"], index["num_shards"])
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise _missing(path, name) from None
    except OSError as exc:
        raise io_error(exc, path, f"Cannot read checkpoint shard (for {name})") from None
    _check_extent(path, name, entry, size)
    return entry


def _missing(path: str, name: str) -> errors.OpError:
    return _corrupt(f"Checkpoint shard {path} is missing (needed for {name})")


def _check_extent(path: str, name: str, entry: dict[str, Any], size: int) -> None:
    if entry["offset"] + entry["nbytes"] > size:
        raise _corrupt(
            f"Checkpoint shard {path} is truncated: {name} needs "
            f"{entry['nbytes']} bytes at offset {entry['offset']}, the file "
            f"has {size}"
        )


def entry_dtype(entry: dict[str, Any]) -> np.dtype:
    """The numpy dtype an entry (of a checked index) reads back as."""
    return np.dtype(object) if entry["dtype"] == STRING else np.dtype(entry["dtype"])


def _open(path: str, name: str, files: dict[str, Any]) -> tuple[Any, int]:
    """``(file, size)`` of a shard, opened once per read."""
    found = files.get(path)
    if found is None:
        try:
            f = open(path, "rb")
        except FileNotFoundError:
            raise _missing(path, name) from None
        except OSError as exc:
            raise io_error(exc, path, f"Cannot read checkpoint shard (for {name})") from None
        found = files[path] = (f, os.fstat(f.fileno()).st_size)
    return found


def _decode_strings(path: str, name: str, data: np.ndarray, shape: list[int]) -> np.ndarray:
    """The object array of ``bytes`` held by a string entry's (checked) bytes."""
    count = math.prod(shape)
    head = 8 * count
    ends = np.cumsum(data[:head].view("<u8"), dtype=np.uint64)
    total = len(data) - head
    # A wrapped sum would show as a decrease: non-decreasing and ending at ``total``
    # means every string lies inside the data.
    if (int(ends[-1]) if count else 0) != total or bool(np.any(ends[1:] < ends[:-1])):
        raise _corrupt(
            f"Checkpoint shard {path} is corrupted: the string lengths of "
            f"{name} do not add up to its {total} bytes"
        )
    blob = data[head:].tobytes()
    out = np.empty(count, dtype=object)
    start = 0
    for i, end in enumerate(ends.tolist()):
        out[i] = blob[start:end]
        start = end
    return out.reshape(shape)


def _read_one(
    prefix: str, index: dict[str, Any], name: str, files: dict[str, Any], pool: ThreadPoolExecutor
) -> np.ndarray:
    """One entry read into a new array, its size checked and its checksum verified;
    whole rows are checksummed on ``pool`` while the next chunk is read. Nothing is
    allocated before the entry is known to lie inside its file."""
    entry = entry_of(prefix, index, name)
    path = shard_path(prefix, entry["shard"], index["num_shards"])
    f, size = _open(path, name, files)
    offset, nbytes = entry["offset"], entry["nbytes"]
    _check_extent(path, name, entry, size)  # again: the file may have changed since
    strings = entry["dtype"] == STRING
    out = (
        np.empty(nbytes, np.uint8)
        if strings
        else np.empty(tuple(entry["shape"]), np.dtype(entry["dtype"]))
    )
    view = bytes_of(out)
    new_format = "checksum" in entry
    whole = len(view) // _ROW_BYTES * _ROW_BYTES if new_format else 0
    parts: list[Future] = []
    got = 0
    try:
        f.seek(offset)
        for start in range(0, len(view), _CHUNK):  # straight into the array
            piece = view[start : start + _CHUNK]
            n = f.readinto(piece)
            got += n
            if n < len(piece):
                break
            if start + len(piece) <= whole:
                parts.append(pool.submit(_rows_sums, piece, start // _ROW_BYTES))
            elif start < whole:
                parts.append(pool.submit(_rows_sums, view[start:whole], start // _ROW_BYTES))
    except OSError as exc:
        raise io_error(exc, path, f"Cannot read {name} from checkpoint shard") from None
    if got != nbytes:
        raise _corrupt(
            f"Checkpoint shard {path} is truncated: {name} needs {nbytes} "
            f"bytes at offset {offset}, found {got}"
        )
    if new_format:
        found: list[int] | int = _combine([p.result() for p in parts], view[whole:])
        want = entry["checksum"]
    else:
        found, want = zlib.adler32(view), entry["adler32"]
    if found != want:
        raise _corrupt(f"Checkpoint shard {path} is corrupted: checksum mismatch for {name}")
    if strings:
        return _decode_strings(path, name, out, entry["shape"])
    if out.dtype == np.bool_ and out.size and int(out.view(np.uint8).max()) > 1:
        raise _corrupt(
            f"Checkpoint shard {path} is corrupted: {name} holds bool bytes other than 0 and 1"
        )
    return out


def read_entries(prefix: str, index: dict[str, Any], names: Sequence[str]) -> list[np.ndarray]:
    """Arrays from a checkpoint whose index ``read_index`` checked, each checked
    against its file's size, its own size and its checksum (computed on a helper
    thread, a chunk behind the reader)."""
    files: dict[str, Any] = {}
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="checkpoint-sum") as pool:
            return [_read_one(prefix, index, name, files, pool) for name in names]
    finally:
        for f, _ in files.values():
            f.close()
