"""File datasets: ``TextLineDataset`` (one string per line, without its newline),
``TFRecordDataset`` (one string per record, checksums verified) and
``FixedLengthRecordDataset`` (one string per fixed-size record). Files are opened with
fsspec (any URL it knows); ``compression_type`` is ``""``, ``"GZIP"`` or ``"ZLIB"``."""

from __future__ import annotations

from typing import Any

from ..framework import dtypes
from ..framework.graph import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops.data import datasets as dataset_ops
from .dataset import Dataset
from .structure import Spec

_COMPRESSIONS = ("", "GZIP", "ZLIB")


def _file_dataset(
    op_type: str, filenames: Any, compression_type: str | None, sizes: tuple = ()
) -> Any:
    """The dataset op reading ``filenames``; ``sizes`` are int64 inputs between the
    file names and the compression (the fixed-length reader's byte counts)."""
    compression = compression_type or ""
    if compression not in _COMPRESSIONS:
        raise ValueError(f"compression_type must be one of {_COMPRESSIONS}, got {compression!r}")
    names = convert_to_tensor(filenames, dtype=dtypes.string)
    if names.shape.rank not in (None, 0, 1):
        raise ValueError(f"filenames must be a string scalar or vector, got shape {names.shape}")
    kind = convert_to_tensor(compression, dtype=dtypes.string)
    return dataset_ops.dataset_op(op_type, [names, *sizes, kind])


class TextLineDataset(Dataset):
    """The lines of one or more text files, in order, as scalar strings."""

    def __init__(
        self, filenames: Any, compression_type: str | None = None, buffer_size: Any = None
    ):
        variant = _file_dataset("TextLineDataset", filenames, compression_type)
        super().__init__(variant, Spec(dtypes.string, TensorShape([])))


class TFRecordDataset(Dataset):
    """The records of one or more TFRecord files, in order, as scalar strings.

    A corrupted record raises ``DataLossError`` from ``get_next``."""

    def __init__(
        self,
        filenames: Any,
        compression_type: str | None = None,
        buffer_size: Any = None,
        num_parallel_reads: Any = None,
    ):
        variant = _file_dataset("TFRecordDataset", filenames, compression_type)
        super().__init__(variant, Spec(dtypes.string, TensorShape([])))


class FixedLengthRecordDataset(Dataset):
    """The records of one or more files of fixed-length records, as scalar strings: in
    each file, ``header_bytes`` are skipped, then every ``record_bytes`` bytes are one
    record, up to the last ``footer_bytes`` (skipped). Decode a record with
    ``tf.decode_raw`` (CIFAR-10's binary files are read this way).

    A file whose body is not a whole number of records raises ``InvalidArgumentError``
    from ``get_next``.
    """

    def __init__(
        self,
        filenames: Any,
        record_bytes: Any,
        header_bytes: Any = None,
        footer_bytes: Any = None,
        buffer_size: Any = None,
        compression_type: str | None = None,
    ):
        sizes = []
        for value, name in (
            (header_bytes, "header_bytes"),
            (record_bytes, "record_bytes"),
            (footer_bytes, "footer_bytes"),
        ):
            size = convert_to_tensor(0 if value is None else value, dtype=dtypes.int64, name=name)
            if size.shape.rank not in (None, 0):
                raise ValueError(f"{name} must be a scalar, got shape {size.shape}")
            sizes.append(size)
        variant = _file_dataset(
            "FixedLengthRecordDataset", filenames, compression_type, tuple(sizes)
        )
        super().__init__(variant, Spec(dtypes.string, TensorShape([])))
