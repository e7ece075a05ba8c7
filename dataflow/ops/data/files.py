"""File sources of ``tf.data``: ``TextLineDataset`` and ``TFRecordDataset`` pipelines, and
``MatchingFiles`` (the sorted files matching glob patterns, for ``Dataset.list_files``).

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
