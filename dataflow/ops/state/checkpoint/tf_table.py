"""TF's table file (a LevelDB-style SSTable) and the protobuf wire format of its values.

A checkpoint's ``.index`` (``state/checkpoint/tf_bundle.py``) is one such table: sorted keys,
each mapped to a serialized protobuf. The layout (TF's ``core/lib/io/format.h``):

* **data blocks**, then an empty **metaindex block**, then an **index block**, each
  followed by a 5-byte trailer: a compression byte (0: none; TF's bundles never
  compress) and the masked CRC-32C of the block's bytes and that byte;
* a **block** is its entries, then the ``uint32`` offsets of its restart points, then
  their count. An entry is ``varint shared | varint unshared | varint value_length |
  key[shared:] | value``: it shares ``shared`` leading bytes with the previous key,
  except at a restart point (every 16th entry here, as TF), where ``shared`` is 0;
* the index block maps, per data block, a key at or after the block's last key and
  before the next block's first key (the last key itself here) to the block's handle
  ``varint offset | varint size``;
* a 48-byte **footer**: the metaindex and index handles, zero-padded to 40 bytes, then
  the magic number ``0xdb4775248b80fb57`` (little-endian).

**Reading never trusts the bytes.** Every varint has a length limit, every handle and
length is checked against the bytes at hand before slicing, every block's checksum is
checked before it is parsed, keys must strictly increase, and the compression byte
must be 0. Any failure is a ``DataLossError`` naming the file; nothing is allocated
beyond the file's own size, and parsing is a loop over bytes (no recursion, no code).

``slice_key`` encodes the key TF gives each part of a partitioned variable: the
variable's name and the part's extents in TF's order-preserving code (``OrderedCode``).

The protobuf helpers encode and decode the few message fields the bundle needs
(varints, fixed32, length-delimited) with the same distrust: ``decode_message`` returns
``{field_number: [values]}`` and refuses wire types 3/4 (groups) and truncated fields.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from ....framework import errors
from ...io.tf_record import masked_crc32c

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
_TRAILER = 5
_RESTART_INTERVAL = 16
_BLOCK_SIZE = 256 * 1024  # TF's default table block size
_U32 = struct.Struct("<I")


class TableError(ValueError):
    """Malformed bytes; callers turn it into a ``DataLossError`` naming their file."""


# --- varints and the protobuf wire format ---------------------------------------------------
def put_varint(value: int) -> bytes:
    """The protobuf varint of a non-negative integer (negative int64s as two's complement)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def get_varint(data: bytes, pos: int, limit: int = 10) -> tuple[int, int]:
    """``(value, next_pos)`` of the varint at ``pos``; at most ``limit`` bytes."""
    result = shift = 0
    for i in range(limit):
        if pos + i >= len(data):
            raise TableError("a varint runs past the end")
        byte = data[pos + i]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result & ((1 << 64) - 1), pos + i + 1
        shift += 7
    raise TableError("a varint is too long")


def field_varint(number: int, value: int) -> bytes:
    return put_varint(number << 3) + put_varint(value)


def field_bytes(number: int, value: bytes) -> bytes:
    return put_varint(number << 3 | 2) + put_varint(len(value)) + value


def field_fixed32(number: int, value: int) -> bytes:
    return put_varint(number << 3 | 5) + _U32.pack(value)


def decode_message(data: bytes) -> dict[int, list[int | bytes]]:
    """``{field_number: [values]}``: varint and fixed values as ints, length-delimited
    ones as bytes (nested messages are decoded by the caller)."""
    fields: dict[int, list[int | bytes]] = {}
    pos = 0
    while pos < len(data):
        key, pos = get_varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if number == 0:
            raise TableError("a protobuf field number is 0")
        if wire == 0:
            value, pos = get_varint(data, pos)
        elif wire == 1 or wire == 5:
            width = 8 if wire == 1 else 4
            if pos + width > len(data):
                raise TableError("a fixed-width protobuf field runs past the end")
            value = int.from_bytes(data[pos : pos + width], "little")
            pos += width
        elif wire == 2:
            length, pos = get_varint(data, pos)
            if length > len(data) - pos:
                raise TableError("a protobuf field's length runs past the end")
            value = bytes(data[pos : pos + length])
            pos += length
        else:
            raise TableError(f"protobuf wire type {wire} is not one a checkpoint holds")
        fields.setdefault(number, []).append(value)
    return fields


def as_int64(value: int) -> int:
    """A varint read as a signed ``int64``."""
    return value - (1 << 64) if value >= 1 << 63 else value


# --- the keys of partitioned variables' slices (TF's order-preserving code) ----------------
def _num_increasing(value: int) -> bytes:
    body = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return bytes([len(body)]) + body


def _signed_increasing(value: int) -> bytes:
    x = ~value if value < 0 else value
    if x < 64:
        return bytes([(0x80 ^ value) & 0xFF])
    length = x.bit_length() // 7 + 1  # bytes holding the value, its sign and the header
    raw = bytearray(value.to_bytes(length, "big", signed=True))
    header = (0xFF00 >> min(length, 8)) & 0xFF if length <= 8 else 0xFF
    raw[0] ^= header
    if length > 8:
        raw[1] ^= (0xFF00 >> (length - 8)) & 0xFF
    return bytes(raw)


def slice_key(name: str, extents: Sequence[tuple[int, int]]) -> str:
    """The key of one part of a partitioned variable (TF's ``EncodeTensorNameSlice``):
    ``extents`` holds ``(start, length)`` per dimension, ``length`` -1 for all of it."""
    escape = {0: b"\x00\xff", 0xFF: b"\xff\x00"}
    escaped = b"".join(escape.get(b, bytes([b])) for b in name.encode())
    key = _num_increasing(0) + escaped + b"\x00\x01" + _num_increasing(len(extents))
    for start, length in extents:
        key += _signed_increasing(start) + _signed_increasing(length)
    return key.decode("latin-1")  # keys are bytes; latin-1 maps them one to one


def key_bytes(key: str) -> bytes:
    """A table key as bytes: a slice key one to one (latin-1), a name as UTF-8."""
    return key.encode("latin-1") if key[:1] == "\0" else key.encode()


# --- blocks ---------------------------------------------------------------------------------
def _block(entries: list[tuple[bytes, bytes]], interval: int) -> bytes:
    out, restarts, last = bytearray(), [], b""
    for i, (key, value) in enumerate(entries):
        shared = 0
        if i % interval == 0:
            restarts.append(len(out))
        else:
            limit = min(len(key), len(last))
            while shared < limit and key[shared] == last[shared]:
                shared += 1
        out += put_varint(shared) + put_varint(len(key) - shared) + put_varint(len(value))
        out += key[shared:] + value
        last = key
    restarts = restarts or [0]
    out += b"".join(_U32.pack(r) for r in restarts) + _U32.pack(len(restarts))
    return bytes(out)


def _with_trailer(block: bytes) -> bytes:
    return block + b"\0" + _U32.pack(masked_crc32c(block + b"\0"))


def build_table(items: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The table of ``items`` (keys strictly increasing, as bytes compare)."""
    out = bytearray()
    index: list[tuple[bytes, bytes]] = []
    pending: list[tuple[bytes, bytes]] = []
    size = 0
    previous: bytes | None = None

    def flush() -> None:
        nonlocal size
        block = _block(pending, _RESTART_INTERVAL)
        index.append((pending[-1][0], put_varint(len(out)) + put_varint(len(block))))
        out.extend(_with_trailer(block))
        pending.clear()
        size = 0

    for key, value in items:
        if previous is not None and key <= previous:
            raise ValueError(f"table keys must increase: {key!r} after {previous!r}")
        previous = key
        pending.append((key, value))
        size += len(key) + len(value) + 8
        if size >= _BLOCK_SIZE:
            flush()
    if pending:
        flush()
    meta = (len(out), len(_block([], 1)))
    out += _with_trailer(_block([], 1))
    index_block = _block(index, 1)
    index_handle = (len(out), len(index_block))
    out += _with_trailer(index_block)
    handles = b"".join(put_varint(v) for v in (*meta, *index_handle))
    out += handles.ljust(FOOTER_SIZE - 8, b"\0") + struct.pack("<Q", MAGIC)
    return bytes(out)


def _read_block(data: bytes, handle: bytes, pos: int = 0, start: int = 0) -> tuple[bytes, int]:
    """The checked contents of the block whose handle starts at ``handle[pos]``; the
    block must begin at or after ``start``."""
    offset, pos = get_varint(handle, pos)
    size, pos = get_varint(handle, pos)
    end = len(data) - FOOTER_SIZE
    if offset < start or offset > end or size > end - offset or _TRAILER > end - offset - size:
        raise TableError(f"a block ({size} bytes at {offset}) lies outside the table")
    block = data[offset : offset + size]
    kind = data[offset + size]
    (crc,) = _U32.unpack_from(data, offset + size + 1)
    if masked_crc32c(data[offset : offset + size + 1]) != crc:
        raise TableError(f"checksum mismatch in the block at {offset}")
    if kind != 0:
        raise TableError(f"the block at {offset} is compressed (type {kind}): bundles never are")
    return block, pos


def _block_entries(block: bytes, budget: list[int]) -> list[tuple[bytes, bytes]]:
    """A block's entries; ``budget[0]``, the key bytes left to build, shrinks by each
    key: keys sharing prefixes could otherwise make a small block's keys quadratic."""
    if len(block) < 4:
        raise TableError("a block is shorter than its restart count")
    (count,) = _U32.unpack_from(block, len(block) - 4)
    if count > (len(block) - 4) // 4:
        raise TableError("a block's restart count exceeds its size")
    limit = len(block) - 4 - 4 * count
    entries: list[tuple[bytes, bytes]] = []
    pos, last = 0, b""
    while pos < limit:
        shared, pos = get_varint(block, pos, 5)
        unshared, pos = get_varint(block, pos, 5)
        length, pos = get_varint(block, pos, 5)
        if shared > len(last) or unshared > limit - pos or length > limit - pos - unshared:
            raise TableError("a block entry's lengths run past the block")
        budget[0] -= shared + unshared
        if budget[0] < 0:
            raise TableError("the keys share more than a table's restart points allow")
        key = last[:shared] + block[pos : pos + unshared]
        pos += unshared
        entries.append((key, block[pos : pos + length]))
        pos += length
        last = key
    return entries


def read_table(data: bytes) -> list[tuple[bytes, bytes]]:
    """Every ``(key, value)`` of a table, in order; ``TableError`` if the bytes are not
    a well-formed table (see the module docstring)."""
    if len(data) < FOOTER_SIZE:
        raise TableError(f"{len(data)} bytes are too short for a table")
    if struct.unpack_from("<Q", data, len(data) - 8)[0] != MAGIC:
        raise TableError("not an sstable (bad magic number)")
    footer = data[len(data) - FOOTER_SIZE : len(data) - 8]
    _, pos = get_varint(footer, 0)  # the metaindex handle: nothing a bundle reads there
    _, pos = get_varint(footer, pos)
    index, _ = _read_block(data, footer, pos)
    # Each restart point (every 16th entry) stores its key whole, so a table's keys add
    # up to at most 16 times its size; a crafted one asking for more is refused.
    budget = [16 * len(data) + (1 << 20)]
    out: list[tuple[bytes, bytes]] = []
    start = 0  # data blocks follow one another: none is read twice
    for _, handle in _block_entries(index, budget):
        block, _ = _read_block(data, handle, 0, start)
        start = get_varint(handle, 0)[0] + len(block) + _TRAILER
        for key, value in _block_entries(block, budget):
            if out and key <= out[-1][0]:
                raise TableError("the table's keys are out of order")
            out.append((key, value))
    return out


def table_error(path: str, exc: TableError) -> errors.OpError:
    return errors.DataLossError(None, None, f"Checkpoint index {path} is corrupted: {exc}")
