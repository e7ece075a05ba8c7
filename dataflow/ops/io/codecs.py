"""Byte codecs of ``tf.io``: ``encode_base64``/``decode_base64`` (web-safe alphabet),
``decode_compressed`` (ZLIB, GZIP), ``serialize_tensor``/``parse_tensor`` (a
``TensorProto`` in a string), and ``write_file``.

All run on the host over numpy object arrays of ``bytes`` (strings have no device
form); none is differentiable. Base64 is RFC 4648's URL-safe alphabet (``-`` and ``_``),
unpadded unless ``pad``; decoding accepts either. ``ParseTensor`` checks the proto's
dtype against ``out_type`` (``InvalidArgumentError`` otherwise), as TF1 does.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import zlib
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op, apply_op_n
from ..strings.string_ops import host_strings, map_strings

NOT_DIFF = registry.NOT_DIFFERENTIABLE


def _string_in(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.string:
        raise TypeError(f"{op.type}: input must be a string tensor, got {op.inputs[0].dtype.name}")
    return [(dtypes.string, op.inputs[0].shape)]


def _bytes_kernel(convert: Any) -> Any:
    """A kernel factory applying ``convert(attrs)`` to each string."""

    def factory(ctx: Any, attrs: dict) -> Any:
        fn = convert(attrs)
        return lambda value: map_strings(fn, host_strings(value))

    return factory


def _encode(attrs: dict) -> Any:
    pad = attrs["pad"]
    return lambda s: (
        base64.urlsafe_b64encode(s) if pad else base64.urlsafe_b64encode(s).rstrip(b"=")
    )


def _decode(attrs: dict) -> Any:
    def decode(s: bytes) -> bytes:
        body = s.rstrip(b"=")
        try:
            return base64.b64decode(body + b"=" * (-len(body) % 4), altchars=b"-_", validate=True)
        except (binascii.Error, ValueError):
            raise errors.InvalidArgumentError(
                None, None, f"Invalid character found in base64: {s[:20]!r}"
            ) from None

    return decode


def _decompress(attrs: dict) -> Any:
    kind = attrs["compression_type"]

    def decompress(s: bytes) -> bytes:
        try:
            if kind == "ZLIB":
                return zlib.decompress(s)
            if kind == "GZIP":
                return gzip.decompress(s)
        except (zlib.error, OSError, EOFError) as exc:
            raise errors.DataLossError(None, None, f"{kind} stream is corrupt: {exc}") from None
        return s

    return decompress


for _type, _convert in (
    ("EncodeBase64", _encode),
    ("DecodeBase64", _decode),
    ("DecodeCompressed", _decompress),
):
    registry.register(
        registry.OpDef(_type, _string_in, _bytes_kernel(_convert), NOT_DIFF, gpu_kernel=False)
    )


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> Tensor:
    """Each string in web-safe base64 (``-`` and ``_``; ``=`` padding only with
    ``pad``): ``tf.io.encode_base64``."""
    x = convert_to_tensor(input, dtype=dtypes.string, name="input")
    return apply_op("EncodeBase64", [x], {"pad": bool(pad)}, name=name)


def decode_base64(input: Any, name: str | None = None) -> Tensor:
    """Each web-safe base64 string decoded, padded or not (``tf.io.decode_base64``).

    Raises:
        InvalidArgumentError: (when the step runs) a character outside the alphabet.
    """
    x = convert_to_tensor(input, dtype=dtypes.string, name="input")
    return apply_op("DecodeBase64", [x], name=name)


def decode_compressed(bytes: Any, compression_type: str = "", name: str | None = None) -> Tensor:
    """Each string decompressed (``compression_type`` ``""``, ``"ZLIB"`` or ``"GZIP"``):
    ``tf.io.decode_compressed``.

    Raises:
        ValueError: another compression type.
        DataLossError: (when the step runs) a corrupt stream.
    """
    if compression_type not in ("", "ZLIB", "GZIP"):
        raise ValueError(f"Unsupported compression type: {compression_type!r}")
    x = convert_to_tensor(bytes, dtype=dtypes.string, name="bytes")
    return apply_op("DecodeCompressed", [x], {"compression_type": compression_type}, name=name)


# --- TensorProto in a string -------------------------------------------------------------
def _tensor_util() -> Any:
    from tensorboard.util import tensor_util  # the TensorProto codec, loaded on first use

    return tensor_util


def _serialize_kernel(ctx: Any, attrs: dict) -> Any:
    def serialize(value: Any) -> Any:
        host = host_strings(value) if attrs["T"] == dtypes.string else np.asarray(value)
        proto = _tensor_util().make_tensor_proto(host, dtype=attrs["T"].as_numpy_dtype)
        return np.array(proto.SerializeToString(), dtype=object)

    return serialize


def _parse_kernel(ctx: Any, attrs: dict) -> Any:
    xp, out_type = ctx.xp, attrs["out_type"]

    def parse(serialized: Any) -> Any:
        from tensorboard.compat.proto import tensor_pb2

        proto = tensor_pb2.TensorProto()
        try:
            proto.ParseFromString(host_strings(serialized).reshape(()).item())
        except Exception:
            raise errors.InvalidArgumentError(
                None, None, "Could not parse `serialized` as TensorProto"
            ) from None
        value = _tensor_util().make_ndarray(proto)
        found = dtypes.as_dtype(value.dtype) if value.dtype != object else dtypes.string
        if found != out_type:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Type mismatch between parsed tensor ({found.name}) and dtype ({out_type.name})",
            )
        return value if out_type == dtypes.string else xp.asarray(value)

    return parse


registry.register(
    registry.OpDef(
        "SerializeTensor",
        lambda op: [(dtypes.string, TensorShape([]))],
        _serialize_kernel,
        NOT_DIFF,
        gpu_kernel=False,
    )
)


def _infer_parse(op: Operation) -> list:
    if op.inputs[0].shape.rank not in (None, 0):
        raise ValueError(f"ParseTensor: serialized must be a scalar, got {op.inputs[0].shape}")
    return [(op.attrs["out_type"], TensorShape(None))]


registry.register(
    registry.OpDef("ParseTensor", _infer_parse, _parse_kernel, NOT_DIFF, gpu_kernel=False)
)


def serialize_tensor(tensor: Any, name: str | None = None) -> Tensor:
    """``tensor`` as a serialized ``TensorProto`` (a scalar string):
    ``tf.io.serialize_tensor``."""
    x = convert_to_tensor(tensor, name="tensor")
    return apply_op("SerializeTensor", [x], {"T": x.dtype}, name=name)


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> Tensor:
    """The tensor a serialized ``TensorProto`` holds (``tf.io.parse_tensor``); its shape
    is known only when the step runs.

    Raises:
        InvalidArgumentError: (when the step runs) not a ``TensorProto``, or of another
            dtype than ``out_type``.
    """
    s = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
    return apply_op("ParseTensor", [s], {"out_type": dtypes.as_dtype(out_type)}, name=name)


# --- write_file ----------------------------------------------------------------------------
def _infer_write(op: Operation) -> list:
    for t, what in zip(op.inputs, ("filename", "contents"), strict=True):
        if t.dtype != dtypes.string or t.shape.rank not in (None, 0):
            raise ValueError(f"WriteFile: {what} must be a scalar string, got {t.shape} {t.dtype}")
    return []


def _write_kernel(ctx: Any, attrs: dict) -> Any:
    def write(filename: Any, contents: Any) -> Any:
        import os

        path = host_strings(filename).reshape(()).item().decode()
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(path, "wb") as f:
            f.write(host_strings(contents).reshape(()).item())

    return write


registry.register(
    registry.OpDef(
        "WriteFile", _infer_write, _write_kernel, NOT_DIFF, stateful=True, gpu_kernel=False
    )
)


def write_file(filename: Any, contents: Any, name: str | None = None) -> Operation:
    """An op writing the string ``contents`` to ``filename`` (folders made as needed)
    when run: ``tf.io.write_file``."""
    f = convert_to_tensor(filename, dtype=dtypes.string, name="filename")
    c = convert_to_tensor(contents, dtype=dtypes.string, name="contents")
    return apply_op_n("WriteFile", [f, c], name=name)


def matching_files(pattern: Any, name: str | None = None) -> Tensor:
    """The sorted file names matching the glob ``pattern`` (a string or a vector of
    them), as a string vector (``tf.io.matching_files``; the ``MatchingFiles`` op of
    ``ops/data/files.py``).

    Raises:
        NotFoundError: (when the step runs) nothing matches.
    """
    p = convert_to_tensor(pattern, dtype=dtypes.string, name="pattern")
    return apply_op("MatchingFiles", [p], name=name)
