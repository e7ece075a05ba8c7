"""TF's checkpoint format (the V2 "tensor bundle"), read and written; and the functions
that read either format, telling them apart by the index file's content.

A checkpoint with prefix ``P`` is

* ``P.data-KKKKK-of-NNNNN``: one file per shard (one per device holding variables, as
  ``state/checkpoint/native.py``), the tensors' bytes back to back, unpadded: a numeric
  tensor's bytes in C order, little-endian; a string tensor (TF's encoding) the varint
  length of each element, the masked CRC-32C of those lengths (each taken as a
  little-endian ``uint32``, or ``uint64`` from 4 GiB), then the elements' bytes; the
  entry's CRC-32C then covers those lengths (as checksummed), the 4 checksum bytes and
  the elements' bytes;
* ``P.index``: a table (``state/checkpoint/tf_table.py``) mapping each tensor name to a
  ``BundleEntryProto`` (1 dtype, 2 shape, 3 shard_id, 4 offset, 5 size, 6 crc32c:
  the masked CRC-32C of the tensor's bytes, 7 slices), and the empty key to a
  ``BundleHeaderProto`` (1 num_shards, 2 endianness, 3 version).

A **partitioned variable** is an entry of its full name with its dtype, full shape and
one ``TensorSliceProto`` per part (no bytes of its own); each part's bytes are an entry
keyed ``slice_key(name, extents)`` (TF's ``EncodeTensorNameSlice``: the name and the
slice in TF's order-preserving code). A read of the full name assembles the parts. A
part variable (one with a ``SaveSliceInfo``) restores from its own key when the
checkpoint split the variable alike, else its slice of the whole (``restore_spec``).

The index dicts handed around here have the shape of ``checkpoint_format``'s
(``{"format", "num_shards", "entries": {name: {"shard", "offset", "nbytes", "dtype",
"shape", ...}}}``), with ``"format": FORMAT``; ``read_index``, ``entry_of``,
``entry_dtype``, ``read_entries`` and ``delete_checkpoint`` below take either kind.

**Reading never trusts the files**, as ``state/checkpoint/native.py``: the table is checked
block by block, then each entry (a dtype with a numpy equivalent, shape dims
non-negative, a byte size matching the shape, a shard below the header's count,
slices inside the shape) before anything is read; each read checks the extent against
the shard's size before allocating, then the CRC-32C, then strings' lengths (their own
checksum, then that they add up) and bools' bytes. Failures are ``DataLossError``s
naming the file; a missing index is ``NotFoundError``; an entry of a dtype numpy lacks
(bfloat16, quantized, ...) is listed, and reading it is ``UnimplementedError``. Files
are written atomically (temporary + rename), the index last.
"""

from __future__ import annotations

import math
import os
import reprlib
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ....framework import errors
from . import native as legacy
from .native import index_path, io_error, shard_path
from .temps import remove_stale_temps
from .tf_table import (
    TableError,
    as_int64,
    build_table,
    decode_message,
    field_bytes,
    field_fixed32,
    field_varint,
    get_varint,
    key_bytes,
    put_varint,
    read_table,
    slice_key,
    table_error,
)

FORMAT = "tf-bundle-v2"
STRING = legacy.STRING
_MASK_DELTA = 0xA282EAD8
# TF's DataType enum <-> numpy (types.proto); bfloat16, quantized, resource and
# variant tensors have no numpy equivalent here.
_TF_DTYPES = {
    1: "<f4",
    2: "<f8",
    3: "<i4",
    4: "|u1",
    5: "<i2",
    6: "|i1",
    7: STRING,
    8: "<c8",
    9: "<i8",
    10: "|b1",
    17: "<u2",
    18: "<c16",
    19: "<f2",
    22: "<u4",
    23: "<u8",
}
_TF_ENUM = {v: k for k, v in _TF_DTYPES.items()}
_UNREADABLE = dict(
    zip(
        (11, 12, 13, 14, 15, 16, 20, 21),
        "qint8 quint8 qint32 bfloat16 qint16 quint16 resource variant".split(),
    )
)
_MAX_SHARDS = 99999
_PARALLEL = 1 << 20  # arrays from this size are checksummed on a helper thread
UNREADABLE = "unreadable:"  # the dtype of an entry of a TF dtype numpy lacks: + its name


