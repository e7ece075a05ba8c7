"""TFRecord files: ``tf.python_io.TFRecordWriter``, ``tf_record_iterator`` and the framing
every record reader here shares (``TFRecordDataset``'s pipeline, the ``TFRecordReader``).

A TFRecord file is a sequence of records, each framed as

    uint64 length (little-endian) | uint32 masked_crc32c(length bytes)
    | data | uint32 masked_crc32c(data)

where ``masked_crc32c(b) = rotate_right(crc32c(b), 15) + 0xa282ead8`` (mod 2**32), the
mask TF puts on every stored checksum. CRC-32C comes from the ``crc32c`` package (SSE4.2
or ARMv8 instructions where the CPU has them). A compressed file (``ZLIB`` or ``GZIP``)
is one deflate stream over that whole sequence, so files are byte-compatible with TF's
in both directions. Files are opened with ``fsspec``, so any URL it knows works, as for
``tf.gfile`` here.

Reading keeps one buffer of file bytes and slices records out of it, so a record costs
one slice and two checksums, not four ``read`` calls. A wrong checksum or
a record cut short is ``DataLossError`` naming the file and the record's offset, as TF
says it.
"""

from __future__ import annotations

import enum
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from ...framework import errors

_MASK_DELTA = 0xA282EAD8
_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")
_CHUNK = 1 << 20
# The most one ``read`` asks for: a record's length comes from the file, so a corrupted
# (or crafted) header may announce 2**63 bytes; reading in bounded pieces until the
# stream ends turns that into "truncated record" instead of a huge allocation.
_MAX_READ = 1 << 26
# ``crc32c.crc32c``, imported on first use: the package reads its own metadata when
# imported (0.015 s of ``import dataflow``).
_CRC32C: list[Callable[[Any], int]] = []


