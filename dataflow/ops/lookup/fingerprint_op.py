"""``tf.fingerprint``: TF's ``Fingerprint`` op, FarmHash's ``Fingerprint64`` of each row
of a tensor, as 8 little-endian bytes per row (uint8 ``[N, 8]``).

A row of a numeric tensor is hashed as its little-endian bytes (all the elements after
the first dimension, in row-major order). A row of strings is hashed in two steps, as
TF's kernel does: each string's ``Fingerprint64`` becomes 8 bytes, and a row holding one
string is those 8 bytes; a longer row is the ``Fingerprint64`` of its strings' 8-byte
fingerprints concatenated. The hash is a Python loop over bytes
(``fingerprint.fingerprint64``), so the kernel runs on the host, once per row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from ..host import to_host
from .fingerprint import fingerprint64


def _as_bytes(value: Any) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def fingerprint_rows(data: np.ndarray) -> np.ndarray:
    """The ``Fingerprint`` op's value for a host array of rank >= 1 (uint8 ``[N, 8]``)."""
    rows = data.reshape(data.shape[0], -1)
    if data.dtype.kind in "OSU":
        per_string = np.array(
            [fingerprint64(_as_bytes(s)) for s in rows.reshape(-1).tolist()], dtype="<u8"
        ).reshape(rows.shape)
        if rows.shape[1] == 1:
            return per_string.view(np.uint8).reshape(rows.shape[0], 8)
        hashes = [fingerprint64(row.tobytes()) for row in per_string]
    else:
        little = rows.astype(rows.dtype.newbyteorder("<"), copy=False)
        hashes = [fingerprint64(np.ascontiguousarray(row).tobytes()) for row in little]
    return np.array(hashes, dtype="<u8").reshape(-1).view(np.uint8).reshape(rows.shape[0], 8)


def _infer_fingerprint(op: Operation) -> list:
    (data,) = op.inputs
    if data.shape.ndims is not None and data.shape.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {data.shape.ndims}")
    if op.attrs["method"] != "farmhash64":
        raise ValueError(f"Unsupported fingerprint method: {op.attrs['method']}")
    rows = data.shape[0] if data.shape.ndims is not None else None
    return [(dtypes.uint8, TensorShape([rows, 8]))]


def _fingerprint_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda data: xp.asarray(fingerprint_rows(np.asarray(to_host(data))))


registry.register(
    registry.OpDef(
        "Fingerprint",
        _infer_fingerprint,
        _fingerprint_kernel,
        registry.NOT_DIFFERENTIABLE,
        foldable=True,
        gpu_kernel=False,
    )
)


def fingerprint(data: Any, method: str = "farmhash64", name: str | None = None) -> Tensor:
    """FarmHash ``Fingerprint64`` of each row of ``data`` (rank >= 1, any dtype), as a
    uint8 ``[N, 8]`` tensor of little-endian bytes (``tf.fingerprint``). ``method``
    must be ``"farmhash64"``, the only one TF1 has."""
    tensor = convert_to_tensor(data)
    if isinstance(method, bytes):
        method = method.decode()
    return apply_op("Fingerprint", [tensor], {"method": str(method)}, name=name)