def _crc(data: Any, value: int = 0) -> int:
    import crc32c  # on first use, as ``tf_record.masked_crc32c``

    return crc32c.crc32c(data, value=value)


def _mask(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def _corrupt(message: str) -> errors.OpError:
    return errors.DataLossError(None, None, message)


# --- partitioned variables ----------------------------------------------------------------
@dataclass(frozen=True)
class SaveSliceInfo:
    """Where one part lies in its partitioned variable (TF1's ``Variable.SaveSliceInfo``):
    the full variable's name and shape, the part's offset and shape in it."""

    full_name: str
    full_shape: tuple[int, ...]
    var_offset: tuple[int, ...]
    var_shape: tuple[int, ...]

    def __post_init__(self) -> None:  # tuples, whatever was given: it is an op attr
        for field in ("full_shape", "var_offset", "var_shape"):
            object.__setattr__(self, field, tuple(int(d) for d in getattr(self, field)))

    @property
    def extents(self) -> list[tuple[int, int]]:
        return list(zip(self.var_offset, self.var_shape))

    @property
    def spec(self) -> str:
        """TF's slice spec string, e.g. ``"10 4 0,5:0,4"``."""
        dims = " ".join(str(d) for d in self.full_shape)
        return f"{dims} " + ":".join(f"{o},{n}" for o, n in self.extents)


def tf_dtype_name(dtype: np.dtype) -> str:
    """The dtype string of an entry holding ``dtype`` (as ``write_shard`` returns it)."""
    dtype = np.dtype(dtype)
    return STRING if dtype.kind in "OSU" else dtype.newbyteorder("<").str


# --- writing --------------------------------------------------------------------------------
def _lengths_bytes(lengths: list[int]) -> bytes:
    """What the length checksum covers: each length as a little-endian ``uint32``, or
    ``uint64`` from 4 GiB (as TF, which first wrote only ``uint32``s)."""
    if all(n <= 0xFFFFFFFF for n in lengths):
        return np.array(lengths, dtype="<u4").tobytes()
    return b"".join(n.to_bytes(4 if n <= 0xFFFFFFFF else 8, "little") for n in lengths)


def _string_bytes(name: str, value: np.ndarray) -> tuple[bytes, int]:
    items = [legacy.as_bytes(name, x) for x in value.reshape(-1).tolist()]
    crc = _crc(_lengths_bytes([len(b) for b in items]))
    checksum = _mask(crc).to_bytes(4, "little")
    data = b"".join(put_varint(len(b)) for b in items) + checksum + b"".join(items)
    crc = _crc(checksum, crc)
    for item in items:
        crc = _crc(item, crc)
    return data, crc


def write_shard(
    prefix: str, shard: int, num_shards: int, arrays: dict[str, np.ndarray], sync: bool = False
) -> dict[str, dict[str, Any]]:
    """Writes one data file of TF's format; returns its entries (for ``write_index``).
    Removes the directory's stale temporaries first, as ``checkpoint_format.write_shard``."""
    path = shard_path(prefix, shard, num_shards)
    remove_stale_temps(legacy.make_parent(path))
    entries: dict[str, dict[str, Any]] = {}

    def write(f: Any) -> None:
        offset = 0
        sums: dict[str, Any] = {}
        # Large arrays are checksummed on a helper thread (crc32c releases the GIL)
        # while numpy writes them, as ``checkpoint_format.write_shard`` does.
        with ThreadPoolExecutor(1, thread_name_prefix="checkpoint-crc") as pool:
            for name, value in arrays.items():
                value = np.asarray(value)
                if value.dtype.kind in "OSU":
                    data, sums[name] = _string_bytes(name, value)
                    dtype, shape = STRING, value.shape
                    f.write(data)
                    size = len(data)
                else:
                    dtype, shape, array = legacy.encode_entry(name, value)
                    view = legacy.bytes_of(array)
                    size = len(view)
                    if size >= _PARALLEL:
                        sums[name] = pool.submit(_crc, view)
                        array.tofile(f)
                    else:
                        sums[name] = _crc(view)
                        f.write(view)
                entries[name] = {
                    "shard": shard,
                    "offset": offset,
                    "nbytes": size,
                    "dtype": dtype,
                    "shape": list(shape),
                }
                offset += size
            for name, found in sums.items():
                crc = found.result() if isinstance(found, Future) else found
                entries[name]["crc32c"] = _mask(crc)

    legacy.write_atomically(path, write, sync)
    return entries


def _shape_proto(shape: Sequence[int]) -> bytes:
    return b"".join(field_bytes(2, field_varint(1, d) if d else b"") for d in shape)


def _entry_proto(entry: dict[str, Any]) -> bytes:
    out = field_varint(1, _TF_ENUM[entry["dtype"]]) + field_bytes(2, _shape_proto(entry["shape"]))
    for extents in entry.get("slices", ()):
        extent = b"".join(
            field_bytes(1, (field_varint(1, s) if s else b"") + field_varint(2, n))
            if n >= 0
            else field_bytes(1, b"")
            for s, n in extents
        )
        out += field_bytes(7, extent)
    if "slices" not in entry:
        for number, key in ((3, "shard"), (4, "offset"), (5, "nbytes")):
            if entry[key]:
                out += field_varint(number, entry[key])
        out += field_fixed32(6, entry["crc32c"])
    return out


def write_index(
    prefix: str, num_shards: int, entries: dict[str, dict[str, Any]], sync: bool = False
) -> None:
    """Writes the ``.index`` table of the entries ``write_shard`` returned (and of any
    partitioned variable's full entry: ``{"dtype", "shape", "slices": [[(start,
    length), ...], ...]}``, its parts keyed by ``slice_key``)."""
    header = field_varint(1, num_shards) + field_bytes(3, field_varint(1, 1))
    items = [(b"", header)] + sorted((key_bytes(k), _entry_proto(e)) for k, e in entries.items())
    legacy.atomic_write_bytes(index_path(prefix), build_table(items), sync)


# --- reading --------------------------------------------------------------------------------
def _message(data: Any, what: str) -> dict[int, list[Any]]:
    if not isinstance(data, bytes):
        raise TableError(f"{what} is not a message")
    return decode_message(data)


def _last_int(fields: dict[int, list[Any]], number: int, what: str) -> int:
    found = fields.get(number, [0])[-1]
    if not isinstance(found, int):
        raise TableError(f"{what} is not an integer")
    return found


def _parse_shape(data: Any) -> list[int]:
    fields = _message(data, "the shape")
    if _last_int(fields, 3, "unknown_rank"):
        raise TableError("the shape has an unknown rank")
    dims = [as_int64(_last_int(_message(d, "a dim"), 1, "a dim size")) for d in fields.get(2, [])]
    if len(dims) > 64 or any(d < 0 for d in dims):
        raise TableError(f"shape {reprlib.repr(dims)} is not a list of non-negative sizes")
    return dims


def _parse_slice(data: Any, shape: list[int]) -> list[tuple[int, int]]:
    extents = []
    for raw in _message(data, "a slice").get(1, []):
        fields = _message(raw, "an extent")
        start = as_int64(_last_int(fields, 1, "an extent start"))
        length = as_int64(_last_int(fields, 2, "an extent length")) if 2 in fields else -1
        extents.append((start, length))
    if len(extents) != len(shape) or any(
        s < 0 or (n >= 0 and s + n > d) or (n < 0 and s != 0) for (s, n), d in zip(extents, shape)
    ):
        raise TableError(f"slice {extents} does not lie inside shape {shape}")
    return extents


def _parse_entry(data: bytes, num_shards: int) -> dict[str, Any]:
    fields = decode_message(data)
    code = _last_int(fields, 1, "the dtype")
    dtype = _TF_DTYPES.get(code)
    shape = _parse_shape(fields.get(2, [b""])[-1])
    if dtype is None and code in _UNREADABLE:  # listed; reading it is the error
        return {"dtype": UNREADABLE + _UNREADABLE[code], "shape": shape}
    if dtype is None:
        raise TableError(f"dtype {code} is not a TF dtype")
    entry: dict[str, Any] = {"dtype": dtype, "shape": shape}
    if 7 in fields:
        entry["slices"] = [_parse_slice(s, shape) for s in fields[7]]
        return entry
    shard = _last_int(fields, 3, "shard_id")
    offset = as_int64(_last_int(fields, 4, "offset"))
    size = as_int64(_last_int(fields, 5, "size"))
    if shard >= num_shards or offset < 0 or size < 0:
        raise TableError(f"shard {shard} of {num_shards}, offset {offset}, size {size}")
    itemsize = 1 if dtype == STRING else np.dtype(dtype).itemsize
    count = math.prod(shape)
    if math.prod(max(d, 1) for d in shape) * itemsize > 1 << 62 or (
        dtype != STRING and count * itemsize != size
    ):
        raise TableError(f"{size} bytes do not make a {dtype} tensor of shape {shape}")
    if dtype == STRING and size < count + 4:
        raise TableError(f"{size} bytes cannot hold {count} strings")
    entry.update(shard=shard, offset=offset, nbytes=size)
    entry["crc32c"] = _last_int(fields, 6, "crc32c")
    return entry


def _read_tf_index(path: str, raw: bytes) -> dict[str, Any]:
    try:
        items = read_table(raw)
        if not items or items[0][0] != b"":
            raise TableError("no header entry")
        header = decode_message(items[0][1])
        num_shards = _last_int(header, 1, "num_shards")
        if _last_int(header, 2, "endianness"):
            raise TableError("the tensors are big-endian, which dataflow does not read")
        if num_shards > _MAX_SHARDS:
            raise TableError(f"{num_shards} shards")
        entries: dict[str, Any] = {}
        for key, value in items[1:]:
            name = key.decode("latin-1") if key[:1] == b"\0" else key.decode(errors="replace")
            try:
                entries[name] = _parse_entry(value, num_shards)
            except TableError as exc:
                raise TableError(f"bad entry for {reprlib.repr(name)} ({exc})") from None
    except TableError as exc:
        raise table_error(path, exc) from None
    return {"format": FORMAT, "num_shards": num_shards, "entries": entries}


def read_index(prefix: str) -> dict[str, Any]:
    """The checked index of ``prefix``, in either format (``checkpoint_format``'s JSON
    index begins with ``{``, TF's table never does).

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
    if raw.lstrip()[:1] == b"{":
        return legacy.read_index(prefix)
    return _read_tf_index(path, raw)


def _parts(prefix: str, index: dict, name: str, entry: dict) -> list[tuple[Any, Any]]:
    """``[(extents, entry)]`` of a partitioned entry's parts (each checked to exist)."""
    out = []
    for extents in entry["slices"]:
        part = index["entries"].get(slice_key(name, extents))
        if part is None or "slices" in part or part["dtype"] != entry["dtype"]:
            # (an unreadable dtype never gets here: ``entry_of`` refused it first)
            raise _corrupt(f"Checkpoint '{prefix}': its index of {name} lacks the slice {extents}")
        want = [d if n < 0 else n for (_, n), d in zip(extents, entry["shape"])]
        if part["shape"] != want:
            raise _corrupt(f"Checkpoint '{prefix}': {name}'s slice {extents} is {part['shape']}")
        out.append((extents, part))
    return out


def _extent_ok(prefix: str, index: dict[str, Any], name: str, entry: dict[str, Any]) -> None:
    path = shard_path(prefix, entry["shard"], index["num_shards"])
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise _corrupt(f"Checkpoint shard {path} is missing (needed for {name})") from None
    except OSError as exc:
        raise io_error(exc, path, f"Cannot read checkpoint shard (for {name})") from None
    if entry["offset"] + entry["nbytes"] > size:
        raise _corrupt(
            f"Checkpoint shard {path} is truncated: {name} needs {entry['nbytes']} bytes "
            f"at offset {entry['offset']}, the file has {size}"
        )


def entry_of(prefix: str, index: dict[str, Any], name: str) -> dict[str, Any]:
    """The entry of ``name`` in a checked index of either format, its bytes (or its
    parts' bytes) checked to lie inside their shards.

    Raises:
        errors.NotFoundError: the checkpoint lacks ``name``.
        errors.DataLossError: a shard file is missing or too short.
    """
    if index["format"] != FORMAT:
        return legacy.entry_of(prefix, index, name)
    entry = index["entries"].get(name)
    if entry is None:
        raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint '{prefix}'")
    if entry["dtype"].startswith(UNREADABLE):
        raise errors.UnimplementedError(
            None,
            None,
            f"Checkpoint '{prefix}' holds {name} as {entry['dtype'][len(UNREADABLE) :]}, "
            "which has no numpy dtype here",
        )
    parts = [(name, entry)] if "slices" not in entry else _parts(prefix, index, name, entry)
    for part_name, part in parts:
        _extent_ok(prefix, index, str(part_name), part)
    return entry


def entry_dtype(entry: dict[str, Any]) -> np.dtype:
    """The numpy dtype an entry (of either format) reads back as."""
    return legacy.entry_dtype(entry)


def _decode_strings(path: str, name: str, data: bytes, count: int) -> tuple[np.ndarray, int]:
    """The strings of a string entry's bytes, and the CRC-32C TF computed over them."""
    lengths, pos = [], 0
    try:
        for _ in range(count):
            length, pos = get_varint(data, pos)
            lengths.append(length)
    except TableError:
        raise _corrupt(
            f"Checkpoint shard {path} is corrupted: bad string lengths in {name}"
        ) from None
    crc = _crc(_lengths_bytes(lengths))
    if pos + 4 > len(data) or _mask(crc) != int.from_bytes(data[pos : pos + 4], "little"):
        raise _corrupt(f"Checkpoint shard {path} is corrupted: string lengths of {name}")
    crc = _crc(data[pos : pos + 4], crc)
    pos += 4
    if sum(lengths) != len(data) - pos:
        raise _corrupt(
            f"Checkpoint shard {path} is corrupted: the string lengths of {name} do not "
            f"add up to its {len(data) - pos} bytes"
        )
    crc = _crc(data[pos:], crc)
    out = np.empty(count, dtype=object)
    for i, length in enumerate(lengths):
        out[i] = data[pos : pos + length]
        pos += length
    return out, crc


def _read_part(prefix: str, index: dict[str, Any], name: str, entry: dict[str, Any]) -> Any:
    """One stored tensor, read straight into its array (strings: into bytes first),
    after its extent is checked against the file; then its checksum is checked."""
    path = shard_path(prefix, entry["shard"], index["num_shards"])
    _extent_ok(prefix, index, name, entry)
    nbytes, strings = entry["nbytes"], entry["dtype"] == STRING
    out = np.empty(nbytes, np.uint8) if strings else np.empty(entry["shape"], entry["dtype"])
    view = legacy.bytes_of(out)
    try:
        with open(path, "rb") as f:
            f.seek(entry["offset"])
            got = f.readinto(view) if nbytes else 0
    except OSError as exc:
        raise io_error(exc, path, f"Cannot read {name} from checkpoint shard") from None
    if got != nbytes:
        raise _corrupt(f"Checkpoint shard {path} is truncated: {name} needs {nbytes} bytes")
    count = math.prod(entry["shape"])
    if strings:  # its checksum covers the lengths as checksummed, not as stored
        out, crc = _decode_strings(path, name, view.tobytes(), count)
    else:
        crc = _crc(view)
    if _mask(crc) != entry["crc32c"]:
        raise _corrupt(f"Checkpoint shard {path} is corrupted: checksum mismatch for {name}")
    if strings:
        return out.reshape(entry["shape"])
    if out.dtype == np.bool_ and count and int(out.view(np.uint8).max()) > 1:
        raise _corrupt(f"Checkpoint shard {path} is corrupted: {name} holds bool bytes not 0/1")
    return out


def _read_tf(prefix: str, index: dict[str, Any], name: str) -> np.ndarray:
    entry = entry_of(prefix, index, name)
    if "slices" not in entry:
        return _read_part(prefix, index, name, entry)
    shape = entry["shape"]
    parts = _parts(prefix, index, name, entry)
    # Nothing is allocated for more elements than the parts (checked against their
    # files by ``entry_of``) hold.
    if sum(math.prod(part["shape"]) for _, part in parts) < math.prod(shape):
        raise _corrupt(f"Checkpoint '{prefix}': slices of {name} do not cover its shape {shape}")
    shards = {part["shard"] for _, part in parts}
    room = sum(os.stat(shard_path(prefix, k, index["num_shards"])).st_size for k in shards)
    if sum(part["nbytes"] for _, part in parts) > room:  # parts sharing bytes: crafted
        raise _corrupt(f"Checkpoint '{prefix}': slices of {name} hold more than their shards")
    out = np.zeros(shape, dtype=entry_dtype(entry))
    if entry["dtype"] == STRING:
        out[...] = b""
    covered = np.zeros(shape, dtype=np.int8)
    for extents, part in parts:
        where = tuple(slice(s, None if n < 0 else s + n) for s, n in extents)
        out[where] = _read_part(prefix, index, name, part)
        covered[where] = 1
    if not covered.all():
        raise _corrupt(f"Checkpoint '{prefix}': slices of {name} do not cover its shape {shape}")
    return out


def read_entries(prefix: str, index: dict[str, Any], names: Sequence[str]) -> list[np.ndarray]:
    """Arrays from a checked index of either format, each checked (size, checksum)."""
    if index["format"] != FORMAT:
        return legacy.read_entries(prefix, index, names)
    return [_read_tf(prefix, index, name) for name in names]


def _find_part(index: dict[str, Any], name: str, part: SaveSliceInfo) -> tuple[str, bool]:
    """``(key, whole)``: the entry a restore of the part ``name`` reads, and whether it
    is the full variable (to slice) rather than the part itself."""
    entries = index["entries"]
    key = slice_key(part.full_name, part.extents) if index["format"] == FORMAT else None
    if key is not None and key in entries:
        return key, False
    if part.full_name in entries:
        return part.full_name, True
    return name, False  # parts saved under their own names (dataflow's format)


def restore_spec(
    prefix: str, index: dict[str, Any], name: str, part: SaveSliceInfo | None
) -> tuple[np.dtype, tuple[int, ...]]:
    """The ``(dtype, shape)`` a restore of ``name`` (a part of a partitioned variable
    when ``part`` is given: its slice of the full variable, however the checkpoint
    partitioned it) gets, after ``entry_of``'s checks.

    Raises:
        errors.NotFoundError: the checkpoint lacks ``name`` (or the full variable).
        errors.InvalidArgumentError: the checkpoint's full variable has another shape.
    """
    if part is None:
        entry = entry_of(prefix, index, name)
        return entry_dtype(entry), tuple(entry["shape"])
    key, whole = _find_part(index, name, part)
    entry = entry_of(prefix, index, key)
    if whole and tuple(entry["shape"]) != tuple(part.full_shape):
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Checkpoint '{prefix}' holds {part.full_name} with shape "
            f"{tuple(entry['shape'])}, but the partitioned variable has shape "
            f"{tuple(part.full_shape)}",
        )
    return entry_dtype(entry), tuple(part.var_shape if whole else entry["shape"])


def restore_values(
    prefix: str,
    index: dict[str, Any],
    names: Sequence[str],
    parts: Sequence[SaveSliceInfo | None],
) -> list[np.ndarray]:
    """What ``read_entries`` reads, a part of a partitioned variable taken from the full
    variable when the checkpoint partitioned it otherwise (``restore_spec``)."""
    out = []
    for name, part in zip(names, parts):
        if part is None:
            out.extend(read_entries(prefix, index, [name]))
            continue
        key, whole = _find_part(index, name, part)
        value = read_entries(prefix, index, [key])[0]
        if whole:
            value = value[tuple(slice(o, o + n) for o, n in part.extents)].copy()
        out.append(value)
    return out


def read_entry(prefix: str, index: dict[str, Any], name: str) -> np.ndarray:
    """One array from a checkpoint of either format."""
    return read_entries(prefix, index, [name])[0]


def delete_checkpoint(prefix: str) -> None:
    """Removes a checkpoint's files (either format), index first."""
    try:
        num = read_index(prefix)["num_shards"]
    except errors.OpError:
        num = None
    for path in [index_path(prefix)] + [shard_path(prefix, k, num) for k in range(num or 0)]:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