def masked_crc32c(data: bytes | memoryview) -> int:
    """TF's masked CRC-32C of ``data`` (the checksum a TFRecord stores)."""
    if not _CRC32C:
        import crc32c

        _CRC32C.append(crc32c.crc32c)
    crc = _CRC32C[0](data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """``data`` framed as one TFRecord (header, data, footer)."""
    length = struct.pack("<Q", len(data))
    return b"".join(
        (length, _FOOTER.pack(masked_crc32c(length)), data, _FOOTER.pack(masked_crc32c(data)))
    )


class TFRecordCompressionType(enum.IntEnum):
    """How a TFRecord file is compressed (TF's ``tf.python_io.TFRecordCompressionType``)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {
    TFRecordCompressionType.NONE: "",
    TFRecordCompressionType.ZLIB: "ZLIB",
    TFRecordCompressionType.GZIP: "GZIP",
}


class TFRecordOptions:
    """Options for a TFRecord file: its compression and the zlib settings.

    Args:
        compression_type: a ``TFRecordCompressionType``, ``"ZLIB"``, ``"GZIP"``, ``""``
            or ``None`` (no compression).
        flush_mode, input_buffer_size, output_buffer_size, window_bits,
        compression_level, compression_method, mem_level, compression_strategy: zlib's
            settings, as in TF (``None`` keeps zlib's default).
    """

    compression_type_map = dict(_NAMES)

    def __init__(
        self,
        compression_type: Any = None,
        flush_mode: int | None = None,
        input_buffer_size: int | None = None,
        output_buffer_size: int | None = None,
        window_bits: int | None = None,
        compression_level: int | None = None,
        compression_method: int | None = None,
        mem_level: int | None = None,
        compression_strategy: int | None = None,
    ):
        if isinstance(compression_type, str):
            compression_type = compression_type.upper()
            if compression_type not in ("", "ZLIB", "GZIP"):
                raise ValueError(f'Unsupported compression type "{compression_type}"')
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options: Any) -> str:
        """``""``, ``"ZLIB"`` or ``"GZIP"`` for ``options`` (options, a type, a string)."""
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if isinstance(options, TFRecordCompressionType):
            return _NAMES[options]
        if isinstance(options, str):
            return TFRecordOptions(options).compression_type
        raise ValueError(f'Unsupported compression type "{options!r}"')


def _settings(options: Any) -> tuple[str, int, int]:
    """(compression name, zlib level, window bits) for ``options``."""
    kind = TFRecordOptions.get_compression_type_string(options)
    level = getattr(options, "compression_level", None)
    bits = getattr(options, "window_bits", None)
    return kind, zlib.Z_DEFAULT_COMPRESSION if level is None else level, bits or zlib.MAX_WBITS


def _open(path: str, mode: str) -> Any:
    import fsspec  # on first use: it costs 0.03 s of ``import dataflow``

    try:
        fs, local = fsspec.core.url_to_fs(path)
        if "w" in mode and "file" in fs.protocol:  # TF's writers make no directories
            parent = os.path.dirname(local)
            if parent and not os.path.isdir(parent):
                raise FileNotFoundError(path)
        return fsspec.open(path, mode).open()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None


class TFRecordWriter:
    """Writes records (``bytes``) to a TFRecord file, as TF's ``TFRecordWriter``.

    Args:
        path: the file (a local path or any URL fsspec knows); created or truncated.
        options: a ``TFRecordOptions``, a ``TFRecordCompressionType`` or a string.

    Example:
        >>> import dataflow as tf, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
        >>> with tf.python_io.TFRecordWriter(path) as writer:
        ...     writer.write(b"hello")
        >>> list(tf.python_io.tf_record_iterator(path))
        [b'hello']
    """

    def __init__(self, path: Any, options: Any = None):
        path = path.decode() if isinstance(path, bytes) else str(path)
        kind, level, bits = _settings(options)
        self._file = _open(path, "wb")
        self._deflate: Any = None
        if kind:  # one deflate stream over the whole file; gzip adds its header (bits+16)
            self._deflate = zlib.compressobj(level, zlib.DEFLATED, bits + 16 * (kind == "GZIP"))

    def write(self, record: bytes | str) -> None:
        """Appends one record."""
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")
        if not isinstance(record, (bytes, bytearray, memoryview, str)):
            raise TypeError(
                f"TFRecordWriter.write takes bytes (or str), got {type(record).__name__}"
            )
        data = frame(record.encode() if isinstance(record, str) else bytes(record))
        self._file.write(self._deflate.compress(data) if self._deflate else data)

    def flush(self) -> None:
        """Writes what is buffered out to the file (a zlib sync point when compressed)."""
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")
        if self._deflate is not None:
            self._file.write(self._deflate.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        """Finishes the file; further writes fail. Closing twice is harmless."""
        if self._file is None:
            return
        if self._deflate is not None:
            self._file.write(self._deflate.flush())
        self._file.close()
        self._file = None

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Inflater:
    """``read(n)`` over a deflate stream (zlib or gzip; concatenated gzip members too)."""

    def __init__(self, raw: Any, bits: int):
        self._raw, self._bits = raw, bits
        self._stream = zlib.decompressobj(bits)

    def read(self, n: int) -> bytes:
        while True:
            if self._stream.unconsumed_tail:
                data = self._stream.decompress(self._stream.unconsumed_tail, n)
            else:
                if self._stream.eof:
                    rest = self._stream.unused_data
                    if not rest:
                        return b""
                    self._stream = zlib.decompressobj(self._bits)
                    data = self._stream.decompress(rest, n)
                else:
                    chunk = self._raw.read(_CHUNK)
                    if not chunk:
                        return b""
                    data = self._stream.decompress(chunk, n)
            if data:
                return data

    def close(self) -> None:
        self._raw.close()


def open_stream(path: str, compression: str) -> Any:
    """``path`` opened for reading, decompressed (``""``, ``"ZLIB"`` or ``"GZIP"``)."""
    raw = _open(path, "rb")
    if compression == "GZIP":
        return _Inflater(raw, 16 + zlib.MAX_WBITS)
    if compression == "ZLIB":
        return _Inflater(raw, zlib.MAX_WBITS)
    if compression:
        raw.close()
        raise errors.InvalidArgumentError(None, None, f"unknown compression type {compression!r}")
    return raw


def _refill(buf: bytes, pos: int, need: int, read: Callable[[int], bytes]) -> bytes:
    """``buf[pos:]`` extended by reads until it holds ``need`` bytes or the stream ends."""
    parts, have = [buf[pos:]], len(buf) - pos
    while have < need:
        chunk = read(min(max(_CHUNK, need - have), _MAX_READ))
        if not chunk:
            break
        parts.append(chunk)
        have += len(chunk)
    return b"".join(parts)


def read_records(stream: Any, path: str) -> Iterator[bytes]:
    """The records of an opened (decompressed) TFRecord stream, checksums verified.

    Raises:
        DataLossError: a checksum does not match, or the last record is cut short.
    """
    buf, pos, base = b"", 0, 0  # base: the stream offset of buf[0]
    unpack_header, unpack_footer = _HEADER.unpack_from, _FOOTER.unpack_from
    try:
        while True:
            if len(buf) - pos < 12:
                buf, base, pos = _refill(buf, pos, 12, stream.read), base + pos, 0
                if not buf:
                    return
                if len(buf) < 12:
                    raise errors.DataLossError(None, None, f"truncated record at {base} in {path}")
            length, length_crc = unpack_header(buf, pos)
            if masked_crc32c(memoryview(buf)[pos : pos + 8]) != length_crc:
                raise errors.DataLossError(
                    None, None, f"corrupted record at {base + pos} in {path}"
                )
            end = pos + length + 16
            if end > len(buf):
                buf, base, pos = _refill(buf, pos, length + 16, stream.read), base + pos, 0
                end = length + 16
                if end > len(buf):
                    raise errors.DataLossError(None, None, f"truncated record at {base} in {path}")
            data = buf[pos + 12 : end - 4]
            if masked_crc32c(data) != unpack_footer(buf, end - 4)[0]:
                raise errors.DataLossError(
                    None, None, f"corrupted record at {base + pos} in {path}"
                )
            pos = end
            yield data
    except zlib.error as exc:
        raise errors.DataLossError(None, None, f"{path}: {exc}") from None


def tf_record_iterator(path: Any, options: Any = None) -> Iterator[bytes]:
    """The records of the TFRecord file ``path``, one ``bytes`` each, in order.

    Raises:
        NotFoundError: no such file (at once, as TF's).
        DataLossError: a corrupted or truncated record (when iteration reaches it).
    """
    path = path.decode() if isinstance(path, bytes) else str(path)
    stream = open_stream(path, TFRecordOptions.get_compression_type_string(options))
    return _closing(read_records(stream, path), stream)


def _closing(records: Iterator[bytes], stream: Any) -> Iterator[bytes]:
    try:
        yield from records
    finally:
        stream.close()
