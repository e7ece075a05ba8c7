"""File sources of ``tf.data``: ``TextLineDataset``, ``TFRecordDataset`` and
``FixedLengthRecordDataset`` pipelines, and ``MatchingFiles`` (the sorted files matching
glob patterns, for ``Dataset.list_files``).

Files are opened with fsspec (any URL it knows), uncompressed, ``GZIP`` or ``ZLIB``.
A TFRecord file is a sequence of records: the data's length (uint64, little-endian),
that length's masked CRC32C, the data, and the data's masked CRC32C; ``io/tf_record.py``
reads the framing (shared with ``tf.python_io``); a mismatch is ``DataLossError``.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.tensor_shape import TensorShape
from ..io import tf_record
from .pipeline import Element, Pipeline


def _open(path: str, compression: str) -> Any:
    import fsspec  # on first use: it costs 0.03 s of ``import dataflow``

    raw = fsspec.open(path, "rb").open()
    if compression == "GZIP":
        return gzip.GzipFile(fileobj=raw)
    if compression == "ZLIB":
        return io.BytesIO(zlib.decompress(raw.read()))
    if compression:
        raise errors.InvalidArgumentError(None, None, f"unknown compression type {compression!r}")
    return raw


def _paths(filenames: np.ndarray) -> list[str]:
    return [
        f.decode() if isinstance(f, bytes) else str(f) for f in np.asarray(filenames).reshape(-1)
    ]


def _opened(path: str, compression: str) -> Any:
    try:
        return _open(path, compression)
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None


class TextLines(Pipeline):
    def __init__(self, filenames: np.ndarray, compression: str):
        self._paths, self._compression = _paths(filenames), compression

    def elements(self) -> Iterator[Element]:
        for path in self._paths:
            with _opened(path, self._compression) as f:
                for line in f:
                    yield (np.asarray(line.rstrip(b"\n").rstrip(b"\r"), dtype=object),)


class Records(Pipeline):
    """TFRecord files: per record, length (uint64), its masked CRC32C, data, the data's."""

    def __init__(self, filenames: np.ndarray, compression: str):
        self._paths, self._compression = _paths(filenames), compression

    def elements(self) -> Iterator[Element]:
        for path in self._paths:
            for record in tf_record.tf_record_iterator(path, self._compression):
                yield (np.asarray(record, dtype=object),)


class FixedLengthRecords(Pipeline):
    """Each file: ``header_bytes`` skipped, then records of exactly ``record_bytes``, then
    ``footer_bytes`` skipped (CIFAR-10's binary files, say). A body that is not a whole
    number of records is an ``InvalidArgumentError`` raised before the file's first
    record when the file's size is known (an uncompressed file), else a
    ``DataLossError`` at its end (TF1's classes for the two cases)."""

    _CHUNK = 1 << 20

    def __init__(
        self, filenames: np.ndarray, header: int, record: int, footer: int, compression: str
    ):
        for value, what in ((header, "header_bytes"), (footer, "footer_bytes")):
            if value < 0:
                raise errors.InvalidArgumentError(None, None, f"{what} must be >= 0, got {value}")
        if record <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"record_bytes must be greater than zero, got {record}"
            )
        self._paths, self._compression = _paths(filenames), compression
        self._header, self._record, self._footer = header, record, footer

    def _misfit(self, path: str, body: int) -> errors.OpError:
        kind = errors.DataLossError if self._compression else errors.InvalidArgumentError
        return kind(
            None,
            None,
            f"Excluding the header ({self._header} bytes) and footer ({self._footer} bytes), "
            f'input file "{path}" has body length {body} bytes, which is not an exact multiple of '
            f"the record length ({self._record} bytes).",
        )

    def elements(self) -> Iterator[Element]:
        header, record, footer = self._header, self._record, self._footer
        for path in self._paths:
            with _opened(path, self._compression) as f:
                if not self._compression:
                    size = f.seek(0, io.SEEK_END)
                    f.seek(0)
                    if size - header - footer < 0 or (size - header - footer) % record:
                        raise self._misfit(path, size - header - footer)
                skipped = len(f.read(header)) if header else 0
                pending, after_header = b"", 0
                while True:
                    chunk = f.read(self._CHUNK)
                    if not chunk:
                        break
                    pending += chunk
                    after_header += len(chunk)
                    # Keep back what may be the footer; hand out every whole record before.
                    whole = max(len(pending) - footer, 0) // record * record
                    for start in range(0, whole, record):
                        yield (np.asarray(pending[start : start + record], dtype=object),)
                    pending = pending[whole:]
                if skipped < header or len(pending) != footer:
                    raise self._misfit(path, skipped - header + after_header - footer)


def _infer_matching_files(op: Any) -> list:
    if op.inputs[0].dtype != dtypes.string:
        raise TypeError(f"the pattern must be a string tensor, got {op.inputs[0].dtype.name}")
    return [(dtypes.string, TensorShape([None]))]


def _matching_files_kernel(ctx: Any, attrs: dict) -> Any:
    import fsspec

    def matching_files(patterns: Any) -> np.ndarray:
        found: set[str] = set()
        for pattern in _paths(patterns):
            fs, path = fsspec.core.url_to_fs(pattern)
            protocol = pattern.split("://", 1)[0] + "://" if "://" in pattern else ""
            found.update(
                protocol + p if protocol and not p.startswith(protocol) else p
                for p in fs.glob(path)
            )
        names = sorted(found)  # TF's MatchingFiles sorts its result
        return np.array([n.encode() for n in names], dtype=object).reshape(len(names))

    return matching_files


registry.register(
    registry.OpDef(
        "MatchingFiles",
        _infer_matching_files,
        _matching_files_kernel,
        registry.NOT_DIFFERENTIABLE,
        gpu_kernel=False,
    )
)
