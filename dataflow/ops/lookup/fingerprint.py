"""``tf.strings.to_hash_bucket_fast``: FarmHash's ``Fingerprint64`` of a string, modulo
a number of buckets, as TF's ``StringToHashBucketFast`` kernel computes it.

``Fingerprint64`` is ``farmhashna::Hash64`` (Geoff Pike's FarmHash, the function TF's
``tensorflow::Fingerprint64`` calls): strings of up to 16, 32 and 64 bytes are hashed by
three short mixes of their first and last words; longer ones are folded 64 bytes at a
time into 56 bytes of state (``v``, ``w``, ``x``, ``y``, ``z``), then the last 64 bytes
are mixed in. Words are little-endian; every product and sum wraps at 2**64 (``_M``).

Out-of-vocabulary ids of ``StaticVocabularyTable`` and ``index_table_from_*`` are
``vocab_size + Fingerprint64(key) % num_oov_buckets``, integer keys hashed by their
decimal text (TF's ``as_string``): the ``HashBucketFast`` op below takes string and
integer keys for that reason (TF composes ``AsString`` and ``StringToHashBucketFast``;
one op here, the same values). A string hash is a loop over bytes in Python, so the
kernel runs on the host, once per distinct key of a batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from ..host import to_host

_M = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _word(s: bytes, i: int) -> int:
    return int.from_bytes(s[i : i + 8], "little")


def _rot(v: int, shift: int) -> int:
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & _M


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _hash16(u: int, v: int, mul: int) -> int:
    a = _shift_mix(((u ^ v) * mul) & _M)
    b = _shift_mix(((v ^ a) * mul) & _M)
    return (b * mul) & _M


def _len0to16(s: bytes) -> int:
    n = len(s)
    if n >= 8:
        mul = _K2 + n * 2
        a = (_word(s, 0) + _K2) & _M
        b = _word(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M
        d = ((_rot(a, 25) + b) * mul) & _M
        return _hash16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        a = int.from_bytes(s[:4], "little")
        return _hash16((n + (a << 3)) & _M, int.from_bytes(s[n - 4 :], "little"), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
    return _K2


def _len17to32(s: bytes) -> int:
    n = len(s)
    mul = _K2 + n * 2
    a = (_word(s, 0) * _K1) & _M
    b = _word(s, 8)
    c = (_word(s, n - 8) * mul) & _M
    d = (_word(s, n - 16) * _K2) & _M
    return _hash16(
        (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M,
        (a + _rot((b + _K2) & _M, 18) + c) & _M,
        mul,
    )


def _len33to64(s: bytes) -> int:
    n = len(s)
    mul = _K2 + n * 2
    a = (_word(s, 0) * _K2) & _M
    b = _word(s, 8)
    c = (_word(s, n - 8) * mul) & _M
    d = (_word(s, n - 16) * _K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    z = _hash16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    e = (_word(s, 16) * mul) & _M
    f = _word(s, 24)
    g = ((y + _word(s, n - 32)) * mul) & _M
    h = ((z + _word(s, n - 24)) * mul) & _M
    return _hash16(
        (_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M,
        (e + _rot((f + a) & _M, 18) + g) & _M,
        mul,
    )


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    """FarmHash's ``WeakHashLen32WithSeeds`` of the 32 bytes at ``s[i:]``."""
    w, x, y, z = _word(s, i), _word(s, i + 8), _word(s, i + 16), _word(s, i + 24)
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def fingerprint64(s: bytes) -> int:
    """FarmHash ``Fingerprint64`` of ``s`` (an unsigned 64-bit integer)."""
    n = len(s)
    if n <= 16:
        return _len0to16(s)
    if n <= 32:
        return _len17to32(s)
    if n <= 64:
        return _len33to64(s)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M
    z = (_shift_mix((y * _K2 + 113) & _M) * _K2) & _M
    v0 = v1 = w0 = w1 = 0
    x = (x * _K2 + _word(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    i = 0
    while True:
        x = (_rot((x + y + v0 + _word(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v1 + _word(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w1
        y = (y + v0 + _word(s, i + 40)) & _M
        z = (_rot((z + w0) & _M, 33) * _K1) & _M
        v0, v1 = _weak32(s, i, (v1 * _K1) & _M, (x + w0) & _M)
        w0, w1 = _weak32(s, i + 32, (z + w1) & _M, (y + _word(s, i + 16)) & _M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    i = n - 64  # the last 64 bytes
    w0 = (w0 + ((n - 1) & 63)) & _M
    v0 = (v0 + w0) & _M
    w0 = (w0 + v0) & _M
    x = (_rot((x + y + v0 + _word(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v1 + _word(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w1 * 9) & _M
    y = (y + v0 * 9 + _word(s, i + 40)) & _M
    z = (_rot((z + w0) & _M, 33) * mul) & _M
    v0, v1 = _weak32(s, i, (v1 * mul) & _M, (x + w0) & _M)
    w0, w1 = _weak32(s, i + 32, (z + w1) & _M, (y + _word(s, i + 16)) & _M)
    z, x = x, z
    return _hash16(
        (_hash16(v0, w0, mul) + _shift_mix(y) * _K0 + z) & _M,
        (_hash16(v1, w1, mul) + x) & _M,
        mul,
    )


def hash_buckets(keys: Any, num_buckets: int) -> np.ndarray:
    """``Fingerprint64(key) % num_buckets`` for each key of a host array (strings as
    ``bytes``, integers by their decimal text), as an int64 array of the same shape.
    Each distinct key is hashed once (found with a dict: ``np.unique`` sorts object
    arrays by Python comparisons, ten times slower)."""
    keys = np.asarray(keys)
    flat = keys.reshape(-1).tolist()
    distinct = dict.fromkeys(flat)
    for key in distinct:
        text = key if isinstance(key, bytes) else str(key).encode()
        distinct[key] = fingerprint64(text) % num_buckets
    return np.fromiter(map(distinct.__getitem__, flat), np.int64, len(flat)).reshape(keys.shape)


def _hash_kernel(ctx: Any, attrs: dict) -> Any:
    num_buckets, xp = attrs["num_buckets"], ctx.xp
    return lambda keys: xp.asarray(hash_buckets(to_host(keys), num_buckets))


def _infer_hash(op: Operation) -> list:
    (keys,) = op.inputs
    if keys.dtype != dtypes.string and not keys.dtype.is_integer:
        raise TypeError(f"keys must be strings or integers, got {keys.dtype.name}")
    if op.attrs["num_buckets"] < 1:
        raise ValueError(f"num_buckets must be >= 1, got {op.attrs['num_buckets']}")
    return [(dtypes.int64, TensorShape(keys.shape))]


registry.register(
    registry.OpDef(
        "HashBucketFast",
        _infer_hash,
        _hash_kernel,
        registry.NOT_DIFFERENTIABLE,
        foldable=True,
        gpu_kernel=False,  # strings live on the host
    )
)


def hash_bucket_fast(keys: Any, num_buckets: int, name: str | None = None) -> Tensor:
    """``Fingerprint64(key) % num_buckets`` of string keys, or of integer keys' decimal
    text (TF's ``string_to_hash_bucket_fast(as_string(keys))``)."""
    return apply_op("HashBucketFast", [keys], {"num_buckets": int(num_buckets)}, name=name)


def string_to_hash_bucket_fast(input: Any, num_buckets: int, name: str | None = None) -> Tensor:
    """Hashes each string of ``input`` to one of ``num_buckets`` buckets (int64), with
    FarmHash's ``Fingerprint64`` (``tf.strings.to_hash_bucket_fast``)."""
    tensor = convert_to_tensor(input, dtype=dtypes.string)
    return hash_bucket_fast(tensor, num_buckets, name=name or "StringToHashBucketFast")


to_hash_bucket_fast = string_to_hash_bucket_fast  # its name in ``tf.strings``
